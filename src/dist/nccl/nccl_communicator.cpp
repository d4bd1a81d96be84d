#include "dist/nccl/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace hadron {
namespace {

void check_nccl(ncclResult_t result, const char* call) {
  if (result != ncclSuccess)
    throw Error(fmt::format("{} failed: {} ({})", call, ncclGetErrorString(result),
                            ncclGetLastError(nullptr)));
}

void check_cuda(cudaError_t result, const char* call) {
  if (result != cudaSuccess)
    throw Error(fmt::format("{} failed: {}", call, cudaGetErrorString(result)));
}

ncclDataType_t nccl_dtype(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return ncclFloat32;
    case DType::F16:
      return ncclFloat16;
    case DType::BF16:
      return ncclBfloat16;
    case DType::I32:
      return ncclInt32;
    case DType::I64:
      return ncclInt64;
    case DType::U8:
    case DType::BOOL:
      return ncclUint8;
    case DType::I8:
      return ncclInt8;
    case DType::F8_E4M3:
    case DType::F8_E5M2:
    case DType::I16:
      break;
  }
  throw Error(fmt::format("NCCL collectives of {} are not supported", dtype_name(dtype)));
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(const NcclUniqueId& id, int rank, int world_size, int device, void* stream)
      : rank_(rank), world_size_(world_size), stream_(static_cast<cudaStream_t>(stream)) {
    disable_nvlink_multicast();
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    ncclUniqueId nccl_id;
    static_assert(sizeof nccl_id.internal == sizeof id.bytes);
    std::memcpy(nccl_id.internal, id.bytes.data(), id.bytes.size());
    check_nccl(ncclCommInitRank(&comm_, world_size, nccl_id, rank), "ncclCommInitRank");
    check_cuda(cudaMalloc(&barrier_word_, sizeof(float)), "cudaMalloc");
  }
  ~NcclCommunicator() override {
    cudaFree(barrier_word_);
    ncclCommDestroy(comm_);
  }
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }

  void all_reduce_sum(const Tensor& x) override {
    check(x, "all_reduce_sum");
    check_nccl(
        ncclAllReduce(x.data, x.data, x.numel(), nccl_dtype(x.dtype), ncclSum, comm_, stream_),
        "ncclAllReduce");
  }

  void all_gather(const Tensor& src, const Tensor& dst) override {
    check(src, "all_gather");
    check(dst, "all_gather");
    HADRON_CHECK(dst.dtype == src.dtype && dst.numel() == src.numel() * world_size_,
                 "all_gather {} into {}", src.describe(), dst.describe());
    check_nccl(
        ncclAllGather(src.data, dst.data, src.numel(), nccl_dtype(src.dtype), comm_, stream_),
        "ncclAllGather");
  }

  void reduce_scatter_sum(const Tensor& src, const Tensor& dst) override {
    check(src, "reduce_scatter_sum");
    check(dst, "reduce_scatter_sum");
    HADRON_CHECK(dst.dtype == src.dtype && src.numel() == dst.numel() * world_size_,
                 "reduce_scatter_sum {} into {}", src.describe(), dst.describe());
    check_nccl(ncclReduceScatter(src.data, dst.data, dst.numel(), nccl_dtype(src.dtype), ncclSum,
                                 comm_, stream_),
               "ncclReduceScatter");
  }

  void all_to_all(const Tensor& src, const Tensor& dst) override {
    check(src, "all_to_all");
    check(dst, "all_to_all");
    HADRON_CHECK(
        dst.dtype == src.dtype && dst.numel() == src.numel() && src.numel() % world_size_ == 0,
        "all_to_all {} into {}", src.describe(), dst.describe());
    const int64_t count = src.numel() / world_size_;
    const size_t part_bytes = src.nbytes() / world_size_;
    const ncclDataType_t dtype = nccl_dtype(src.dtype);
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < world_size_; ++peer) {
      check_nccl(ncclSend(static_cast<const char*>(src.data) + peer * part_bytes, count, dtype,
                          peer, comm_, stream_),
                 "ncclSend");
      check_nccl(ncclRecv(static_cast<char*>(dst.data) + peer * part_bytes, count, dtype, peer,
                          comm_, stream_),
                 "ncclRecv");
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  }

  void broadcast(const Tensor& x, int root) override {
    check(x, "broadcast");
    check_nccl(ncclBroadcast(x.data, x.data, x.numel(), nccl_dtype(x.dtype), root, comm_, stream_),
               "ncclBroadcast");
  }

  void barrier() override {
    check_nccl(ncclAllReduce(barrier_word_, barrier_word_, 1, ncclFloat32, ncclSum, comm_, stream_),
               "ncclAllReduce");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

 private:
  static void check(const Tensor& t, const char* what) {
    HADRON_CHECK(t.device == Device::CUDA && t.is_contiguous(),
                 "{}: NCCL needs contiguous device tensors, got {}", what, t.describe());
  }

  const int rank_, world_size_;
  cudaStream_t stream_;
  ncclComm_t comm_ = nullptr;
  void* barrier_word_ = nullptr;
};

}  // namespace

void disable_nvlink_multicast() { setenv("NCCL_NVLS_ENABLE", "0", 1); }

NcclUniqueId nccl_unique_id() {
  disable_nvlink_multicast();
  ncclUniqueId nccl_id;
  check_nccl(ncclGetUniqueId(&nccl_id), "ncclGetUniqueId");
  NcclUniqueId id;
  std::memcpy(id.bytes.data(), nccl_id.internal, id.bytes.size());
  return id;
}

std::unique_ptr<Communicator> make_nccl_communicator(const NcclUniqueId& id, int rank,
                                                     int world_size, int device, void* stream) {
  return std::make_unique<NcclCommunicator>(id, rank, world_size, device, stream);
}

}  // namespace hadron
