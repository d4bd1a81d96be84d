#include "core/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "core/error.h"

namespace hadron {
namespace {

TEST(Npy, RoundTrip) {
  const std::string path = ::testing::TempDir() + "/npy_round_trip.npy";
  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -8.5f};
  write_npy(path, values.data(), {2, 3});
  const NpyArray array = read_npy(path);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array.values, values);
  write_npy(path, values.data(), {6});
  EXPECT_EQ(read_npy(path).shape, std::vector<int64_t>{6});
  std::remove(path.c_str());
}

TEST(Npy, RejectsBadFiles) {
  const std::string path = ::testing::TempDir() + "/npy_bad.npy";
  std::ofstream(path) << "not numpy";
  EXPECT_THROW(read_npy(path), InputError);
  EXPECT_THROW(read_npy(path + ".missing"), InputError);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace hadron
