// Splitting a chat model's output into reasoning, content and tool calls, incrementally.
//
// A parser sees the generated text in pieces (one per engine step when streaming, all at once
// otherwise) and returns only what can no longer change: text that might be the start of a
// marker is held back until the next piece decides it, and a tool call comes out whole once its
// closing marker (or the end) is seen. So for any split of the same text the concatenated
// deltas equal the one-piece result - the property the streaming API promises.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hadron::server {

struct ToolCall {
  std::string name;
  std::string arguments;  // JSON text of an object
};

struct ParsedDelta {
  std::string reasoning;
  std::string content;
  std::vector<ToolCall> tool_calls;

  bool empty() const { return reasoning.empty() && content.empty() && tool_calls.empty(); }
  void append(ParsedDelta other);
};

class OutputParser {
 public:
  virtual ~OutputParser() = default;
  virtual ParsedDelta push(std::string_view text) = 0;  // newly generated text
  virtual ParsedDelta finish() = 0;                     // the end: everything held back
};

// Tool-call syntaxes of the model families hadron serves.
enum class ToolFormat { kNone, kHermes, kQwen3Coder, kGlm45, kDeepSeekV3, kLlama3Json, kHarmony };

struct OutputFormat {
  ToolFormat tools = ToolFormat::kNone;
  bool reasoning = false;  // <think>...</think> (harmony has its own channels)
};

// Names as on the command line (--tool-call-parser): none, hermes, qwen3_coder, glm45,
// deepseek_v3, llama3_json, openai. Throws InputError for others.
ToolFormat tool_format_from_name(std::string_view name);
const char* tool_format_name(ToolFormat format);
// Guesses the output format from the chat template's text (the markers it writes).
OutputFormat detect_output_format(std::string_view chat_template);

// starts_in_reasoning: the prompt ended inside an open <think> (templates that open it).
std::unique_ptr<OutputParser> make_output_parser(OutputFormat format, bool starts_in_reasoning);

}  // namespace hadron::server
