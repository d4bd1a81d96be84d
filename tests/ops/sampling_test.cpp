// CUDA vs CPU sampling: the same (logits, parameters, seed, offset) give the same token.
// The GPU sums probabilities in float in another order than the host's doubles, so a draw
// that lands within rounding of a boundary (u or top_p within 1e-5) may differ; such a
// mismatch is accepted only when the reference gives the GPU's token for some u' within 1e-5
// of u (at top_p or top_p +- 1e-5).
#include "ops/sampling.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "op_test_util.h"

namespace hadron::test {
namespace {

// Per-row sampling parameters as the backend's sample() takes them.
struct SamplingRows {
  std::vector<float> temperature, top_p, min_p;
  std::vector<int32_t> top_k;
  std::vector<int64_t> seeds, offsets;
};

class SamplingTest : public OpTest {
 protected:
  // The GPU's token for each row of logits [rows.temperature.size(), vocab] (uploaded as F32,
  // so unchanged; upload takes them by non-const reference).
  std::vector<int32_t> sample_on_gpu(std::vector<float>& logits, int64_t vocab,
                                     SamplingRows& rows) {
    const auto n_rows = static_cast<int64_t>(rows.temperature.size());
    DeviceTensor logits_gpu = upload(logits, {n_rows, vocab}, DType::F32);
    DeviceTensor t_gpu = upload(rows.temperature, {n_rows}, DType::F32),
                 p_gpu = upload(rows.top_p, {n_rows}, DType::F32),
                 m_gpu = upload(rows.min_p, {n_rows}, DType::F32);
    DeviceTensor k_gpu = upload_i32(rows.top_k, {n_rows}), s_gpu = upload_i64(rows.seeds, {n_rows}),
                 o_gpu = upload_i64(rows.offsets, {n_rows});
    DeviceTensor tokens = upload_i32(std::vector<int32_t>(n_rows, -1), {n_rows});
    gpu_->sample(
        logits_gpu.tensor,
        {t_gpu.tensor, k_gpu.tensor, p_gpu.tensor, m_gpu.tensor, s_gpu.tensor, o_gpu.tensor},
        tokens.tensor);
    return download_i32(tokens.tensor);
  }
};

// Whether the reference picks `token` for some draw in [u - du, u + du]. The reference walks
// the kept tokens in index order, so its pick never decreases as the draw grows: bisect the
// interval for a draw that lands on `token`. Checking only the two ends is not enough, since
// 1e-5 of the mass can span more than one token of a full 151,936-token row.
bool reachable_within(std::span<const float> row, const SampleRowParams& params, float u, float du,
                      int32_t token) {
  float lo = std::max(u - du, 0.0f), hi = std::min(u + du, 0.9999999f);
  const int32_t first = sample_row_reference(row, params, lo),
                last = sample_row_reference(row, params, hi);
  if (first == token || last == token) return true;
  if (first > token || last < token) return false;
  while (true) {
    const float mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) return false;  // no float draw between two neighbours picks it
    const int32_t picked = sample_row_reference(row, params, mid);
    if (picked == token) return true;
    (picked < token ? lo : hi) = mid;
  }
}

TEST_F(SamplingTest, MatchesReference) {
  constexpr int64_t kVocab = 151936;
  const std::vector<SampleRowParams> settings = {
      {0.0f, 0, 1.0f, 0.0f},  {1.0f, 1, 1.0f, 0.0f},     {1.0f, 0, 1.0f, 0.0f},
      {0.7f, 50, 1.0f, 0.0f}, {1.3f, 0, 0.9f, 0.0f},     {0.8f, 20, 0.5f, 0.0f},
      {1.0f, 0, 1.0f, 0.05f}, {0.6f, 100, 0.95f, 0.02f}, {2.0f, 5000, 0.99f, 0.0f}};
  for (const int64_t n_rows : {int64_t{1}, int64_t{64}}) {
    SCOPED_TRACE(testing::Message() << "rows " << n_rows);
    std::vector<float> logits = random_floats(n_rows * kVocab, 3.0f);
    SamplingRows rows;
    std::vector<SampleRowParams> row_params(n_rows);
    for (int64_t r = 0; r < n_rows; ++r) {
      row_params[r] = settings[(r + n_rows) % settings.size()];
      rows.temperature.push_back(row_params[r].temperature);
      rows.top_k.push_back(row_params[r].top_k);
      rows.top_p.push_back(row_params[r].top_p);
      rows.min_p.push_back(row_params[r].min_p);
      rows.seeds.push_back(static_cast<int64_t>(rng_()));
      rows.offsets.push_back(r % 7);
    }
    const std::vector<int32_t> got = sample_on_gpu(logits, kVocab, rows);
    for (int64_t r = 0; r < n_rows; ++r) {
      const std::span<const float> row(logits.data() + r * kVocab, kVocab);
      const SampleRowParams& params = row_params[r];
      const float u = sample_uniform(rows.seeds[r], rows.offsets[r]);
      const int32_t expected = sample_row_reference(row, params, u);
      if (got[r] == expected) continue;
      bool at_boundary = false;
      for (const float dp : {0.0f, -1e-5f, 1e-5f}) {
        SampleRowParams nudged = params;
        if (params.top_p < 1) nudged.top_p += dp;
        at_boundary = at_boundary || reachable_within(row, nudged, u, 1e-5f, got[r]);
      }
      EXPECT_TRUE(at_boundary) << "row " << r << " (temperature " << params.temperature
                               << ", top_k " << params.top_k << ", top_p " << params.top_p
                               << ", min_p " << params.min_p << ", seed " << rows.seeds[r]
                               << ", offset " << rows.offsets[r] << ", u " << u << "): GPU "
                               << got[r] << ", reference " << expected;
    }
  }
}

// Greedy rows take the first index of the largest logit, as the reference does, for vocabularies
// that are not multiples of 4 (so rows after the first start misaligned), with the largest
// value repeated (the first copy wins), and a row of -inf (index 0).
TEST_F(SamplingTest, GreedyTakesTheFirstLargest) {
  for (const int64_t vocab : {int64_t{1}, int64_t{3}, int64_t{7}, int64_t{1001}, int64_t{4099},
                              int64_t{151936}, int64_t{151937}}) {
    SCOPED_TRACE(testing::Message() << "vocab " << vocab);
    constexpr int64_t kRows = 6;
    std::vector<float> logits = random_floats(kRows * vocab, 3.0f);
    for (int64_t r = 0; r < kRows; ++r) {
      float* row = logits.data() + r * vocab;
      if (r == kRows - 1) {
        std::fill(row, row + vocab, -INFINITY);
        continue;
      }
      const int64_t first = (r * 7919 + 13) % vocab;  // three copies of a new maximum from here
      for (const int64_t at : {first, (first + vocab / 2) % vocab, vocab - 1})
        row[at] = 100.0f + static_cast<float>(r);
    }
    SamplingRows greedy{std::vector<float>(kRows, 0.0f), std::vector<float>(kRows, 1.0f),
                        std::vector<float>(kRows, 0.0f), std::vector<int32_t>(kRows, 0),
                        std::vector<int64_t>(kRows, 1),  std::vector<int64_t>(kRows, 0)};
    const std::vector<int32_t> got = sample_on_gpu(logits, vocab, greedy);
    for (int64_t r = 0; r < kRows; ++r) {
      const std::span<const float> row(logits.data() + r * vocab, vocab);
      EXPECT_EQ(got[r], sample_row_reference(row, {0.0f, 0, 1.0f, 0.0f}, 0.5f)) << "row " << r;
    }
    EXPECT_EQ(got[kRows - 1], 0);
  }
}

}  // namespace
}  // namespace hadron::test
