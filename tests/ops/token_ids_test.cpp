// EXPERIMENT (s30): CUDA vs CPU: resolve_token_ids (placeholders -r - 1 filled from the
// previous step's sampled tokens; rows past the sampled ones give 0; other ids stay).
#include "op_test_util.h"

namespace hadron::test {
namespace {

class TokenIdsTest : public OpTest {};

TEST_F(TokenIdsTest, ResolveTokenIdsMatchesTheReference) {
  for (const auto& [n_ids, n_sampled] : {std::pair{1, 1}, {7, 3}, {256, 256}, {1000, 37}}) {
    SCOPED_TRACE(testing::Message() << "ids " << n_ids << " sampled " << n_sampled);
    // Real ids, placeholders for every sampled row, and some past the sampled rows.
    std::vector<int32_t> ids = random_ints(n_ids, -n_sampled - 3, 151935);
    for (int64_t i = 0; i < n_ids; i += 3) ids[i] = -static_cast<int32_t>(i % n_sampled) - 1;
    std::vector<int32_t> sampled = random_ints(n_sampled, 0, 151935);
    DeviceTensor ids_gpu = upload_i32(ids, {n_ids});
    DeviceTensor sampled_gpu = upload_i32(sampled, {n_sampled});
    gpu_->resolve_token_ids(ids_gpu.tensor, sampled_gpu.tensor);
    std::vector<int32_t> expected = ids;
    cpu_->resolve_token_ids(host_view_i32(expected, {n_ids}), host_view_i32(sampled, {n_sampled}));
    EXPECT_EQ(download_i32(ids_gpu.tensor), expected);
    for (int64_t i = 0; i < n_ids; ++i) {
      const int32_t id = ids[i];
      const int32_t want = id >= 0 ? id : (-id - 1 < n_sampled ? sampled[-id - 1] : 0);
      ASSERT_EQ(expected[i], want) << "reference, id " << i;
    }
  }
}

}  // namespace
}  // namespace hadron::test
