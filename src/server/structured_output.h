// Structured-output fields: OpenAI's response_format (json_object, json_schema), vLLM's
// structured_outputs {json, regex, choice, grammar, json_object} and its older guided_json,
// guided_regex, guided_choice and guided_grammar. At most one may constrain a request.
#pragma once

#include <memory>

#include "grammar/grammar_cache.h"
#include "server/output_parser.h"
#include "server/request_fields.h"

namespace hadron::server {

// The request's grammar, compiled (or found in `cache`); null when it asks for none.
// 400 naming the field for a bad or unsupported schema, regex or grammar, and when the
// server has no cache (no tokenizer).
std::shared_ptr<const grammar::TokenMasker> parse_structured_output(const Fields& fields,
                                                                    grammar::GrammarCache* cache);

// tool_choice "required" or {"type": "function", "function": {"name"}}: the output is one call
// in the model's tool syntax (hermes or llama3_json) whose arguments follow the tool's
// parameter schema. Null for auto, none or no tool_choice; 400 for other tool syntaxes.
std::shared_ptr<const grammar::TokenMasker> parse_tool_choice(const Fields& fields,
                                                              const Json& tools, ToolFormat format,
                                                              grammar::GrammarCache* cache);

}  // namespace hadron::server
