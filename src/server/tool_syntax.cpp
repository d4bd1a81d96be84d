#include "server/tool_syntax.h"

#include <nlohmann/json.hpp>

#include "server/request_fields.h"

namespace hadron::server {
namespace {

using nlohmann::ordered_json;

std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::optional<ordered_json> parse_json(std::string_view text) {
  ordered_json value = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

// A parameter written as text: JSON when it parses as JSON, else the string itself.
ordered_json loose_value(std::string_view text) {
  std::optional<ordered_json> value = parse_json(text);
  return value ? *value : ordered_json(std::string(text));
}

// {"name": ..., "arguments" | "parameters": {...} or a JSON string of one}.
std::optional<ToolCall> call_from_object(const ordered_json& object) {
  if (!object.is_object() || !object.contains("name") || !object["name"].is_string())
    return std::nullopt;
  ordered_json arguments = ordered_json::object();
  for (const char* key : {"arguments", "parameters"}) {
    if (!object.contains(key)) continue;
    arguments = object[key];
    if (arguments.is_string()) {
      std::optional<ordered_json> parsed = parse_json(arguments.get<std::string>());
      if (!parsed) return std::nullopt;
      arguments = *parsed;
    }
    break;
  }
  if (!arguments.is_object()) return std::nullopt;
  return ToolCall{object["name"].get<std::string>(), dump_json(arguments)};
}

// <tool_call>{"name": ..., "arguments": {...}}</tool_call>
std::optional<std::vector<ToolCall>> parse_hermes(std::string_view body) {
  std::optional<ordered_json> object = parse_json(trim(body));
  if (!object) return std::nullopt;
  std::optional<ToolCall> call = call_from_object(*object);
  if (!call) return std::nullopt;
  return std::vector<ToolCall>{*call};
}

// Text between `open` and `close` starting at `pos`; advances pos past close.
std::optional<std::string_view> between(std::string_view s, std::string_view open,
                                        std::string_view close, size_t& pos) {
  const size_t start = s.find(open, pos);
  if (start == std::string_view::npos) return std::nullopt;
  const size_t body = start + open.size();
  const size_t stop = s.find(close, body);
  if (stop == std::string_view::npos) return std::nullopt;
  pos = stop + close.size();
  return s.substr(body, stop - body);
}

// One newline on each side of an XML-style value belongs to the format, not the value.
std::string_view strip_newline(std::string_view s) {
  if (!s.empty() && s.front() == '\n') s.remove_prefix(1);
  if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return s;
}

// <tool_call><function=NAME><parameter=P>V</parameter>...</function></tool_call>
std::optional<std::vector<ToolCall>> parse_qwen3_coder(std::string_view body) {
  size_t pos = 0;
  std::optional<std::string_view> function = between(body, "<function=", "</function>", pos);
  if (!function) return std::nullopt;
  const size_t name_end = function->find('>');
  if (name_end == std::string_view::npos) return std::nullopt;
  const std::string_view name = trim(function->substr(0, name_end));
  const std::string_view params = function->substr(name_end + 1);
  ordered_json arguments = ordered_json::object();
  size_t p = 0;
  while (std::optional<std::string_view> param =
             between(params, "<parameter=", "</parameter>", p)) {
    const size_t key_end = param->find('>');
    if (key_end == std::string_view::npos) return std::nullopt;
    arguments[std::string(trim(param->substr(0, key_end)))] =
        loose_value(strip_newline(param->substr(key_end + 1)));
  }
  if (name.empty() || !trim(body.substr(pos)).empty()) return std::nullopt;
  return std::vector<ToolCall>{{std::string(name), dump_json(arguments)}};
}

// <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>
std::optional<std::vector<ToolCall>> parse_glm45(std::string_view body) {
  const size_t first_key = body.find("<arg_key>");
  const std::string_view name = trim(body.substr(0, first_key));
  if (name.empty() || name.find_first_of("<>\n") != std::string_view::npos) return std::nullopt;
  ordered_json arguments = ordered_json::object();
  size_t pos = first_key == std::string_view::npos ? body.size() : first_key;
  while (pos < body.size()) {
    std::optional<std::string_view> key = between(body, "<arg_key>", "</arg_key>", pos);
    std::optional<std::string_view> value = between(body, "<arg_value>", "</arg_value>", pos);
    if (!key || !value) return std::nullopt;
    arguments[std::string(trim(*key))] = loose_value(*value);
    if (trim(body.substr(pos)).empty()) break;
  }
  return std::vector<ToolCall>{{std::string(name), dump_json(arguments)}};
}

// <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜> (V3) or
// <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜> (V3.1), repeated.
std::optional<std::vector<ToolCall>> parse_deepseek_v3(std::string_view body) {
  constexpr std::string_view kSep = "<｜tool▁sep｜>";
  std::vector<ToolCall> calls;
  size_t pos = 0;
  while (std::optional<std::string_view> call =
             between(body, "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", pos)) {
    const size_t sep = call->find(kSep);
    if (sep == std::string_view::npos) return std::nullopt;
    std::string_view name = trim(call->substr(0, sep));
    std::string_view args = call->substr(sep + kSep.size());
    if (name == "function") {  // V3: the name, then the arguments in a ```json fence
      const size_t newline = args.find('\n');
      if (newline == std::string_view::npos) return std::nullopt;
      name = trim(args.substr(0, newline));
      args = trim(args.substr(newline + 1));
      if (!args.starts_with("```json") || !args.ends_with("```")) return std::nullopt;
      args = args.substr(7, args.size() - 10);
    }
    std::optional<ordered_json> arguments = parse_json(trim(args));
    if (name.empty() || !arguments || !arguments->is_object()) return std::nullopt;
    calls.push_back({std::string(name), dump_json(*arguments)});
  }
  if (calls.empty() || !trim(body.substr(pos)).empty()) return std::nullopt;
  return calls;
}

// {"name": ..., "parameters": {...}} objects, separated by ';' when there are several.
std::optional<std::vector<ToolCall>> parse_llama3_json(std::string_view body) {
  std::vector<ToolCall> calls;
  std::string_view rest = trim(body);
  while (!rest.empty()) {
    // The shortest prefix ending in '}' that is a whole call.
    std::optional<ToolCall> call;
    size_t end = 0;
    for (end = rest.find('}'); end != std::string_view::npos; end = rest.find('}', end + 1)) {
      if (std::optional<ordered_json> object = parse_json(rest.substr(0, end + 1))) {
        call = call_from_object(*object);
        break;
      }
    }
    if (!call) return std::nullopt;
    calls.push_back(*call);
    rest = trim(rest.substr(end + 1));
    if (!rest.empty()) {
      if (rest.front() != ';') return std::nullopt;
      rest = trim(rest.substr(1));
    }
  }
  if (calls.empty()) return std::nullopt;
  return calls;
}

}  // namespace

std::optional<ToolSyntax> tool_syntax(ToolFormat format) {
  switch (format) {
    case ToolFormat::kNone:
    case ToolFormat::kHarmony:
      return std::nullopt;
    case ToolFormat::kHermes:
      return ToolSyntax{"<tool_call>", "</tool_call>", false, parse_hermes};
    case ToolFormat::kQwen3Coder:
      return ToolSyntax{"<tool_call>", "</tool_call>", false, parse_qwen3_coder};
    case ToolFormat::kGlm45:
      return ToolSyntax{"<tool_call>", "</tool_call>", false, parse_glm45};
    case ToolFormat::kDeepSeekV3:
      return ToolSyntax{"<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", false, parse_deepseek_v3};
    case ToolFormat::kLlama3Json:
      return ToolSyntax{"<|python_tag|>", "", true, parse_llama3_json};
  }
  return std::nullopt;
}

}  // namespace hadron::server
