// Finding markers in generated text that is still arriving.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "server/output_parser.h"

namespace hadron::server {

// A parser written as a state machine over the text not yet emitted: push() appends to it and
// runs advance() until that needs more text; finish() runs it with `final` set.
class StateMachineParser : public OutputParser {
 public:
  ParsedDelta push(std::string_view text) final {
    pending_ += text;
    return drain(false);
  }
  ParsedDelta finish() final { return drain(true); }

 protected:
  // One move; false when it must wait for more text (or, when final, when all is emitted).
  virtual bool advance(ParsedDelta& out, bool final) = 0;
  std::string pending_;

 private:
  ParsedDelta drain(bool final) {
    ParsedDelta out;
    while (advance(out, final)) {
    }
    return out;
  }
};

struct MarkerMatch {
  size_t pos = std::string::npos;
  std::string_view marker;  // empty when none was found
};

// The earliest occurrence of any marker (the longest one when two start at the same place).
MarkerMatch find_first_marker(std::string_view text, std::span<const std::string_view> markers);

// Removes and returns the front of `pending` that cannot be the start of a marker: everything
// but the longest tail that is a proper prefix of one (all of it when `final`).
std::string take_safe_prefix(std::string& pending, std::span<const std::string_view> markers,
                             bool final);
inline std::string take_safe_prefix(std::string& pending,
                                    std::initializer_list<std::string_view> markers, bool final) {
  return take_safe_prefix(pending, std::span(markers.begin(), markers.size()), final);
}

}  // namespace hadron::server
