#include "chat/value.h"

#include <charconv>
#include <cmath>

#include "core/error.h"

namespace hadron::chat {

Value Value::undefined(std::string message, bool unsafe) {
  Value v;
  v.data_ = Undefined{std::move(message), unsafe};
  return v;
}

Value Value::list(std::vector<Value> items, bool is_tuple) {
  Value v;
  v.data_ = std::make_shared<const ListData>(
      ListData{std::move(items), is_tuple ? SeqKind::tuple : SeqKind::list});
  return v;
}

Value Value::sequence(std::vector<Value> items, SeqKind kind) {
  Value v;
  v.data_ = std::make_shared<const ListData>(ListData{std::move(items), kind});
  return v;
}

Value Value::dict(DictData dict) {
  Value v;
  v.data_ = std::make_shared<const DictData>(std::move(dict));
  return v;
}

Value Value::new_namespace(NamespaceData ns) {
  Value v;
  v.data_ = std::make_shared<NamespaceData>(std::move(ns));
  return v;
}

Value Value::function(std::string name, std::function<Value(CallArgs&)> call) {
  Value v;
  v.data_ = std::make_shared<const FunctionData>(FunctionData{std::move(name), std::move(call)});
  return v;
}

ValueKind Value::kind() const {
  constexpr ValueKind kinds[] = {
      ValueKind::undefined,        ValueKind::none,    ValueKind::boolean, ValueKind::integer,
      ValueKind::floating,         ValueKind::string,  ValueKind::list,    ValueKind::dict,
      ValueKind::namespace_object, ValueKind::function};
  return kinds[data_.index()];
}

bool Value::is_number() const {
  auto k = kind();
  return k == ValueKind::integer || k == ValueKind::floating || k == ValueKind::boolean;
}

int64_t Value::int_value() const { return is_bool() ? int64_t{as_bool()} : as_int(); }

double Value::float_value() const {
  return is_float() ? as_float() : static_cast<double>(int_value());
}

const Value* DictData::find(const Value& key) const {
  for (const auto& [k, v] : entries)
    if (equals(k, key)) return &v;
  return nullptr;
}

const Value* DictData::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k.is_string() && k.as_string() == key) return &v;
  return nullptr;
}

void DictData::set(Value key, Value value) {
  for (auto& [k, v] : entries) {
    if (equals(k, key)) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

const Value* NamespaceData::find(std::string_view name) const {
  for (const auto& [k, v] : attrs)
    if (k == name) return &v;
  return nullptr;
}

void NamespaceData::set(const std::string& name, Value value) {
  for (auto& [k, v] : attrs) {
    if (k == name) {
      v = std::move(value);
      return;
    }
  }
  attrs.emplace_back(name, std::move(value));
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case ValueKind::undefined:
      return false;
    case ValueKind::none:
      return false;
    case ValueKind::boolean:
      return v.as_bool();
    case ValueKind::integer:
      return v.as_int() != 0;
    case ValueKind::floating:
      return v.as_float() != 0.0;
    case ValueKind::string:
      return !v.as_string().empty();
    case ValueKind::list:
      return v.as_list().kind == SeqKind::generator || !v.items().empty();
    case ValueKind::dict:
      return !v.as_dict().entries.empty();
    case ValueKind::namespace_object:
      return true;
    case ValueKind::function:
      return true;
  }
  return false;
}

static bool dicts_equal(const DictData& a, const DictData& b) {
  if (a.entries.size() != b.entries.size()) return false;
  for (const auto& [k, v] : a.entries) {
    const Value* other = b.find(k);
    if (!other || !equals(v, *other)) return false;
  }
  return true;
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.float_value() == b.float_value();
    return a.int_value() == b.int_value();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::undefined:
      return true;
    case ValueKind::none:
      return true;
    case ValueKind::string:
      return a.as_string() == b.as_string();
    case ValueKind::list: {
      const auto &x = a.as_list(), &y = b.as_list();
      if (&x == &y) return true;
      if (!x.is_sequence() || x.kind != y.kind || x.items.size() != y.items.size()) return false;
      for (size_t i = 0; i < x.items.size(); ++i)
        if (!equals(x.items[i], y.items[i])) return false;
      return true;
    }
    case ValueKind::dict:
      return dicts_equal(a.as_dict(), b.as_dict());
    case ValueKind::namespace_object:
      return &a.as_namespace() == &b.as_namespace();
    case ValueKind::function:
      return &a.as_function() == &b.as_function();
    case ValueKind::boolean:
    case ValueKind::integer:
    case ValueKind::floating:
      return false;  // handled above
  }
  return false;
}

int compare(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) {
      double x = a.float_value(), y = b.float_value();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    int64_t x = a.int_value(), y = b.int_value();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_list() && b.is_list() && a.as_list().is_sequence() &&
      a.as_list().kind == b.as_list().kind) {
    const auto &x = a.items(), &y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equals(x[i], y[i])) continue;
      return compare(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  input_error("'<' not supported between instances of '{}' and '{}'", type_name(a), type_name(b));
}

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case ValueKind::undefined:
      return "Undefined";
    case ValueKind::none:
      return "NoneType";
    case ValueKind::boolean:
      return "bool";
    case ValueKind::integer:
      return "int";
    case ValueKind::floating:
      return "float";
    case ValueKind::string:
      return "str";
    case ValueKind::list:
      switch (v.as_list().kind) {
        case SeqKind::list:
          return "list";
        case SeqKind::tuple:
          return "tuple";
        case SeqKind::generator:
          return "generator";
        case SeqKind::dict_items:
          return "dict_items";
        case SeqKind::dict_keys:
          return "dict_keys";
        case SeqKind::dict_values:
          return "dict_values";
      }
      return "list";
    case ValueKind::dict:
      return "dict";
    case ValueKind::namespace_object:
      return "Namespace";
    case ValueKind::function:
      return "function";
  }
  return "object";
}

std::string object_type_repr(const Value& v) {
  if (v.is_none()) return "None";
  return type_name(v) + " object";
}

[[noreturn]] void fail_undefined(const Value& v) {
  const Undefined& u = v.as_undefined();
  if (u.unsafe) input_error("SecurityError: {}", u.message);
  input_error("UndefinedError: {}", u.message);
}

}  // namespace hadron::chat
