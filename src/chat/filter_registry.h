// The filter table, filled by filters.cpp (text and numbers) and filters_seq.cpp (sequences).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "chat/value.h"

namespace hadron::chat {

using FilterFn = Value (*)(const Value& value, CallArgs& args);
using FilterTable = std::map<std::string_view, FilterFn>;

void register_text_filters(FilterTable& table);
void register_sequence_filters(FilterTable& table);

// jinja's make_attrgetter: "a.b.0" looks up a, then b, then item 0.
Value attribute_path(const Value& v, const Value& path);
// jinja's soft_str: str() of the value, Undefined printing empty.
inline std::string soft_str(const Value& v) { return to_str(v); }

}  // namespace hadron::chat
