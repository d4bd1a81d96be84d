#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace hadron {
namespace {

TEST(ThreadPool, CoversEveryIndexOnce) {
  ThreadPool pool(3);
  for (int64_t n : {1, 2, 3, 7, 1000}) {
    std::vector<std::atomic<int>> hits(n);
    pool.parallel_for(n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ThreadPool, ConcurrentCallersEachCoverTheirIndicesOnce) {
  // Tensor-parallel ranks are threads that share the pool: one runs on the workers, the
  // others alone, and no job sees another's chunks.
  ThreadPool pool(3);
  constexpr int kCallers = 3, kRounds = 200;
  constexpr int64_t kN = 97;
  std::vector<std::vector<std::atomic<int>>> hits(kCallers);
  for (auto& caller_hits : hits) caller_hits = std::vector<std::atomic<int>>(kN);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < kRounds; ++round)
        pool.parallel_for(kN, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) hits[c][i]++;
        });
    });
  for (std::thread& caller : callers) caller.join();
  for (int c = 0; c < kCallers; ++c)
    for (int64_t i = 0; i < kN; ++i) EXPECT_EQ(hits[c][i].load(), kRounds) << c << " " << i;
}

TEST(ThreadPool, RethrowsAndStaysUsable) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallel_for(10,
                                 [](int64_t begin, int64_t) {
                                   if (begin == 0) throw std::runtime_error("boom");
                                 }),
               std::runtime_error);
  std::atomic<int64_t> sum = 0;
  pool.parallel_for(100, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950);
}

}  // namespace
}  // namespace hadron
