#include "server/structured_output.h"

#include <optional>
#include <vector>

#include "grammar/grammar_error.h"
#include "server/api_error.h"

namespace hadron::server {
namespace {

using grammar::GrammarKind;

struct Source {
  GrammarKind kind;
  std::string text;
  std::string param;  // the field it came from
};

// A schema given as an object, or as JSON text (vLLM accepts both).
Source schema_source(const Json& value, const std::string& param) {
  if (value.is_string()) return {GrammarKind::kJsonSchema, value.get<std::string>(), param};
  if (value.is_object() || value.is_boolean())
    return {GrammarKind::kJsonSchema, value.dump(), param};
  throw ApiError(422, fmt::format("'{}' must be a JSON Schema object", param), param,
                 "invalid_type");
}

std::string string_of(const Json& value, const std::string& param) {
  if (!value.is_string())
    throw ApiError(422, fmt::format("'{}' must be a string", param), param, "invalid_type");
  return value.get<std::string>();
}

Source choice_source(const Json& value, const std::string& param) {
  if (!value.is_array() || value.empty())
    bad_request(param, "'{}' must be a non-empty array of strings", param);
  for (const Json& item : value)
    if (!item.is_string()) bad_request(param, "'{}' must be a non-empty array of strings", param);
  return {GrammarKind::kChoice, value.dump(), param};
}

std::optional<Source> response_format(const Fields& f) {
  const Json* format = f.get("response_format");
  if (format == nullptr) return std::nullopt;
  const Json* type = format->is_object() ? &(*format)["type"] : nullptr;
  if (type == nullptr || !type->is_string()) f.wrong_type("response_format", "{\"type\": ...}");
  if (*type == "text") return std::nullopt;
  if (*type == "json_object") return Source{GrammarKind::kJsonObject, "", "response_format"};
  if (*type != "json_schema")
    bad_request("response_format",
                "response_format type '{}' is not one of text, json_object, "
                "json_schema",
                type->get<std::string>());
  const Json* spec = format->contains("json_schema") ? &(*format)["json_schema"] : nullptr;
  if (spec == nullptr || !spec->is_object() || !spec->contains("schema"))
    bad_request("response_format.json_schema.schema",
                "response_format json_schema needs json_schema.schema");
  return schema_source((*spec)["schema"], "response_format.json_schema.schema");
}

// vLLM's structured_outputs object (json, regex, choice, grammar, json_object).
std::vector<Source> structured_outputs(const Fields& f) {
  std::vector<Source> out;
  const Json* so = f.get("structured_outputs");
  if (so == nullptr) return out;
  if (!so->is_object()) f.wrong_type("structured_outputs", "an object");
  const Fields inner(*so, "structured_outputs");
  if (const Json* v = inner.get("json")) out.push_back(schema_source(*v, inner.param("json")));
  if (const Json* v = inner.get("regex"))
    out.push_back({GrammarKind::kRegex, string_of(*v, inner.param("regex")), inner.param("regex")});
  if (const Json* v = inner.get("choice")) out.push_back(choice_source(*v, inner.param("choice")));
  if (const Json* v = inner.get("grammar"))
    out.push_back(
        {GrammarKind::kGbnf, string_of(*v, inner.param("grammar")), inner.param("grammar")});
  if (inner.boolean("json_object").value_or(false))
    out.push_back({GrammarKind::kJsonObject, "", inner.param("json_object")});
  return out;
}

std::vector<Source> guided_fields(const Fields& f) {
  std::vector<Source> out;
  if (const Json* v = f.get("guided_json")) out.push_back(schema_source(*v, "guided_json"));
  if (const Json* v = f.get("guided_regex"))
    out.push_back({GrammarKind::kRegex, string_of(*v, "guided_regex"), "guided_regex"});
  if (const Json* v = f.get("guided_choice")) out.push_back(choice_source(*v, "guided_choice"));
  if (const Json* v = f.get("guided_grammar"))
    out.push_back({GrammarKind::kGbnf, string_of(*v, "guided_grammar"), "guided_grammar"});
  return out;
}

}  // namespace

std::shared_ptr<const grammar::TokenMasker> parse_structured_output(const Fields& f,
                                                                    grammar::GrammarCache* cache) {
  std::vector<Source> sources = structured_outputs(f);
  for (Source& s : guided_fields(f)) sources.push_back(std::move(s));
  if (std::optional<Source> s = response_format(f)) sources.push_back(std::move(*s));
  if (sources.empty()) return nullptr;
  if (sources.size() > 1)
    bad_request(sources[1].param, "'{}' and '{}' both constrain the output; give one",
                sources[0].param, sources[1].param);
  const Source& source = sources[0];
  if (cache == nullptr) bad_request(source.param, "structured output needs the model's tokenizer");
  try {
    return cache->get(source.kind, source.text);
  } catch (const grammar::GrammarError& e) {
    bad_request(source.param, "'{}' cannot be used: {}", source.param, e.what());
  }
}

}  // namespace hadron::server
