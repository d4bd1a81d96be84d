// What every endpoint handler shares: the served model, the engine, limits and metrics.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/template.h"
#include "engine/async_engine.h"
#include "grammar/grammar_cache.h"
#include "server/metrics.h"
#include "server/output_parser.h"
#include "server/request_fields.h"
#include "server/sampling_request.h"
#include "tokenizer/tokenizer.h"

namespace hadron::server {

struct ServedModel {
  std::string name;                      // what /v1/models lists and requests must name
  std::string root;                      // the model folder
  const Tokenizer* tokenizer = nullptr;  // null: token-id prompts only
  std::optional<chat::ChatTemplate> chat_template;
  bool trust_request_chat_template = false;  // render a request's own `chat_template`
  std::string bos_token, eos_token;          // for the template
  OutputFormat output_format;                // reasoning and tool-call syntax of its outputs
  GenerationDefaults defaults;               // the model folder's generation_config.json
  int64_t max_model_len = 0;
  int32_t vocab_size = 0;
};

struct ServerContext {
  ServedModel model;
  RequestLimits limits;
  Metrics metrics;
  std::string api_key;  // empty: no authentication
  // Set once the model is loaded; endpoints answer 503 before.
  std::atomic<AsyncEngine*> engine{nullptr};
  std::atomic<bool> draining{false};  // SIGTERM: no new requests
  // Compiled structured-output grammars over the tokenizer's vocabulary; set with `engine`
  // (null without a tokenizer).
  std::shared_ptr<grammar::GrammarCache> grammars;
};

}  // namespace hadron::server
