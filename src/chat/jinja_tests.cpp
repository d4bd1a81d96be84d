// jinja2's tests (`x is defined`, `x is string`, ...).
#include <algorithm>
#include <array>
#include <map>

#include "chat/builtins.h"
#include "chat/methods.h"
#include "core/error.h"

namespace hadron::chat {
namespace {

using TestFn = bool (*)(const Value& v, const ArgReader& args);

const Value& arg(const ArgReader& args, std::string_view test) {
  const Value* v = args.get(0);
  if (!v) input_error("TypeError: test '{}' needs an argument", test);
  return *v;
}

bool divisible_by(const Value& v, const ArgReader& a) {
  const Value& n = arg(a, "divisibleby");
  Value rem = binary_op(BinaryOp::mod, v, n, SIZE_MAX);
  return equals(rem, Value(int64_t{0}));
}

bool is_lower(const Value& v) { return v.is_string() && py_lower(v.as_string()) == v.as_string(); }
bool is_upper(const Value& v) { return v.is_string() && py_upper(v.as_string()) == v.as_string(); }

const std::map<std::string_view, TestFn>& test_table() {
  static const std::map<std::string_view, TestFn> table = {
      {"defined", [](const Value& v, const ArgReader&) { return !v.is_undefined(); }},
      {"undefined", [](const Value& v, const ArgReader&) { return v.is_undefined(); }},
      {"none", [](const Value& v, const ArgReader&) { return v.is_none(); }},
      {"boolean", [](const Value& v, const ArgReader&) { return v.is_bool(); }},
      {"true", [](const Value& v, const ArgReader&) { return v.is_bool() && v.as_bool(); }},
      {"false", [](const Value& v, const ArgReader&) { return v.is_bool() && !v.as_bool(); }},
      {"integer", [](const Value& v, const ArgReader&) { return v.is_int(); }},
      {"float", [](const Value& v, const ArgReader&) { return v.is_float(); }},
      {"number", [](const Value& v, const ArgReader&) { return v.is_number(); }},
      {"string", [](const Value& v, const ArgReader&) { return v.is_string(); }},
      {"mapping", [](const Value& v, const ArgReader&) { return v.is_dict(); }},
      {"iterable",
       [](const Value& v, const ArgReader&) {
         return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict();
       }},
      {"sequence",
       [](const Value& v, const ArgReader&) {
         return v.is_undefined() || v.is_string() || v.is_dict() ||
                (v.is_list() && v.as_list().is_sequence());
       }},
      {"callable", [](const Value& v, const ArgReader&) { return v.is_function(); }},
      {"escaped", [](const Value&, const ArgReader&) { return false; }},
      {"odd",
       [](const Value& v, const ArgReader&) {
         return !equals(binary_op(BinaryOp::mod, v, Value(int64_t{2}), SIZE_MAX),
                        Value(int64_t{0}));
       }},
      {"even",
       [](const Value& v, const ArgReader&) {
         return equals(binary_op(BinaryOp::mod, v, Value(int64_t{2}), SIZE_MAX), Value(int64_t{0}));
       }},
      {"divisibleby", divisible_by},
      {"lower", [](const Value& v, const ArgReader&) { return is_lower(v); }},
      {"upper", [](const Value& v, const ArgReader&) { return is_upper(v); }},
      {"in", [](const Value& v, const ArgReader& a) { return contains(arg(a, "in"), v); }},
      {"sameas",
       [](const Value& v, const ArgReader& a) {
         const Value& o = arg(a, "sameas");
         return (v.is_none() && o.is_none()) ||
                (v.is_bool() && o.is_bool() && v.as_bool() == o.as_bool());
       }},
      {"filter", [](const Value& v,
                    const ArgReader&) { return v.is_string() && is_known_filter(v.as_string()); }},
      {"test", [](const Value& v,
                  const ArgReader&) { return v.is_string() && is_known_test(v.as_string()); }},
      {"eq", [](const Value& v, const ArgReader& a) { return equals(v, arg(a, "eq")); }},
      {"ne", [](const Value& v, const ArgReader& a) { return !equals(v, arg(a, "ne")); }},
      {"lt", [](const Value& v, const ArgReader& a) { return compare(v, arg(a, "lt")) < 0; }},
      {"le", [](const Value& v, const ArgReader& a) { return compare(v, arg(a, "le")) <= 0; }},
      {"gt", [](const Value& v, const ArgReader& a) { return compare(v, arg(a, "gt")) > 0; }},
      {"ge", [](const Value& v, const ArgReader& a) { return compare(v, arg(a, "ge")) >= 0; }},
  };
  return table;
}

// jinja's aliases for the comparison tests.
std::string_view canonical(std::string_view name) {
  static const std::map<std::string_view, std::string_view> aliases = {
      {"==", "eq"}, {"equalto", "eq"}, {"!=", "ne"},          {"<", "lt"}, {"lessthan", "lt"},
      {"<=", "le"}, {">", "gt"},       {"greaterthan", "gt"}, {">=", "ge"}};
  auto it = aliases.find(name);
  return it == aliases.end() ? name : it->second;
}

}  // namespace

bool is_known_test(std::string_view name) { return test_table().count(canonical(name)) > 0; }

bool apply_test(const std::string& name, const Value& value, CallArgs& args) {
  auto it = test_table().find(canonical(name));
  if (it == test_table().end())
    input_error("TemplateRuntimeError: No test named '{}' found.", name);
  std::string_view n = it->first;
  bool one_arg = n == "in" || n == "sameas" || n == "divisibleby" || n == "eq" || n == "ne" ||
                 n == "lt" || n == "le" || n == "gt" || n == "ge";
  ArgReader reader(args, name,
                   one_arg ? std::initializer_list<std::string_view>{"other"}
                           : std::initializer_list<std::string_view>{});
  if ((n == "lt" || n == "le" || n == "gt" || n == "ge") && value.is_undefined())
    fail_undefined(value);
  return it->second(value, reader);
}

}  // namespace hadron::chat
