// CUDA vs CPU: resolve_token_ids (placeholders -r - 1 filled from the previous step's sampled
// tokens; rows past the sampled ones give 0; other ids stay), and the async copy + event pair
// the runner reads sampled tokens back with.
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

TEST_F(TokenIdsTest, AsyncCopyIsCompleteAfterItsEvent) {
  const int64_t n = 1 << 20;
  std::vector<int32_t> values = random_ints(n, 0, 1 << 30);
  DeviceTensor device = upload_i32(values, {n});
  Buffer pinned = gpu_->allocate_host(n * sizeof(int32_t));
  std::fill_n(static_cast<int32_t*>(pinned.data()), n, -1);
  gpu_->copy_async(device.tensor, pinned.view(DType::I32, {n}));
  gpu_->record_event()->wait();
  const auto* got = static_cast<const int32_t*>(pinned.data());
  EXPECT_EQ(std::vector<int32_t>(got, got + n), values);
}

}  // namespace
}  // namespace hadron::test
