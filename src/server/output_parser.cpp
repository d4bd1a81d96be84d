#include "server/output_parser.h"

#include <initializer_list>
#include <optional>

#include "core/error.h"
#include "server/harmony_parser.h"
#include "server/marker_text.h"
#include "server/tool_syntax.h"

namespace hadron::server {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";

// <think> reasoning and one family's tool-call blocks, by their markers.
class MarkerParser final : public StateMachineParser {
 public:
  MarkerParser(std::optional<ToolSyntax> tools, bool reasoning, bool starts_in_reasoning)
      : tools_(std::move(tools)), reasoning_(reasoning) {
    if (starts_in_reasoning && reasoning)
      state_ = State::kReasoning;
    else if (tools_ && tools_->json_at_start)
      state_ = State::kStart;
  }

 private:
  enum class State { kStart, kContent, kReasoning, kTools };

  // One move of the state machine; false when it must wait for more text.
  bool advance(ParsedDelta& out, bool final) override {
    switch (state_) {
      case State::kStart:
        return at_start(final);
      case State::kContent:
        return in_content(out, final);
      case State::kReasoning:
        return in_reasoning(out, final);
      case State::kTools:
        return in_tools(out, final);
    }
    return false;
  }

  bool at_start(bool final) {
    const size_t first = pending_.find_first_not_of(" \t\r\n");
    if (first == std::string::npos && !final) return false;
    if (first != std::string::npos && pending_[first] == '{') {
      open_marker_.clear();
      state_ = State::kTools;
      open_to_end_ = true;
    } else {
      state_ = State::kContent;
    }
    return true;
  }

  bool in_content(ParsedDelta& out, bool final) {
    std::vector<std::string_view> markers;
    if (reasoning_) markers.push_back(kThinkOpen);
    if (tools_) markers.push_back(tools_->begin);
    const MarkerMatch match = find_first_marker(pending_, markers);
    if (match.marker.empty()) {
      out.content += take_safe_prefix(pending_, markers, final);
      return false;
    }
    out.content += pending_.substr(0, match.pos);
    pending_.erase(0, match.pos + match.marker.size());
    if (match.marker == kThinkOpen) {
      state_ = State::kReasoning;
    } else {
      state_ = State::kTools;
      open_marker_ = std::string(match.marker);
      open_to_end_ = tools_->end.empty();
    }
    return true;
  }

  bool in_reasoning(ParsedDelta& out, bool final) {
    const size_t close = pending_.find(kThinkClose);
    if (close == std::string::npos) {
      out.reasoning += take_safe_prefix(pending_, {kThinkClose}, final);
      return false;
    }
    out.reasoning += pending_.substr(0, close);
    pending_.erase(0, close + kThinkClose.size());
    state_ = State::kContent;
    return true;
  }

  bool in_tools(ParsedDelta& out, bool final) {
    size_t close = std::string::npos;
    if (!open_to_end_) close = pending_.find(tools_->end);
    if (close == std::string::npos && !final) return false;
    const std::string_view body = close == std::string::npos
                                      ? std::string_view(pending_)
                                      : std::string_view(pending_).substr(0, close);
    if (std::optional<std::vector<ToolCall>> calls = tools_->parse(body)) {
      for (ToolCall& call : *calls) out.tool_calls.push_back(std::move(call));
    } else {  // not a valid call: the text stays content, markers and all
      out.content += open_marker_;
      out.content +=
          close == std::string::npos ? pending_ : pending_.substr(0, close + tools_->end.size());
    }
    pending_.erase(0, close == std::string::npos ? pending_.size() : close + tools_->end.size());
    state_ = State::kContent;
    return true;
  }

  std::optional<ToolSyntax> tools_;
  bool reasoning_;
  State state_ = State::kContent;
  std::string open_marker_;  // the marker that opened the current tool block
  bool open_to_end_ = false;
};

}  // namespace

void ParsedDelta::append(ParsedDelta other) {
  reasoning += other.reasoning;
  content += other.content;
  for (ToolCall& call : other.tool_calls) tool_calls.push_back(std::move(call));
}

ToolFormat tool_format_from_name(std::string_view name) {
  for (ToolFormat format :
       {ToolFormat::kNone, ToolFormat::kHermes, ToolFormat::kQwen3Coder, ToolFormat::kGlm45,
        ToolFormat::kDeepSeekV3, ToolFormat::kLlama3Json, ToolFormat::kHarmony})
    if (name == tool_format_name(format)) return format;
  input_error(
      "unknown tool-call parser '{}' (none, hermes, qwen3_coder, glm45, deepseek_v3, "
      "llama3_json, openai)",
      name);
}

const char* tool_format_name(ToolFormat format) {
  switch (format) {
    case ToolFormat::kNone:
      return "none";
    case ToolFormat::kHermes:
      return "hermes";
    case ToolFormat::kQwen3Coder:
      return "qwen3_coder";
    case ToolFormat::kGlm45:
      return "glm45";
    case ToolFormat::kDeepSeekV3:
      return "deepseek_v3";
    case ToolFormat::kLlama3Json:
      return "llama3_json";
    case ToolFormat::kHarmony:
      return "openai";
  }
  return "none";
}

OutputFormat detect_output_format(std::string_view t) {
  const auto has = [&](std::string_view s) { return t.find(s) != std::string_view::npos; };
  OutputFormat format;
  format.reasoning = has("<think>") || has("</think>");
  if (has("<|channel|>")) {
    format.tools = ToolFormat::kHarmony;
    format.reasoning = false;  // channels carry it
  } else if (has("<｜tool▁calls▁begin｜>")) {
    format.tools = ToolFormat::kDeepSeekV3;
  } else if (has("<arg_key>")) {
    format.tools = ToolFormat::kGlm45;
  } else if (has("<function=")) {
    format.tools = ToolFormat::kQwen3Coder;
  } else if (has("<tool_call>")) {
    format.tools = ToolFormat::kHermes;
  } else if (has("<|python_tag|>") || has("ipython")) {
    format.tools = ToolFormat::kLlama3Json;
  }
  return format;
}

std::unique_ptr<OutputParser> make_output_parser(OutputFormat format, bool starts_in_reasoning) {
  if (format.tools == ToolFormat::kHarmony) return make_harmony_parser();
  return std::make_unique<MarkerParser>(tool_syntax(format.tools), format.reasoning,
                                        starts_in_reasoning);
}

}  // namespace hadron::server
