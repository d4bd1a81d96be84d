// Joining JSON Schemas before they are compiled: allOf merged into one schema, and the
// siblings of anyOf, oneOf or $ref joined into each member.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace hadron::grammar {

using SchemaJson = nlohmann::ordered_json;

// Keywords that only annotate ($schema, title, description, x-*, ...).
bool is_annotation(const std::string& key);

// allOf as one schema: its members' keywords (and the siblings') joined when no keyword
// appears twice, save disjoint 'properties' and 'required' lists; the result demands what
// each member demands because every keyword merged here constrains independently (those
// that interact across members, such as additionalProperties or items, are refused).
// GrammarError naming `loc` otherwise.
SchemaJson merge_all_of(const SchemaJson& s, const std::string& loc);

// `member` joined with the siblings of `keyword` in `s` (as allOf joins them); `member`
// itself when `keyword` has none.
SchemaJson with_siblings(const SchemaJson& s, const std::string& keyword, const SchemaJson& member,
                         const std::string& loc);

}  // namespace hadron::grammar
