// Hopper bulk copies (cp.async.bulk, the TMA engine's 1-D form) from global into shared
// memory, completed on an mbarrier: one thread asks for many kilobytes and no register holds
// them in flight, so a kernel keeps as many bytes in flight as its shared memory has stages.
// Sizes and both addresses must be multiples of 16 bytes.
#pragma once

#include <cstdint>

#include "backends/cuda/mma.cuh"

namespace hadron::cuda {

// mbarrier in shared memory whose phases complete after `count` arrivals (and the bytes of
// the copies announced on it).
__device__ __forceinline__ void mbarrier_init(uint64_t* barrier, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(barrier)), "r"(count));
}
// Makes initialised barriers visible to the copy engine; a __syncthreads() must follow.
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival for the barrier's current phase, announcing `bytes` of copies into it.
__device__ __forceinline__ void mbarrier_expect_bytes(uint64_t* barrier, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(barrier)),
               "r"(bytes)
               : "memory");
}

// One arrival (release: this thread's earlier shared-memory reads and writes are ordered
// before whatever the waiting threads do next).
__device__ __forceinline__ void mbarrier_arrive(uint64_t* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(barrier)) : "memory");
}

// Waits until the phase of parity `phase` (0, 1, 0, ... for successive phases) has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* barrier, uint32_t phase) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(barrier)), "r"(phase)
        : "memory");
  } while (!done);
}

// bytes from global src to shared dst, counted on barrier; streamed weights leave L2 first
// (evict_first), as load_weights' do.
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, uint32_t bytes,
                                                    uint64_t* barrier) {
  uint64_t policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint "
      "[%0], [%1], %2, [%3], %4;\n" ::"r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(barrier)), "l"(policy)
      : "memory");
}

}  // namespace hadron::cuda
