// The backend factory: names it knows give a backend, others a clear input error.
#include "backends/backend_factory.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace hadron {
namespace {

TEST(BackendFactory, CpuAndAutoGiveABackend) {
  EXPECT_EQ(make_backend("cpu")->device(), Device::CPU);
  EXPECT_NE(make_backend("auto"), nullptr);  // CUDA where a GPU is visible, else the CPU
}

TEST(BackendFactory, UnknownDeviceIsAnInputErrorNamingIt) {
  try {
    make_backend("tpu");
    FAIL() << "make_backend(\"tpu\") returned";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tpu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hadron
