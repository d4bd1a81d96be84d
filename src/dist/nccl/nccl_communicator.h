// The Communicator over NCCL for GPU ranks (one process per GPU in production, ADR 0009).
// Collectives are enqueued on the rank's CUDA stream in call order and return before they
// complete, as the backend's kernels do. This header includes no CUDA header.
#pragma once

#include <array>
#include <memory>

#include "dist/communicator.h"

namespace hadron {

// What every rank of a group needs to join it: made once by rank 0 (nccl_unique_id) and sent
// to the others through the launcher's rendezvous.
struct NcclUniqueId {
  std::array<char, 128> bytes{};
};

NcclUniqueId nccl_unique_id();

// Sets NCCL_NVLS_ENABLE=0 (overriding the environment): hadron never uses NVLink multicast,
// which can take a shared host's GPUs out of service. Called before every NCCL init.
void disable_nvlink_multicast();

// Joins the group `id` as `rank` of `world_size` on GPU `device`, collectives on `stream`
// (a cudaStream_t; null: the legacy default stream). Blocks until every rank has joined.
std::unique_ptr<Communicator> make_nccl_communicator(const NcclUniqueId& id, int rank,
                                                     int world_size, int device, void* stream);

}  // namespace hadron
