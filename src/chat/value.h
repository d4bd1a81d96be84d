// Values of the template language: Python's data model as jinja2 sees it (None, bool, int,
// float, str, list, tuple, dict, jinja's Undefined and Namespace, callables).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace hadron::chat {

class Value;

// jinja2's default Undefined: prints empty, is falsy, iterates empty, fails on most other uses.
// `unsafe` marks the sandbox's "access to attribute ... is unsafe" value (fails when called).
struct Undefined {
  std::string message;
  bool unsafe = false;
};

struct NoneValue {};

// Python's iterables: lists and tuples, the generators jinja's map/select/... filters return,
// and dict views. Only lists and tuples can be indexed, measured... as in Python.
enum class SeqKind { list, tuple, generator, dict_items, dict_keys, dict_values };

struct ListData {
  std::vector<Value> items;
  SeqKind kind = SeqKind::list;

  bool is_tuple() const { return kind == SeqKind::tuple; }
  // list or tuple: subscriptable, sliceable, comparable.
  bool is_sequence() const { return kind == SeqKind::list || kind == SeqKind::tuple; }
};

// A Python dict: insertion-ordered, keys compared with Python equality.
struct DictData {
  std::vector<std::pair<Value, Value>> entries;

  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  // Inserts or replaces (keeps the first insertion position, as Python does).
  void set(Value key, Value value);
};

// jinja2's namespace(): the one mutable object, its attributes assigned by `{% set ns.x = %}`.
struct NamespaceData {
  std::vector<std::pair<std::string, Value>> attrs;

  const Value* find(std::string_view name) const;
  void set(const std::string& name, Value value);
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> named;
};

// Builtins, macros and bound methods. `call` may throw InputError.
struct FunctionData {
  std::string name;
  std::function<Value(CallArgs&)> call;
};

enum class ValueKind {
  undefined,
  none,
  boolean,
  integer,
  floating,
  string,
  list,  // list, tuple, generator or dict view (see SeqKind)
  dict,
  namespace_object,
  function,
};

class Value {
 public:
  Value() : data_(Undefined{}) {}
  Value(bool b) : data_(b) {}
  Value(int64_t i) : data_(i) {}
  Value(int i) : data_(int64_t{i}) {}
  Value(size_t i) : data_(static_cast<int64_t>(i)) {}
  Value(double d) : data_(d) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(std::string_view s) : data_(std::string(s)) {}
  Value(const char* s) : data_(std::string(s)) {}

  static Value undefined(std::string message, bool unsafe = false);
  static Value none() { return Value(NoneValue{}); }
  static Value list(std::vector<Value> items, bool is_tuple = false);
  static Value sequence(std::vector<Value> items, SeqKind kind);
  static Value dict(DictData dict);
  static Value new_namespace(NamespaceData ns);
  static Value function(std::string name, std::function<Value(CallArgs&)> call);

  ValueKind kind() const;
  bool is_undefined() const { return kind() == ValueKind::undefined; }
  bool is_none() const { return kind() == ValueKind::none; }
  bool is_string() const { return kind() == ValueKind::string; }
  bool is_list() const { return kind() == ValueKind::list; }
  bool is_dict() const { return kind() == ValueKind::dict; }
  bool is_bool() const { return kind() == ValueKind::boolean; }
  bool is_int() const { return kind() == ValueKind::integer; }
  bool is_float() const { return kind() == ValueKind::floating; }
  bool is_function() const { return kind() == ValueKind::function; }
  bool is_namespace() const { return kind() == ValueKind::namespace_object; }
  // int, float or bool (Python's numbers.Number).
  bool is_number() const;

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return std::get<int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  // int or bool as int64, float as double: the numeric value.
  int64_t int_value() const;
  double float_value() const;
  const std::string& as_string() const { return std::get<std::string>(data_); }
  const ListData& as_list() const { return *std::get<std::shared_ptr<const ListData>>(data_); }
  const DictData& as_dict() const { return *std::get<std::shared_ptr<const DictData>>(data_); }
  NamespaceData& as_namespace() const { return *std::get<std::shared_ptr<NamespaceData>>(data_); }
  const FunctionData& as_function() const {
    return *std::get<std::shared_ptr<const FunctionData>>(data_);
  }
  const Undefined& as_undefined() const { return std::get<Undefined>(data_); }
  // The list's items (list or tuple).
  const std::vector<Value>& items() const { return as_list().items; }

 private:
  explicit Value(NoneValue n) : data_(n) {}

  std::variant<Undefined, NoneValue, bool, int64_t, double, std::string,
               std::shared_ptr<const ListData>, std::shared_ptr<const DictData>,
               std::shared_ptr<NamespaceData>, std::shared_ptr<const FunctionData>>
      data_;
};

// Python truthiness.
bool truthy(const Value& v);
// Python ==, with 1 == 1.0 == True and jinja's Undefined == Undefined.
bool equals(const Value& a, const Value& b);
// Python <: -1, 0, 1; throws InputError for unorderable types.
int compare(const Value& a, const Value& b);
// Python's type name: 'str', 'int', 'dict', ...
std::string type_name(const Value& v);
// jinja's object_type_repr: 'dict object', 'None', ...
std::string object_type_repr(const Value& v);
// Python str() (Undefined prints empty, as jinja's default Undefined).
std::string to_str(const Value& v);
// Python repr().
std::string repr(const Value& v);
// Python's repr of a float (shortest round-trip, '1.0', '1e-05', 'inf').
std::string float_repr(double d);
// Throws the error an Undefined raises when it is used (UndefinedError or SecurityError).
[[noreturn]] void fail_undefined(const Value& v);

}  // namespace hadron::chat
