// CudaBackend's asynchronous side: pinned host memory, copies that do not wait, events on the
// stream, and CUDA graphs captured from the stream.
#include "backends/cuda/cuda_backend_impl.h"

namespace hadron::cuda {
namespace {

class CudaEvent final : public DeviceEvent {
 public:
  explicit CudaEvent(cudaStream_t stream) {
    CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventRecord(event_, stream));
  }
  ~CudaEvent() override { cudaEventDestroy(event_); }
  void wait() override { CUDA_CHECK(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

class CudaGraph final : public DeviceGraph {
 public:
  CudaGraph(cudaGraphExec_t exec, cudaStream_t stream) : exec_(exec), stream_(stream) {}
  ~CudaGraph() override { cudaGraphExecDestroy(exec_); }
  void replay() override { CUDA_CHECK(cudaGraphLaunch(exec_, stream_)); }

 private:
  cudaGraphExec_t exec_;
  cudaStream_t stream_;
};

}  // namespace

std::optional<size_t> CudaBackend::free_memory() {
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

Buffer CudaBackend::allocate_host(size_t bytes) {
  void* data = nullptr;
  if (bytes > 0) CUDA_CHECK(cudaMallocHost(&data, bytes));
  return Buffer(data, bytes, Device::CPU, [](void* p) { cudaFreeHost(p); });
}

void CudaBackend::copy_async(const Tensor& src, const Tensor& dst) {
  HADRON_CHECK(src.dtype == dst.dtype && src.numel() == dst.numel() && src.is_contiguous() &&
                   dst.is_contiguous(),
               "copy_async {} -> {}", src.describe(), dst.describe());
  if (src.nbytes() > 0)
    CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, src.nbytes(), cudaMemcpyDefault, stream_));
}

std::unique_ptr<DeviceEvent> CudaBackend::record_event() {
  return std::make_unique<CudaEvent>(stream_);
}

std::unique_ptr<DeviceGraph> CudaBackend::capture_graph(const CaptureFn& work) {
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  try {
    work();
  } catch (...) {
    cudaStreamEndCapture(stream_, &graph);  // leave the stream usable
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t status = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_CHECK(status);
  return std::make_unique<CudaGraph>(exec, stream_);
}

void CudaBackend::resolve_token_ids(const Tensor& ids, const Tensor& sampled) {
  check_tensor(ids, DType::I32, "resolve_token_ids ids");
  check_tensor(sampled, DType::I32, "resolve_token_ids sampled");
  launch_resolve_token_ids(ids.ptr<int32_t>(), sampled.ptr<int32_t>(), ids.numel(), sampled.numel(),
                           stream_);
}

}  // namespace hadron::cuda
