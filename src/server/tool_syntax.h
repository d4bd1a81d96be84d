// The text between a tool-call block's markers, per model family, turned into calls.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/output_parser.h"

namespace hadron::server {

// How a family marks a block of tool calls and reads its body.
struct ToolSyntax {
  std::string begin;           // opens a block
  std::string end;             // closes it; empty: the block runs to the end of the output
  bool json_at_start = false;  // a block also opens when the output starts with '{'
  // The calls in a block's body, or nullopt when it is malformed (then it stays content).
  std::optional<std::vector<ToolCall>> (*parse)(std::string_view body) = nullptr;
};

// The syntax of `format`; kNone and kHarmony have none (harmony uses channels).
std::optional<ToolSyntax> tool_syntax(ToolFormat format);

}  // namespace hadron::server
