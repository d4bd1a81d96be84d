// JSON Schema -> grammar. The output is compact-or-spaced JSON whose properties come in the
// schema's order (required ones always, optional ones may be left out).
// Supported: type (and lists of types), properties, required, additionalProperties (absent
// means false, as OpenAI's strict mode and XGrammar do), items, prefixItems, minItems,
// maxItems, enum, const, $ref into the same document ($defs, definitions, "#"), anyOf,
// oneOf (as anyOf: exclusivity is not enforced), allOf of one schema, minLength, maxLength,
// pattern, format (date-time, date, time, uuid, email, ipv4), integer bounds.
// Anything else that constrains values is refused with a GrammarError naming the JSON
// pointer and the keyword.
#pragma once

#include <string_view>

#include "grammar/grammar.h"

namespace hadron::grammar {

// `schema_text`: the schema as JSON text (object key order is kept: it is the output order).
// The output is `prefix`, the JSON value, then `suffix` (a tool call's markers, say).
Grammar compile_json_schema(std::string_view schema_text, const GrammarLimits& limits = {},
                            std::string_view prefix = {}, std::string_view suffix = {});

// Any JSON object (response_format {"type": "json_object"}).
Grammar compile_any_json_object(const GrammarLimits& limits = {});

}  // namespace hadron::grammar
