// Flags shared by every command that loads a model (vLLM spellings where they exist).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "engine/loaded_model.h"

namespace hadron::app {

// The model folder shipped with hadron, used when --model is not given.
std::string default_model_dir();

// Adds --model, --load-format, --device, --max-model-len, --max-num-seqs,
// --max-num-batched-tokens, --block-size, --gpu-memory-utilization, --kv-cache-memory-bytes,
// --seed, --hf-overrides to `command`.
void add_engine_flags(CLI::App& command, EngineOptions& options, std::string& load_format);

// Adds --kv-offloading-size (GiB, vLLM's), --kv-offloading-backend (native),
// --kv-offload-disk-dir and --kv-offload-disk-gb; checked once the command line is parsed.
// HADRON_KV_OFFLOAD_IO=posix makes the disk tier use pread/pwrite instead of io_uring.
void add_kv_offload_flags(CLI::App& command, OffloadOptions& offload);

// Adds --speculative-config (vLLM's JSON object, engine/spec_config.h) to `command`, which
// sets options.speculative (generate, serve and bench).
void add_speculative_flag(CLI::App& command, EngineOptions& options);

// Adds --hf-overrides (a JSON object merged into config.json, loader/hf_config.h) to `command`;
// for commands that read a config without the other engine flags.
void add_hf_overrides_flag(CLI::App& command, std::string& hf_overrides);

// Checks the values and applies --load-format; throws InputError on bad values.
void finish_engine_options(EngineOptions& options, const std::string& load_format);

// Loads the model onto the backend of --device (backends/backend_factory.h).
std::unique_ptr<LoadedModel> load_model(const EngineOptions& options);

// Parses whitespace-separated token ids; InputError naming `what` on anything else.
std::vector<int32_t> parse_token_ids(const std::string& text, const std::string& what);

}  // namespace hadron::app
