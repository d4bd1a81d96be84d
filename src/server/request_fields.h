// Reading a JSON request body under limits: parse with a nesting bound, then typed access to
// fields where a wrong type is a 422 and a bad value a 400, each naming the field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace hadron::server {

using Json = nlohmann::ordered_json;

// Bounds on what one request may ask for (all enforced before any work is queued).
struct RequestLimits {
  size_t max_body_bytes = size_t{32} << 20;
  int max_json_depth = 64;
  int max_n = 16;
  size_t max_messages = 4096;
  size_t max_prompts = 256;      // prompts in one /v1/completions request
  size_t max_stop = 16;          // stop strings
  size_t max_stop_bytes = 1024;  // each
  size_t max_stop_token_ids = 64;
  size_t max_logit_bias = 1024;  // entries
  int max_logprobs = 20;
};

// The body as JSON; 400 on malformed JSON, invalid UTF-8 or nesting deeper than the limit,
// 422 when it is not an object.
Json parse_body(std::string_view body, const RequestLimits& limits);

// JSON text whose invalid UTF-8 (a model's own bytes in tool-call arguments, say) becomes
// U+FFFD instead of an exception: for responses, and for any text built from model output.
std::string dump_json(const Json& value);

class Fields {
 public:
  // `path` names the object in messages, e.g. "messages[2]"; empty at the top level.
  explicit Fields(const Json& object, std::string path = {});

  // The field, or nullptr when it is absent or null.
  const Json* get(std::string_view name) const;
  const Json& required(std::string_view name) const;  // 422 when absent
  std::optional<double> number(std::string_view name) const;
  std::optional<int64_t> integer(std::string_view name) const;
  std::optional<bool> boolean(std::string_view name) const;
  std::optional<std::string> string(std::string_view name) const;

  std::string param(std::string_view name) const;
  [[noreturn]] void wrong_type(std::string_view name, std::string_view expected) const;

 private:
  const Json& object_;
  std::string path_;
};

// 400 unless lo <= value <= hi.
void check_range(const std::string& param, double value, double lo, double hi);

}  // namespace hadron::server
