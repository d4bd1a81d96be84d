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

std::optional<DeviceMemory> CudaBackend::memory() {
  DeviceMemory memory;
  CUDA_CHECK(cudaMemGetInfo(&memory.free_bytes, &memory.total_bytes));
  return memory;
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

namespace {

// StepStaging's pointers, once check_begin_step / check_end_step passed; the counter on the GPU.
StepIo step_io(const StepStaging& s) {
  check_tensor(s.counter, DType::I32, "step counter");
  return {{s.images[0].data, s.images[1].data},
          {s.tokens[0].ptr<int32_t>(), s.tokens[1].ptr<int32_t>()},
          s.counter.ptr<int32_t>(),
          StepStaging::kHeaderBytes};
}

}  // namespace

void CudaBackend::begin_step(const StepStaging& staging, const Tensor& inputs, int64_t n_ids,
                             const Tensor& sampled) {
  check_begin_step(staging, inputs, n_ids, sampled);
  check_tensor(inputs, DType::U8, "begin_step inputs");
  check_tensor(sampled, DType::I32, "begin_step sampled");
  HADRON_CHECK(inputs.numel() % 8 == 0, "begin_step: {} input bytes, not whole 8-byte units",
               inputs.numel());
  launch_begin_step(step_io(staging), inputs.data, inputs.numel(), n_ids, sampled.ptr<int32_t>(),
                    sampled.numel(), stream_);
}

void CudaBackend::end_step(const StepStaging& staging, const Tensor& sampled) {
  check_end_step(staging, sampled);
  check_tensor(sampled, DType::I32, "end_step sampled");
  launch_end_step(step_io(staging), sampled.ptr<int32_t>(), sampled.numel(), stream_);
}

}  // namespace hadron::cuda
