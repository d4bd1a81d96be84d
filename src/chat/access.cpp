// jinja2's sandboxed attribute and item access, and argument binding for builtins.
#include "chat/builtins.h"
#include "chat/methods.h"
#include "core/error.h"
#include "core/utf8.h"

namespace hadron::chat {

static Value no_attribute(const Value& obj, const std::string& name) {
  return Value::undefined(fmt::format("'{}' has no attribute '{}'", object_type_repr(obj), name));
}

Value get_attribute(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case ValueKind::undefined:
      fail_undefined(obj);
    case ValueKind::dict: {
      if (auto method = find_method(obj, name)) return *method;
      if (const Value* v = obj.as_dict().find(std::string_view(name))) return *v;
      return no_attribute(obj, name);
    }
    case ValueKind::namespace_object: {
      if (const Value* v = obj.as_namespace().find(name)) return *v;
      return no_attribute(obj, name);
    }
    case ValueKind::string:
    case ValueKind::list:
      if (auto method = find_method(obj, name)) return *method;
      return no_attribute(obj, name);
    case ValueKind::none:
    case ValueKind::boolean:
    case ValueKind::integer:
    case ValueKind::floating:
    case ValueKind::function:
      return no_attribute(obj, name);
  }
  return no_attribute(obj, name);
}

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) fail_undefined(obj);
  bool int_key = key.is_int() || key.is_bool();
  if (obj.is_list() && obj.as_list().is_sequence() && int_key) {
    const auto& items = obj.items();
    int64_t idx = key.int_value();
    if (idx < 0) idx += static_cast<int64_t>(items.size());
    if (idx >= 0 && idx < static_cast<int64_t>(items.size()))
      return items[static_cast<size_t>(idx)];
  } else if (obj.is_string() && int_key) {
    std::u32string chars = utf8_decode(obj.as_string());
    int64_t idx = key.int_value();
    if (idx < 0) idx += static_cast<int64_t>(chars.size());
    if (idx >= 0 && idx < static_cast<int64_t>(chars.size()))
      return Value(utf8_encode(chars.substr(static_cast<size_t>(idx), 1)));
  } else if (obj.is_dict()) {
    if (const Value* v = obj.as_dict().find(key)) return *v;
  }
  if (key.is_string() && !obj.is_dict()) {
    Value attr = get_attribute(obj, key.as_string());
    if (!attr.is_undefined() || attr.as_undefined().unsafe) return attr;
  } else if (key.is_string()) {
    if (auto method = find_method(obj, key.as_string())) return *method;
  }
  if (key.is_string())
    return Value::undefined(
        fmt::format("'{}' has no attribute '{}'", object_type_repr(obj), key.as_string()));
  return Value::undefined(fmt::format("{} has no element {}", object_type_repr(obj), repr(key)));
}

ArgReader::ArgReader(const CallArgs& args, std::string_view function,
                     std::initializer_list<std::string_view> names)
    : args_(args), names_(names) {
  if (args.positional.size() > names_.size())
    input_error("TypeError: {}() takes at most {} argument(s) ({} given)", function, names_.size(),
                args.positional.size());
  for (const auto& [name, value] : args.named) {
    bool known = false;
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] != name) continue;
      known = true;
      if (i < args.positional.size())
        input_error("TypeError: {}() got multiple values for argument '{}'", function, name);
    }
    if (!known)
      input_error("TypeError: {}() got an unexpected keyword argument '{}'", function, name);
  }
}

const Value* ArgReader::get(size_t idx) const {
  if (idx < args_.positional.size()) return &args_.positional[idx];
  for (const auto& [name, value] : args_.named)
    if (name == names_[idx]) return &value;
  return nullptr;
}

Value ArgReader::get_or(size_t idx, Value fallback) const {
  const Value* v = get(idx);
  return v ? *v : std::move(fallback);
}

}  // namespace hadron::chat
