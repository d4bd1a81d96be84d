#include "dist/thread_communicator.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace hadron {

ThreadGroup::ThreadGroup(int world_size) : world_size_(world_size), slots_(world_size) {
  HADRON_CHECK(world_size >= 1, "a group of {} ranks", world_size);
}

void ThreadGroup::barrier() {
  std::unique_lock lock(mutex_);
  if (aborted_) throw Error("a rank of the thread group failed");
  const uint64_t generation = generation_;
  if (++n_waiting_ == world_size_) {
    n_waiting_ = 0;
    ++generation_;
    arrived_.notify_all();
    return;
  }
  arrived_.wait(lock, [&] { return aborted_ || generation_ != generation; });
  if (generation_ == generation) throw Error("a rank of the thread group failed");
}

void ThreadGroup::abort() {
  {
    const std::lock_guard lock(mutex_);
    aborted_ = true;
  }
  arrived_.notify_all();
}

bool ThreadGroup::aborted() const {
  const std::lock_guard lock(mutex_);
  return aborted_;
}

void ThreadGroup::publish(int rank, const void* src, void* dst) { slots_[rank] = {src, dst}; }

namespace {

void check_host(const Tensor& t, const char* what) {
  HADRON_CHECK(t.device == Device::CPU && t.is_contiguous(),
               "{}: the thread communicator needs contiguous host tensors, got {}", what,
               t.describe());
}

// Where part `part` of n elements split into `parts` near-equal parts begins.
int64_t part_begin(int64_t n, int parts, int part) { return n * part / parts; }

class ThreadCommunicator final : public Communicator {
 public:
  ThreadCommunicator(ThreadGroup& group, int rank) : group_(group), rank_(rank) {}

  int rank() const override { return rank_; }
  int world_size() const override { return group_.world_size(); }

  void all_reduce_sum(const Tensor& x) override {
    check_host(x, "all_reduce_sum");
    exchange(x.data, x.data, [&] {
      // This rank sums its part of the elements over every rank and writes it everywhere.
      const int64_t n = x.numel();
      const int64_t begin = part_begin(n, world_size(), rank_);
      const int64_t end = part_begin(n, world_size(), rank_ + 1);
      std::vector<char*> parts;
      for (int r = 0; r < world_size(); ++r)
        parts.push_back(static_cast<char*>(group_.dst(r)) + begin * dtype_size(x.dtype));
      sum_parts(x.dtype, end - begin, parts, parts);
    });
  }

  void all_gather(const Tensor& src, const Tensor& dst) override {
    check_host(src, "all_gather");
    check_host(dst, "all_gather");
    HADRON_CHECK(dst.dtype == src.dtype && dst.numel() == src.numel() * world_size(),
                 "all_gather {} into {}", src.describe(), dst.describe());
    exchange(src.data, dst.data, [&] {
      for (int r = 0; r < world_size(); ++r)
        std::memcpy(static_cast<char*>(group_.dst(r)) + rank_ * src.nbytes(), src.data,
                    src.nbytes());
    });
  }

  void reduce_scatter_sum(const Tensor& src, const Tensor& dst) override {
    check_host(src, "reduce_scatter_sum");
    check_host(dst, "reduce_scatter_sum");
    HADRON_CHECK(dst.dtype == src.dtype && src.numel() == dst.numel() * world_size(),
                 "reduce_scatter_sum {} into {}", src.describe(), dst.describe());
    exchange(src.data, dst.data, [&] {
      std::vector<char*> parts;
      for (int r = 0; r < world_size(); ++r)
        parts.push_back(static_cast<char*>(const_cast<void*>(group_.src(r))) +
                        rank_ * dst.nbytes());
      sum_parts(src.dtype, dst.numel(), parts, {static_cast<char*>(dst.data)});
    });
  }

  void all_to_all(const Tensor& src, const Tensor& dst) override {
    check_host(src, "all_to_all");
    check_host(dst, "all_to_all");
    HADRON_CHECK(
        dst.dtype == src.dtype && dst.numel() == src.numel() && src.numel() % world_size() == 0,
        "all_to_all {} into {}", src.describe(), dst.describe());
    exchange(src.data, dst.data, [&] {
      const size_t part_bytes = src.nbytes() / world_size();
      for (int r = 0; r < world_size(); ++r)
        std::memcpy(static_cast<char*>(group_.dst(r)) + rank_ * part_bytes,
                    static_cast<const char*>(src.data) + r * part_bytes, part_bytes);
    });
  }

  void broadcast(const Tensor& x, int root) override {
    check_host(x, "broadcast");
    HADRON_CHECK(root >= 0 && root < world_size(), "broadcast from rank {} of {}", root,
                 world_size());
    exchange(x.data, x.data, [&] {
      if (rank_ != root) std::memcpy(x.data, group_.src(root), x.nbytes());
    });
  }

  void barrier() override { group_.barrier(); }

 private:
  // Publishes this rank's pointers, runs `move` once every rank has, and returns once every
  // rank's move is done (so no buffer is reused while another rank reads it).
  template <typename Move>
  void exchange(const void* src, void* dst, const Move& move) {
    group_.publish(rank_, src, dst);
    group_.barrier();
    move();
    group_.barrier();
  }

  // out[k][j] = the sum over ranks, in rank order, of in[q][j] for j < n. In any float
  // dtype, summed in fp32. An out may be an in: each block is read whole before it is written.
  void sum_parts(DType dtype, int64_t n, const std::vector<char*>& in,
                 const std::vector<char*>& out) {
    constexpr int64_t kBlock = 4096;
    const size_t size = dtype_size(dtype);
    std::vector<float> sum(kBlock), value(kBlock);
    for (int64_t i = 0; i < n; i += kBlock) {
      const auto count = static_cast<size_t>(std::min(kBlock, n - i));
      convert_to_f32(in[0] + i * size, dtype, sum.data(), count);
      for (size_t q = 1; q < in.size(); ++q) {
        convert_to_f32(in[q] + i * size, dtype, value.data(), count);
        for (size_t j = 0; j < count; ++j) sum[j] += value[j];
      }
      for (char* base : out) convert_from_f32(sum.data(), base + i * size, dtype, count);
    }
  }

  ThreadGroup& group_;
  const int rank_;
};

}  // namespace

std::unique_ptr<Communicator> ThreadGroup::communicator(int rank) {
  HADRON_CHECK(rank >= 0 && rank < world_size_, "rank {} of a group of {}", rank, world_size_);
  return std::make_unique<ThreadCommunicator>(*this, rank);
}

}  // namespace hadron
