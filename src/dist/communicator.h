// Communicator: the collectives tensor and expert parallelism need, over the ranks of one
// group. Every rank calls the same collectives in the same order with tensors of the same
// shape and dtype (a collective is a rendezvous); buffers live on the rank's own device.
// Implementations: ThreadCommunicator (ranks are threads of one process, host memory; CPU
// backends and tests) and, for GPUs, an NCCL one with one process per GPU (ADR 0009).
#pragma once

#include "core/tensor.h"

namespace hadron {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // In place: every rank's x becomes the elementwise sum of all ranks' x (bitwise the same on
  // every rank).
  virtual void all_reduce_sum(const Tensor& x) = 0;
  // src [n...] from every rank into dst [world * n...], rank-major: dst's part r is rank r's src.
  virtual void all_gather(const Tensor& src, const Tensor& dst) = 0;
  // src [world * n...] summed over ranks; rank r keeps part r of the sum in dst [n...].
  virtual void reduce_scatter_sum(const Tensor& src, const Tensor& dst) = 0;
  // src and dst [world * n...]: part j of rank r's src becomes part r of rank j's dst.
  virtual void all_to_all(const Tensor& src, const Tensor& dst) = 0;
  // In place: every rank's x becomes root's x.
  virtual void broadcast(const Tensor& x, int root) = 0;
  // Returns once every rank has called it.
  virtual void barrier() = 0;
};

}  // namespace hadron
