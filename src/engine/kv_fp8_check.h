// The FP8 KV cache's accuracy check (issue 41): a built-in probe scored teacher-forced with
// the model's FP8 pool and with a pool of the same size in the activation dtype, compared by
// the next-token distributions.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/loaded_model.h"

namespace hadron {

struct KvCacheAgreement {
  double mean_kl = 0;  // mean over positions of KL(reference || fp8), nats
  double top1 = 0;     // fraction of positions whose argmax agrees
  int64_t positions = 0;
};

// The probe: pseudo-random token ids (seeded, so every start-up measures the same), one short
// prompt and one long-context probe of up to 512 tokens (within --max-model-len). nullopt when
// the pool is not FP8 or the model keeps linear-attention state (not swapped here).
std::optional<KvCacheAgreement> check_fp8_kv_cache(LoadedModel& model);

}  // namespace hadron
