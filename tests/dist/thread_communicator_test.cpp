// The thread communicator's collectives against sums and copies done by hand, on 1 to 4
// ranks running as threads, with random values (fresh per run) and sizes that do not divide
// evenly by the number of ranks.
#include "dist/thread_communicator.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "core/error.h"

namespace hadron {
namespace {

// Runs body(rank, communicator) on world_size threads; rethrows the first failure.
void run_ranks(int world_size, const std::function<void(int, Communicator&)>& body) {
  ThreadGroup group(world_size);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(world_size);
  for (int rank = 0; rank < world_size; ++rank)
    threads.emplace_back([&, rank] {
      try {
        const std::unique_ptr<Communicator> comm = group.communicator(rank);
        body(rank, *comm);
      } catch (...) {
        errors[rank] = std::current_exception();
        group.abort();
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

// values[rank][i], random per run.
std::vector<std::vector<float>> random_values(int world_size, int64_t n) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::vector<float>> values(world_size, std::vector<float>(n));
  for (auto& rank_values : values)
    for (float& v : rank_values) v = dist(rng);
  return values;
}

Tensor view(std::vector<float>& v) {
  return Tensor::view_of(v.data(), DType::F32, {static_cast<int64_t>(v.size())});
}

class ThreadCommunicatorTest : public ::testing::TestWithParam<int> {};

TEST_P(ThreadCommunicatorTest, AllReduceSumsInRankOrderIdenticallyOnEveryRank) {
  const int world = GetParam();
  const int64_t n = 10007;  // not a multiple of the world size, several 4096-element blocks
  const auto inputs = random_values(world, n);
  std::vector<std::vector<float>> results = inputs;
  run_ranks(world, [&](int rank, Communicator& comm) {
    EXPECT_EQ(comm.rank(), rank);
    EXPECT_EQ(comm.world_size(), world);
    comm.all_reduce_sum(view(results[rank]));
  });
  for (int64_t i = 0; i < n; ++i) {
    float expected = inputs[0][i];
    for (int r = 1; r < world; ++r) expected += inputs[r][i];
    for (int r = 0; r < world; ++r) ASSERT_EQ(results[r][i], expected) << "rank " << r << " " << i;
  }
}

TEST_P(ThreadCommunicatorTest, AllReduceOfBf16SumsInFp32) {
  const int world = GetParam();
  const int64_t n = 999;
  const auto inputs = random_values(world, n);
  std::vector<std::vector<uint16_t>> results(world, std::vector<uint16_t>(n));
  for (int r = 0; r < world; ++r)
    convert_from_f32(inputs[r].data(), results[r].data(), DType::BF16, n);
  run_ranks(world, [&](int rank, Communicator& comm) {
    comm.all_reduce_sum(Tensor::view_of(results[rank].data(), DType::BF16, {n}));
  });
  for (int64_t i = 0; i < n; ++i) {
    float expected = 0;
    for (int r = 0; r < world; ++r) {
      float value;
      uint16_t rounded;
      convert_from_f32(&inputs[r][i], &rounded, DType::BF16, 1);
      convert_to_f32(&rounded, DType::BF16, &value, 1);
      expected += value;
    }
    uint16_t expected_bf16;
    convert_from_f32(&expected, &expected_bf16, DType::BF16, 1);
    for (int r = 0; r < world; ++r) ASSERT_EQ(results[r][i], expected_bf16) << "rank " << r;
  }
}

TEST_P(ThreadCommunicatorTest, AllGatherIsRankMajor) {
  const int world = GetParam();
  const int64_t n = 37;
  auto inputs = random_values(world, n);
  std::vector<std::vector<float>> gathered(world, std::vector<float>(world * n, 0.0f));
  run_ranks(world, [&](int rank, Communicator& comm) {
    comm.all_gather(view(inputs[rank]), view(gathered[rank]));
  });
  for (int r = 0; r < world; ++r)
    for (int q = 0; q < world; ++q)
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(gathered[r][q * n + i], inputs[q][i]);
}

TEST_P(ThreadCommunicatorTest, ReduceScatterKeepsThisRanksPartOfTheSum) {
  const int world = GetParam();
  const int64_t n = 4100;
  const auto inputs = random_values(world, world * n);
  auto sources = inputs;
  std::vector<std::vector<float>> parts(world, std::vector<float>(n));
  run_ranks(world, [&](int rank, Communicator& comm) {
    comm.reduce_scatter_sum(view(sources[rank]), view(parts[rank]));
  });
  for (int r = 0; r < world; ++r)
    for (int64_t i = 0; i < n; ++i) {
      float expected = inputs[0][r * n + i];
      for (int q = 1; q < world; ++q) expected += inputs[q][r * n + i];
      ASSERT_EQ(parts[r][i], expected) << "rank " << r << " " << i;
    }
  EXPECT_EQ(sources, inputs);  // the sources are left as they were
}

TEST_P(ThreadCommunicatorTest, AllToAllTransposesParts) {
  const int world = GetParam();
  const int64_t n = 5;
  auto inputs = random_values(world, world * n);
  std::vector<std::vector<float>> outputs(world, std::vector<float>(world * n));
  run_ranks(world, [&](int rank, Communicator& comm) {
    comm.all_to_all(view(inputs[rank]), view(outputs[rank]));
  });
  for (int r = 0; r < world; ++r)
    for (int j = 0; j < world; ++j)
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(outputs[j][r * n + i], inputs[r][j * n + i]);
}

TEST_P(ThreadCommunicatorTest, BroadcastCopiesTheRootsTensor) {
  const int world = GetParam();
  const int root = world - 1;
  auto values = random_values(world, 300);
  const std::vector<float> expected = values[root];
  run_ranks(world, [&](int rank, Communicator& comm) { comm.broadcast(view(values[rank]), root); });
  for (int r = 0; r < world; ++r) EXPECT_EQ(values[r], expected);
}

INSTANTIATE_TEST_SUITE_P(Worlds, ThreadCommunicatorTest, ::testing::Values(1, 2, 3, 4));

TEST(ThreadCommunicator, AFailedRankReleasesTheOthers) {
  // Rank 1 fails before its all-reduce: rank 0 must get an error rather than wait forever.
  std::vector<float> x(16, 1.0f), y(16, 1.0f);
  EXPECT_THROW(run_ranks(2,
                         [&](int rank, Communicator& comm) {
                           if (rank == 1) throw InputError("rank 1 failed");
                           comm.all_reduce_sum(view(x));
                         }),
               std::exception);
  ThreadGroup group(2);
  group.abort();
  EXPECT_THROW(group.communicator(0)->barrier(), Error);
}

}  // namespace
}  // namespace hadron
