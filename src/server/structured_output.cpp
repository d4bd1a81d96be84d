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

std::shared_ptr<const grammar::TokenMasker> compile_source(const Source& source,
                                                           grammar::GrammarCache* cache) {
  if (cache == nullptr) bad_request(source.param, "structured output needs the model's tokenizer");
  try {
    return cache->get(source.kind, source.text);
  } catch (const grammar::GrammarError& e) {
    bad_request(source.param, "'{}' cannot be used: {}", source.param, e.what());
  }
}

// {"name": <the tool's name>, <arguments_key>: <its parameters>} for one offered tool.
Json call_schema(const Json& tool, const char* arguments_key) {
  const Json& function = tool["function"];
  Json parameters = function.contains("parameters")
                        ? function["parameters"]
                        : Json{{"type", "object"}, {"properties", Json::object()}};
  return Json{
      {"type", "object"},
      {"properties", {{"name", {{"const", function["name"]}}}, {arguments_key, parameters}}},
      {"required", {"name", arguments_key}},
      {"additionalProperties", false}};
}

}  // namespace

std::shared_ptr<const grammar::TokenMasker> parse_tool_choice(const Fields& f, const Json& tools,
                                                              ToolFormat format,
                                                              grammar::GrammarCache* cache) {
  const Json* choice = f.get("tool_choice");
  if (choice == nullptr || *choice == "auto" || *choice == "none") return nullptr;
  if (tools.is_null() || tools.empty()) bad_request("tool_choice", "tool_choice needs tools");
  std::vector<Json> calls;
  if (*choice == "required") {
    for (const Json& tool : tools) calls.push_back(tool);
  } else if (choice->is_object() && choice->contains("function") &&
             (*choice)["function"].is_object() && (*choice)["function"].contains("name")) {
    const Json& name = (*choice)["function"]["name"];
    for (const Json& tool : tools)
      if (tool["function"]["name"] == name) calls.push_back(tool);
    if (calls.empty()) bad_request("tool_choice", "no offered tool is named {}", name.dump());
  } else {
    bad_request("tool_choice",
                "tool_choice must be auto, none, required or a named function "
                "({{\"type\": \"function\", \"function\": {{\"name\": ...}}}})");
  }
  // The syntax the output parser reads back into tool_calls.
  const char* arguments_key = "arguments";
  std::string prefix, suffix;
  switch (format) {
    case ToolFormat::kHermes:
      prefix = "<tool_call>\n";
      suffix = "\n</tool_call>";
      break;
    case ToolFormat::kLlama3Json:
      arguments_key = "parameters";
      break;
    case ToolFormat::kNone:
    case ToolFormat::kQwen3Coder:
    case ToolFormat::kGlm45:
    case ToolFormat::kDeepSeekV3:
    case ToolFormat::kHarmony:
      bad_request("tool_choice",
                  "tool_choice 'required' or a named function is supported for the hermes and "
                  "llama3_json tool-call formats; this model's is {}",
                  tool_format_name(format));
  }
  Json options = Json::array();
  for (const Json& tool : calls) options.push_back(call_schema(tool, arguments_key));
  const Json schema = options.size() == 1 ? options[0] : Json{{"anyOf", options}};
  const Json spec = {{"prefix", prefix}, {"schema", schema}, {"suffix", suffix}};
  return compile_source({GrammarKind::kWrappedJson, spec.dump(), "tool_choice"}, cache);
}

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
