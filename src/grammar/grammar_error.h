// Errors in a user's grammar, regex or JSON Schema: where (a JSON pointer, a byte offset or a
// rule name) and what (the unsupported feature or the limit passed). Requests answer 400.
#pragma once

#include <fmt/format.h>

#include <string>

#include "core/error.h"

namespace hadron::grammar {

class GrammarError : public InputError {
 public:
  GrammarError(std::string location, const std::string& message)
      : InputError(location.empty() ? message : fmt::format("{}: {}", location, message)),
        location_(std::move(location)) {}
  const std::string& location() const { return location_; }

 private:
  std::string location_;
};

template <typename... Args>
[[noreturn]] void grammar_error(std::string location, fmt::format_string<Args...> format,
                                Args&&... args) {
  throw GrammarError(std::move(location), fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace hadron::grammar
