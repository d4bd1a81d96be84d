// Errors: invariant checks (hadron::Error) and user-input errors (hadron::InputError).
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <version>

#if defined(__cpp_lib_source_location)
#include <source_location>
#endif

namespace hadron {

#if defined(__cpp_lib_source_location)
using SourceLocation = std::source_location;
#else
// clang 14 with libstdc++ 12 (the fuzz build) has no std::source_location; the same builtins
// give the caller's location through default arguments.
struct SourceLocation {
  static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                          unsigned line = __builtin_LINE(),
                                          const char* function = __builtin_FUNCTION()) {
    return {file, line, function};
  }
  constexpr const char* file_name() const { return file_; }
  constexpr unsigned line() const { return line_; }
  constexpr const char* function_name() const { return function_; }
  const char* file_;
  unsigned line_;
  const char* function_;
};
#endif

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

[[noreturn]] void fail_check(const char* expr, const std::string& message, SourceLocation where);

// Throws InputError with a formatted message.
template <typename... Args>
[[noreturn]] void input_error(fmt::format_string<Args...> format, Args&&... args) {
  throw InputError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace hadron

// HADRON_CHECK(cond, "format {}", args...): throws hadron::Error naming the condition,
// the values in the message and the source location.
#define HADRON_CHECK(cond, ...)                                  \
  do {                                                           \
    if (!(cond)) [[unlikely]]                                    \
      ::hadron::fail_check(#cond, ::fmt::format(__VA_ARGS__),    \
                           ::hadron::SourceLocation::current()); \
  } while (0)
