// What the sandboxed environment offers templates: filters, tests, attribute and item access
// (with Python's str/dict/list methods), operators, and the global functions.
#pragma once

#include <ctime>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "chat/ast.h"
#include "chat/value.h"

namespace hadron::chat {

bool is_known_filter(std::string_view name);
bool is_known_test(std::string_view name);
Value apply_filter(const std::string& name, const Value& value, CallArgs& args);
bool apply_test(const std::string& name, const Value& value, CallArgs& args);

// jinja's sandboxed getattr (`x.name`) and getitem (`x[key]`).
Value get_attribute(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);
// obj[start:stop:step]; null pointers are omitted bounds.
Value get_slice(const Value& obj, const Value* start, const Value* stop, const Value* step);

// max_bytes bounds the strings and lists an operator may build (e.g. "x" * 10**9).
Value binary_op(BinaryOp op, const Value& a, const Value& b, size_t max_bytes);
Value negate(const Value& v);
// Python `item in container`.
bool contains(const Value& container, const Value& item);
// The items a for loop or a filter iterates: list items, dict keys, string characters.
std::vector<Value> iterate(const Value& v);

// Python str.format and printf-style `%` on strings, as far as templates use them.
std::string python_format(const std::string& format, const CallArgs& args);
std::string printf_format(const std::string& format, const Value& args);

// range, dict, namespace, cycler, joiner, raise_exception, strftime_now.
// `now`: a fixed local time for strftime_now; the clock when empty.
void add_globals(DictData& globals, std::optional<std::tm> now);

// Binds call arguments by position or keyword, as a Python signature would.
class ArgReader {
 public:
  ArgReader(const CallArgs& args, std::string_view function,
            std::initializer_list<std::string_view> names);
  // The argument at position `idx` of the signature, or null when not passed.
  const Value* get(size_t idx) const;
  Value get_or(size_t idx, Value fallback) const;

 private:
  const CallArgs& args_;
  std::vector<std::string_view> names_;
};

}  // namespace hadron::chat
