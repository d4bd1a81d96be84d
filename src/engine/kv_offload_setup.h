// Making the KV offload tiers (kv/offload_tiers.h) for a loaded model.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/loaded_model.h"

namespace hadron {

// A fingerprint of what a KV block's bytes depend on besides its tokens: the model (its
// config, weights files or dummy seed, overrides), the backend and KV dtype, the block size
// and every layer's cache layout. Disk records of another fingerprint are never served.
uint64_t kv_offload_fingerprint(const EngineOptions& options, const Backend& backend,
                                const KvCache& kv, const ModelConfig& config);

// The tiers options.offload asks for, or null: none asked for, no prefix caching, tensor
// parallel (other ranks' KV pools are not copied yet), or a model
// with linear-attention state (per-sequence state does not live in blocks; offloading its
// snapshots is not implemented, so such models keep their prefix cache on the device).
std::unique_ptr<KvOffload> make_kv_offload(const EngineOptions& options, Backend& backend,
                                           const KvCache& kv, const ModelConfig& config,
                                           bool prefix_caching, bool linear_state);

}  // namespace hadron
