#include "backends/cuda/cuda_check.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "core/error.h"

namespace hadron::cuda {

void fail_cuda(cudaError_t status, const char* expr, const char* file, int line) {
  throw Error(fmt::format("CUDA error {} ({}) from {} at {}:{}", cudaGetErrorName(status),
                          cudaGetErrorString(status), expr, file, line));
}

void fail_cublas(cublasStatus_t status, const char* expr, const char* file, int line) {
  throw Error(fmt::format("cuBLASLt error {} ({}) from {} at {}:{}", cublasLtGetStatusName(status),
                          cublasLtGetStatusString(status), expr, file, line));
}

void fail_dispatch(const char* what, int value, std::initializer_list<int> supported) {
  std::string list;
  for (int v : supported) list += (list.empty() ? "" : ", ") + std::to_string(v);
  throw Error(fmt::format("unsupported {} {} (supported: {})", what, value, list));
}

bool env_switch_on(const char* name) {
  const char* env = std::getenv(name);
  return env == nullptr || std::string(env) != "0";
}

bool env_flag_set(const char* name) {
  const char* env = std::getenv(name);
  return env != nullptr && *env != '\0' && std::string(env) != "0";
}

bool pdl_enabled() {
  static const bool enabled = env_switch_on("HADRON_PDL");
  return enabled;
}

}  // namespace hadron::cuda
