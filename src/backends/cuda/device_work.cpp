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

namespace {

StepIo checked_step_io(const StepStaging& s) {
  check_tensor(s.counter, DType::I32, "step counter");
  HADRON_CHECK(s.counter.numel() == 2, "step counter {}", s.counter.describe());
  StepIo io{};
  for (int turn = 0; turn < 2; ++turn) {
    HADRON_CHECK(s.images[turn].device == Device::CPU && s.images[turn].dtype == DType::U8 &&
                     s.images[turn].is_contiguous() && s.tokens[turn].device == Device::CPU &&
                     s.tokens[turn].dtype == DType::I32 && s.tokens[turn].is_contiguous(),
                 "step staging {}: image {}, tokens {}", turn, s.images[turn].describe(),
                 s.tokens[turn].describe());
    io.images[turn] = s.images[turn].data;
    io.tokens[turn] = s.tokens[turn].ptr<int32_t>();
  }
  io.counter = s.counter.ptr<int32_t>();
  io.header_bytes = StepStaging::kHeaderBytes;
  return io;
}

}  // namespace

void CudaBackend::begin_step(const StepStaging& staging, const Tensor& inputs, int64_t n_ids,
                             const Tensor& sampled) {
  const StepIo io = checked_step_io(staging);
  check_tensor(inputs, DType::U8, "begin_step inputs");
  check_tensor(sampled, DType::I32, "begin_step sampled");
  const int64_t n_bytes = inputs.numel();
  HADRON_CHECK(n_bytes % 8 == 0 && n_ids >= 0 && n_ids * 4 <= n_bytes &&
                   std::min(staging.images[0].numel(), staging.images[1].numel()) >=
                       StepStaging::kHeaderBytes + n_bytes,
               "begin_step: {} input bytes ({} ids) from images of {} and {} bytes", n_bytes, n_ids,
               staging.images[0].numel(), staging.images[1].numel());
  launch_begin_step(io, inputs.data, n_bytes, n_ids, sampled.ptr<int32_t>(), sampled.numel(),
                    stream_);
}

void CudaBackend::end_step(const StepStaging& staging, const Tensor& sampled) {
  const StepIo io = checked_step_io(staging);
  check_tensor(sampled, DType::I32, "end_step sampled");
  HADRON_CHECK(sampled.numel() <= std::min(staging.tokens[0].numel(), staging.tokens[1].numel()),
               "end_step: {} tokens into buffers of {} and {}", sampled.numel(),
               staging.tokens[0].numel(), staging.tokens[1].numel());
  launch_end_step(io, sampled.ptr<int32_t>(), sampled.numel(), stream_);
}

}  // namespace hadron::cuda
