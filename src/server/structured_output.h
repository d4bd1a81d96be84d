// Structured-output fields: OpenAI's response_format (json_object, json_schema), vLLM's
// structured_outputs {json, regex, choice, grammar, json_object} and its older guided_json,
// guided_regex, guided_choice and guided_grammar. At most one may constrain a request.
#pragma once

#include <memory>

#include "grammar/grammar_cache.h"
#include "server/request_fields.h"

namespace hadron::server {

// The request's grammar, compiled (or found in `cache`); null when it asks for none.
// 400 naming the field for a bad or unsupported schema, regex or grammar, and when the
// server has no cache (no tokenizer).
std::shared_ptr<const grammar::TokenMasker> parse_structured_output(const Fields& fields,
                                                                    grammar::GrammarCache* cache);

}  // namespace hadron::server
