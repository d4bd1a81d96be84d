#include "engine/kv_fp8_check.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "engine/generator.h"

namespace hadron {
namespace {

std::vector<int32_t> probe_tokens(int64_t n, int64_t vocab, uint64_t seed) {
  std::vector<int32_t> tokens(n);
  uint64_t state = seed;
  for (int32_t& id : tokens) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    id = static_cast<int32_t>(state % static_cast<uint64_t>(vocab));
  }
  return tokens;
}

// Adds KL(softmax(p) || softmax(q)) and top-1 agreement of each row of two [rows, vocab] logit
// sets to `out`.
void accumulate(const std::vector<float>& p, const std::vector<float>& q, int64_t vocab,
                KvCacheAgreement& out) {
  for (size_t row = 0; row * vocab < p.size(); ++row) {
    const float* a = p.data() + row * vocab;
    const float* b = q.data() + row * vocab;
    const double a_max = *std::max_element(a, a + vocab), b_max = *std::max_element(b, b + vocab);
    double a_sum = 0, b_sum = 0;
    for (int64_t i = 0; i < vocab; ++i)
      a_sum += std::exp(a[i] - a_max), b_sum += std::exp(b[i] - b_max);
    double kl = 0;
    for (int64_t i = 0; i < vocab; ++i) {
      const double log_a = a[i] - a_max - std::log(a_sum), log_b = b[i] - b_max - std::log(b_sum);
      kl += std::exp(log_a) * (log_a - log_b);
    }
    out.mean_kl += kl;
    out.top1 += std::max_element(a, a + vocab) == a + (std::max_element(b, b + vocab) - b);
    ++out.positions;
  }
}

}  // namespace

std::optional<KvCacheAgreement> check_fp8_kv_cache(LoadedModel& model) {
  KvCache& pool = model.kv();
  if (pool.n_blocks() == 0 || pool.k_cache(0).dtype != DType::F8_E4M3 || pool.state_bytes() > 0)
    return std::nullopt;
  const int64_t vocab = model.config().vocab_size;
  const int64_t long_len = std::min<int64_t>(512, model.max_model_len());
  const int64_t capacity = pool.n_blocks() * pool.block_size();
  std::vector<std::vector<int32_t>> probes{probe_tokens(std::min<int64_t>(32, long_len), vocab, 1),
                                           probe_tokens(std::min(long_len, capacity), vocab, 2)};
  std::vector<std::vector<float>> fp8;
  for (const auto& tokens : probes) fp8.push_back(score(model, tokens));
  KvCache reference;
  reference.allocate(model.backend(), model.model().kv_layers(), pool.n_blocks(), pool.block_size(),
                     model.backend().activation_dtype());
  std::swap(pool, reference);  // the runner now reads the reference pool
  KvCacheAgreement agreement;
  for (size_t i = 0; i < probes.size(); ++i)
    accumulate(score(model, probes[i]), fp8[i], vocab, agreement);
  std::swap(pool, reference);
  agreement.mean_kl /= static_cast<double>(agreement.positions);
  agreement.top1 /= static_cast<double>(agreement.positions);
  return agreement;
}

}  // namespace hadron
