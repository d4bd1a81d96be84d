#include "backends/backend_factory.h"

#include "backends/cpu/cpu_backend.h"
#include "core/error.h"

#ifdef HADRON_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/kernel_trace.h"
#endif

namespace hadron {

std::unique_ptr<Backend> make_backend(const std::string& device) {
#ifdef HADRON_HAVE_CUDA
  const int n_gpus = cuda_device_count();
  if (device == "cuda" || (device == "auto" && n_gpus > 0)) {
    if (n_gpus == 0) input_error("--device cuda: no CUDA GPU is visible");
    return make_cuda_backend(0);
  }
#endif
  if (device == "cpu" || device == "auto") return make_cpu_backend();
  input_error("device '{}' is not available in this build (it has no CUDA backend)", device);
}

#ifdef HADRON_HAVE_CUDA
namespace {

class CuptiKernelTracer final : public KernelTracer {
 public:
  void start() override { cuda::kernel_trace_start(); }
  std::vector<KernelSpan> stop(uint64_t from_ns, uint64_t to_ns) override {
    return cuda::kernel_trace_stop(from_ns, to_ns);
  }
  uint64_t now_ns() override { return cuda::kernel_trace_now_ns(); }
};

}  // namespace

std::unique_ptr<KernelTracer> make_kernel_tracer() {
  if (!cuda::kernel_trace_available()) return nullptr;
  return std::make_unique<CuptiKernelTracer>();
}
#else
std::unique_ptr<KernelTracer> make_kernel_tracer() { return nullptr; }
#endif

}  // namespace hadron
