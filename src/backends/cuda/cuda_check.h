// Checks for CUDA runtime and cuBLASLt calls and kernel launches, and the dispatch helper
// that turns a runtime size into a template parameter. Included by .cu files, so no fmt
// (nvcc cannot compile its compile-time format strings); errors are formatted in the .cpp.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <initializer_list>

namespace hadron::cuda {

[[noreturn]] void fail_cuda(cudaError_t status, const char* expr, const char* file, int line);
[[noreturn]] void fail_cublas(cublasStatus_t status, const char* expr, const char* file, int line);
// Throws naming `what`, the value and the supported values.
[[noreturn]] void fail_dispatch(const char* what, int value, std::initializer_list<int> supported);

// Whether the environment leaves the switch `name` on: false only where it says name=0.
bool env_switch_on(const char* name);
// Whether the environment sets the flag `name`: true only where it says name=<not 0>.
bool env_flag_set(const char* name);

// Whether kernels use programmatic dependent launch (launch.cuh): false when the environment
// says HADRON_PDL=0 (read once).
bool pdl_enabled();

}  // namespace hadron::cuda

#define CUDA_CHECK(expr)                                             \
  do {                                                               \
    const cudaError_t status_ = (expr);                              \
    if (status_ != cudaSuccess) [[unlikely]]                         \
      ::hadron::cuda::fail_cuda(status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(expr)                                             \
  do {                                                                 \
    const cublasStatus_t status_ = (expr);                             \
    if (status_ != CUBLAS_STATUS_SUCCESS) [[unlikely]]                 \
      ::hadron::cuda::fail_cublas(status_, #expr, __FILE__, __LINE__); \
  } while (0)

// After every kernel launch: a launch error (bad configuration, too much shared memory).
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
