// Small templates that each exercise one language feature, compared with the jinja2 reference
// at test time on one shared context.
#pragma once

#include <string>
#include <vector>

#include "reference_runner.h"

namespace hadron::chat::testing {

inline nlohmann::ordered_json snippet_context() {
  return nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Hi <there> & \"you\""},
      {"role": "assistant", "content": "Hello!", "reasoning_content": "greet"}
    ],
    "tools": [{"type": "function", "function": {"name": "f", "description": "d",
               "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}],
    "d": {"a": 1, "b": [1, 2], "items": "key-items", "z": null},
    "x": 5, "y": 5.0, "name": "Zoë", "n": null, "flag": true, "big": 12345678901234,
    "nested": {"k": {"v": [1, {"w": "deep"}]}},
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"
  })");
}

inline std::vector<RenderCase> snippet_cases(const std::string& group,
                                             const std::vector<std::string>& templates) {
  std::vector<RenderCase> cases;
  nlohmann::ordered_json ctx = snippet_context();
  for (size_t i = 0; i < templates.size(); ++i)
    cases.push_back(
        {group + " #" + std::to_string(i) + ": " + templates[i], group, templates[i], ctx});
  return cases;
}

}  // namespace hadron::chat::testing
