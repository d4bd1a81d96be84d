#include "chat/methods.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "chat/builtins.h"
#include "chat/py_unicode.h"
#include "core/error.h"
#include "core/utf8.h"

namespace hadron::chat {
namespace {

using Method = std::function<Value(CallArgs&)>;

Value unsafe(const Value& receiver, const std::string& name) {
  return Value::undefined(
      fmt::format("access to attribute '{}' of '{}' object is unsafe.", name, type_name(receiver)),
      true);
}

const std::string& str_arg(const Value* v, std::string_view method) {
  if (!v || !v->is_string())
    input_error("TypeError: {}() argument must be str, not {}", method,
                v ? type_name(*v) : "nothing");
  return v->as_string();
}

int64_t int_arg(const Value* v, int64_t fallback) {
  if (!v || v->is_none()) return fallback;
  if (!v->is_int() && !v->is_bool()) input_error("TypeError: integer argument expected");
  return v->int_value();
}

// startswith/endswith accept a string or a tuple of strings.
bool affix_match(const std::string& s, const Value* affix, bool prefix) {
  auto one = [&](const Value& a) {
    const std::string& x = str_arg(&a, prefix ? "startswith" : "endswith");
    if (x.size() > s.size()) return false;
    return prefix ? s.compare(0, x.size(), x) == 0
                  : s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  if (affix && affix->is_list() && affix->as_list().is_tuple())
    return std::any_of(affix->items().begin(), affix->items().end(), one);
  if (!affix) input_error("TypeError: startswith/endswith takes at least 1 argument");
  return one(*affix);
}

bool all_chars(const std::string& s, bool (*pred)(char32_t)) {
  std::u32string t = utf8_decode(s);
  return !t.empty() && std::all_of(t.begin(), t.end(), pred);
}

Value string_join(const std::string& sep, const Value& iterable) {
  std::string out;
  size_t i = 0;
  for (const Value& item : iterate(iterable)) {
    if (!item.is_string())
      input_error("TypeError: sequence item {}: expected str instance, {} found", i,
                  type_name(item));
    if (i++) out += sep;
    out += item.as_string();
  }
  return Value(std::move(out));
}

Value find_sub(const std::string& s, const std::string& sub, bool from_right) {
  size_t hit = from_right ? s.rfind(sub) : s.find(sub);
  if (hit == std::string::npos) return Value(int64_t{-1});
  return Value(utf8_length(std::string_view(s).substr(0, hit)));
}

Value count_sub(const std::string& s, const std::string& sub) {
  if (sub.empty()) return Value(utf8_length(s) + 1);
  int64_t n = 0;
  for (size_t pos = s.find(sub); pos != std::string::npos; pos = s.find(sub, pos + sub.size())) ++n;
  return Value(n);
}

std::optional<Method> string_method(const std::string& s, const std::string& name) {
  auto strip = [s](bool l, bool r, const char* fn) {
    return [s, l, r, fn](CallArgs& a) {
      return Value(py_strip(s, ArgReader(a, fn, {"chars"}).get(0), l, r));
    };
  };
  if (name == "strip") return strip(true, true, "strip");
  if (name == "lstrip") return strip(true, false, "lstrip");
  if (name == "rstrip") return strip(false, true, "rstrip");
  if (name == "split" || name == "rsplit") {
    bool right = name == "rsplit";
    return [s, right](CallArgs& a) {
      ArgReader r(a, right ? "rsplit" : "split", {"sep", "maxsplit"});
      return Value::list(py_split(s, r.get(0), int_arg(r.get(1), -1), right));
    };
  }
  if (name == "startswith" || name == "endswith") {
    bool prefix = name == "startswith";
    return [s, prefix](CallArgs& a) {
      return Value(affix_match(s, ArgReader(a, "startswith", {"prefix"}).get(0), prefix));
    };
  }
  if (name == "replace")
    return [s](CallArgs& a) {
      ArgReader r(a, "replace", {"old", "new", "count"});
      return Value(py_replace(s, str_arg(r.get(0), "replace"), str_arg(r.get(1), "replace"),
                              int_arg(r.get(2), -1)));
    };
  if (name == "upper") return [s](CallArgs&) { return Value(py_upper(s)); };
  if (name == "lower") return [s](CallArgs&) { return Value(py_lower(s)); };
  if (name == "title") return [s](CallArgs&) { return Value(py_title(s)); };
  if (name == "capitalize") return [s](CallArgs&) { return Value(py_capitalize(s)); };
  if (name == "format") return [s](CallArgs& a) { return Value(python_format(s, a)); };
  if (name == "join")
    return [s](CallArgs& a) {
      return string_join(s, ArgReader(a, "join", {"iterable"}).get_or(0, Value::none()));
    };
  if (name == "find" || name == "rfind") {
    bool right = name == "rfind";
    return [s, right](CallArgs& a) {
      return find_sub(s, str_arg(ArgReader(a, "find", {"sub"}).get(0), "find"), right);
    };
  }
  if (name == "count")
    return [s](CallArgs& a) {
      return count_sub(s, str_arg(ArgReader(a, "count", {"x"}).get(0), "count"));
    };
  if (name == "isdigit") return [s](CallArgs&) { return Value(all_chars(s, py_isdigit)); };
  if (name == "isalpha") return [s](CallArgs&) { return Value(all_chars(s, py_isalpha)); };
  if (name == "isalnum") return [s](CallArgs&) { return Value(all_chars(s, py_isalnum)); };
  if (name == "isspace") return [s](CallArgs&) { return Value(all_chars(s, py_isspace)); };
  if (name == "islower")
    return [s](CallArgs&) { return Value(py_lower(s) == s && py_upper(s) != s); };
  if (name == "isupper")
    return [s](CallArgs&) { return Value(py_upper(s) == s && py_lower(s) != s); };
  return std::nullopt;
}

std::optional<Method> dict_method(const Value& d, const std::string& name) {
  if (name == "items")
    return [d](CallArgs&) {
      std::vector<Value> out;
      for (const auto& [k, v] : d.as_dict().entries) out.push_back(Value::list({k, v}, true));
      return Value::sequence(std::move(out), SeqKind::dict_items);
    };
  if (name == "keys")
    return [d](CallArgs&) { return Value::sequence(iterate(d), SeqKind::dict_keys); };
  if (name == "values")
    return [d](CallArgs&) {
      std::vector<Value> out;
      for (const auto& [k, v] : d.as_dict().entries) out.push_back(v);
      return Value::sequence(std::move(out), SeqKind::dict_values);
    };
  if (name == "get")
    return [d](CallArgs& a) {
      ArgReader r(a, "get", {"key", "default"});
      if (!r.get(0)) input_error("TypeError: get expected at least 1 argument, got 0");
      const Value* v = d.as_dict().find(*r.get(0));
      return v ? *v : r.get_or(1, Value::none());
    };
  if (name == "copy") return [d](CallArgs&) { return d; };
  return std::nullopt;
}

std::optional<Method> list_method(const Value& l, const std::string& name) {
  if (name == "index")
    return [l](CallArgs& a) {
      const Value* x = ArgReader(a, "index", {"value"}).get(0);
      for (size_t i = 0; x && i < l.items().size(); ++i)
        if (equals(l.items()[i], *x)) return Value(i);
      input_error("ValueError: value is not in list");
    };
  if (name == "count")
    return [l](CallArgs& a) {
      const Value* x = ArgReader(a, "count", {"value"}).get(0);
      return Value(static_cast<int64_t>(std::count_if(
          l.items().begin(), l.items().end(), [&](const Value& v) { return x && equals(v, *x); })));
    };
  if (name == "copy" && l.as_list().kind == SeqKind::list) return [l](CallArgs&) { return l; };
  return std::nullopt;
}

constexpr std::array<std::string_view, 5> kDictMutators = {"clear", "pop", "popitem", "setdefault",
                                                           "update"};
constexpr std::array<std::string_view, 8> kListMutators = {"append", "extend",  "insert", "pop",
                                                           "remove", "reverse", "sort",   "clear"};

}  // namespace

std::optional<Value> find_method(const Value& receiver, const std::string& name) {
  std::optional<Method> method;
  if (receiver.is_string()) {
    method = string_method(receiver.as_string(), name);
  } else if (receiver.is_dict()) {
    if (std::find(kDictMutators.begin(), kDictMutators.end(), name) != kDictMutators.end())
      return unsafe(receiver, name);
    method = dict_method(receiver, name);
  } else if (receiver.is_list()) {
    SeqKind kind = receiver.as_list().kind;
    if (!receiver.as_list().is_sequence()) return std::nullopt;
    if (kind == SeqKind::list &&
        std::find(kListMutators.begin(), kListMutators.end(), name) != kListMutators.end())
      return unsafe(receiver, name);
    method = list_method(receiver, name);
  }
  if (!method) return std::nullopt;
  return Value::function(name, std::move(*method));
}

}  // namespace hadron::chat
