// libFuzzer: template text of any bytes is parsed and rendered against a fixed conversation;
// it must render or fail with InputError, within the render limits. Anything else (crash,
// sanitizer report, other exception, timeout) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "chat/template.h"
#include "core/error.h"

namespace {

const nlohmann::ordered_json& conversation() {
  static const nlohmann::ordered_json ctx = nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "You are helpful."},
      {"role": "user", "content": "Weather in Zürich? <b>&</b> \"q\" 'q' 😀"},
      {"role": "assistant", "content": "", "reasoning_content": "Use the tool.",
       "tool_calls": [{"id": "c1", "type": "function",
                       "function": {"name": "get_weather", "arguments": {"city": "Zürich", "days": 2}}}]},
      {"role": "tool", "tool_call_id": "c1", "name": "get_weather", "content": "{\"temp\": 3.5}"},
      {"role": "assistant", "content": "<think>\nok\n</think>\n\nCold: 3.5 °C."},
      {"role": "user", "content": [{"type": "text", "text": "thanks"}]}
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"},
        "days": {"type": "integer", "enum": [1, 2, 3]}}, "required": ["city"]}}}],
    "add_generation_prompt": true, "enable_thinking": false,
    "bos_token": "<s>", "eos_token": "</s>"
  })");
  return ctx;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  hadron::chat::RenderOptions options;
  options.limits.max_output_bytes = size_t{1} << 20;
  options.limits.max_loop_iterations = 20'000;
  options.limits.max_macro_calls = 2'000;
  options.now = std::tm{};
  try {
    const hadron::chat::ChatTemplate tmpl = hadron::chat::ChatTemplate::parse(source);
    const std::string out = tmpl.render(conversation(), options);
    if (out.size() > options.limits.max_output_bytes) __builtin_trap();
  } catch (const hadron::InputError&) {
  }
  return 0;
}
