// Errors: invariant checks (hadron::Error) and user-input errors (hadron::InputError).
#pragma once

#include <fmt/format.h>

#include <source_location>
#include <stdexcept>
#include <string>

namespace hadron {

// A broken internal invariant: a bug in hadron, reported with where it happened.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input from a user: a file, a flag, a request. Becomes a clear message or a 4xx.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail_check(const char* expr, const std::string& message,
                             std::source_location where);

// Throws InputError with a formatted message.
template <typename... Args>
[[noreturn]] void input_error(fmt::format_string<Args...> format, Args&&... args) {
  throw InputError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace hadron

// HADRON_CHECK(cond, "format {}", args...): throws hadron::Error naming the condition,
// the values in the message and the source location.
#define HADRON_CHECK(cond, ...)                                              \
  do {                                                                       \
    if (!(cond)) [[unlikely]]                                                \
      ::hadron::fail_check(#cond, ::fmt::format(__VA_ARGS__),                \
                           std::source_location::current());                 \
  } while (0)
