#include "grammar/json_schema_merge.h"

#include <set>

#include "grammar/grammar_error.h"

namespace hadron::grammar {

namespace {

const std::set<std::string> kAnnotations = {"$schema",     "$id",       "$comment", "title",
                                            "description", "default",   "examples", "deprecated",
                                            "readOnly",    "writeOnly", "$defs",    "definitions"};

}  // namespace

bool is_annotation(const std::string& key) {
  return kAnnotations.contains(key) || key.starts_with("x-");
}

SchemaJson merge_all_of(const SchemaJson& s, const std::string& loc) {
  const std::string at = loc + "/allOf";
  const SchemaJson& list = s["allOf"];
  if (!list.is_array() || list.empty()) grammar_error(at, "'allOf' must be a non-empty array");
  SchemaJson members = SchemaJson::array();
  SchemaJson base = s;
  base.erase("allOf");
  members.push_back(base);
  for (const SchemaJson& m : list) members.push_back(m);
  SchemaJson merged = SchemaJson::object();
  for (const SchemaJson& m : members) {
    if (m == SchemaJson(false)) return SchemaJson(false);
    if (m == SchemaJson(true)) continue;
    if (!m.is_object()) grammar_error(at, "a schema must be an object or a boolean");
    for (const auto& [key, value] : m.items()) {
      if (is_annotation(key)) continue;
      for (const char* joint : {"additionalProperties", "$ref", "additionalItems", "items"})
        if (key == joint) grammar_error(at, "'{}' inside 'allOf' is not supported", key);
      if (key == "required" && merged.contains(key)) {
        for (const SchemaJson& name : value) merged[key].push_back(name);
      } else if (key == "properties" && merged.contains(key)) {
        for (const auto& [name, sub] : value.items()) {
          if (merged[key].contains(name))
            grammar_error(at, "property '{}' in more than one 'allOf' member is not supported",
                          name);
          merged[key][name] = sub;
        }
      } else if (merged.contains(key)) {
        grammar_error(at, "'{}' in more than one 'allOf' member is not supported", key);
      } else {
        merged[key] = value;
      }
    }
  }
  return merged;
}

SchemaJson with_siblings(const SchemaJson& s, const std::string& keyword, const SchemaJson& member,
                         const std::string& loc) {
  bool alone = true;
  for (const auto& [key, value] : s.items()) alone &= key == keyword || is_annotation(key);
  if (alone) return member;
  SchemaJson joined = s;
  joined.erase(keyword);
  joined["allOf"] = SchemaJson::array({member});
  return merge_all_of(joined, loc);
}

}  // namespace hadron::grammar
