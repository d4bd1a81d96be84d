// Wall-clock intervals for logs and engine statistics.
#pragma once

#include <chrono>

namespace hadron {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace hadron
