// Memory of a GPU, for sizing the KV pool from --gpu-memory-utilization.
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"

namespace hadron {

DeviceMemory cuda_device_memory(int device_idx) {
  CUDA_CHECK(cudaSetDevice(device_idx));
  DeviceMemory memory;
  CUDA_CHECK(cudaMemGetInfo(&memory.free_bytes, &memory.total_bytes));
  return memory;
}

}  // namespace hadron
