// Hugging Face chat templates: a Jinja interpreter that renders byte-identically to
// transformers' `render_jinja_template` (jinja2 ImmutableSandboxedEnvironment with
// trim_blocks, lstrip_blocks, loopcontrols, its `tojson`, `raise_exception`, `strftime_now`).
//
//   auto tmpl = ChatTemplate::parse(source);          // once per model
//   std::string prompt = tmpl.render(context);        // per request, thread-safe
//
// The context is a JSON object of template variables: messages, tools, add_generation_prompt,
// bos_token, eos_token, enable_thinking, ... Objects keep their key order (ordered_json),
// as Python dicts do, so `tojson` of a tool schema prints its keys in the request's order.
#pragma once

#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hadron::chat {

struct Stmt;

// Bounds that keep a hostile template from exhausting the server. Exceeding one is an
// InputError, like any other template error.
struct RenderLimits {
  size_t max_output_bytes = size_t{64} << 20;  // all text written, captured blocks included
  int64_t max_loop_iterations = 1'000'000;     // summed over all loops of one render
  int max_call_depth = 64;                     // nested macro calls
  int64_t max_macro_calls = 100'000;           // macro calls in one render
};

struct RenderOptions {
  RenderLimits limits;
  // The local time `strftime_now` formats; the clock when empty. Tests pin it.
  std::optional<std::tm> now;
};

class ChatTemplate {
 public:
  // Throws InputError ("template:LINE:COL: ...") when the source is not a valid template.
  static ChatTemplate parse(const std::string& source);

  // Throws InputError ("template:LINE:COL: ...") where jinja2 would raise: raise_exception(),
  // undefined attribute access, type errors, sandbox violations, exceeded limits.
  std::string render(const nlohmann::ordered_json& context,
                     const RenderOptions& options = {}) const;

 private:
  ChatTemplate() = default;  // only parse() makes one, so every instance holds a template

  std::shared_ptr<const std::vector<std::unique_ptr<Stmt>>> body_;
};

}  // namespace hadron::chat
