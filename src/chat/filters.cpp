// The filter table, and jinja2's filters on text and numbers (transformers' tojson included).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "chat/builtins.h"
#include "chat/filter_registry.h"
#include "chat/methods.h"
#include "chat/py_unicode.h"
#include "chat/value_json.h"
#include "core/error.h"
#include "core/utf8.h"

namespace hadron::chat {
namespace {

// Every filter name jinja2 3.1 defines, so that unknown-filter errors fall where jinja's do.
constexpr std::array<std::string_view, 54> kJinjaFilters = {
    "abs",       "attr",       "batch",       "capitalize", "center",  "count",
    "d",         "default",    "dictsort",    "e",          "escape",  "filesizeformat",
    "first",     "float",      "forceescape", "format",     "groupby", "indent",
    "int",       "join",       "last",        "length",     "list",    "lower",
    "items",     "map",        "max",         "min",        "pprint",  "random",
    "reject",    "rejectattr", "replace",     "reverse",    "round",   "safe",
    "select",    "selectattr", "slice",       "sort",       "string",  "striptags",
    "sum",       "title",      "trim",        "truncate",   "unique",  "upper",
    "urlencode", "urlize",     "wordcount",   "wordwrap",   "xmlattr", "tojson"};

Value tojson(const Value& v, CallArgs& args) {
  ArgReader r(args, "tojson", {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonDumpOptions o;
  o.ensure_ascii = truthy(r.get_or(0, Value(false)));
  Value indent = r.get_or(1, Value::none());
  if (indent.is_int())
    o.indent = std::string(static_cast<size_t>(std::clamp<int64_t>(indent.as_int(), 0, 64)), ' ');
  else if (indent.is_string())
    o.indent = indent.as_string();
  Value seps = r.get_or(2, Value::none());
  if (seps.is_list() && seps.items().size() == 2 && seps.items()[0].is_string() &&
      seps.items()[1].is_string()) {
    o.item_separator = seps.items()[0].as_string();
    o.key_separator = seps.items()[1].as_string();
  } else if (!seps.is_none()) {
    input_error("TypeError: tojson separators must be a pair of strings");
  }
  o.sort_keys = truthy(r.get_or(3, Value(false)));
  return Value(json_dumps(v, o));
}

Value trim(const Value& v, CallArgs& args) {
  return Value(py_strip(soft_str(v), ArgReader(args, "trim", {"chars"}).get(0), true, true));
}

Value upper(const Value& v, CallArgs&) { return Value(py_upper(soft_str(v))); }
Value lower(const Value& v, CallArgs&) { return Value(py_lower(soft_str(v))); }
Value capitalize(const Value& v, CallArgs&) { return Value(py_capitalize(soft_str(v))); }
Value string(const Value& v, CallArgs&) { return Value(soft_str(v)); }

// jinja's do_title: each run after [-\s({\[<]+ starts upper-case, the rest is lower-case.
Value title(const Value& v, CallArgs&) {
  std::u32string s = utf8_decode(soft_str(v));
  auto is_sep = [](char32_t c) {
    return py_isspace(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
  };
  for (size_t i = 0; i < s.size(); ++i) {
    bool starts_chunk = i == 0 || is_sep(s[i]) != is_sep(s[i - 1]);
    s[i] = starts_chunk ? py_upper(s[i]) : py_lower(s[i]);
  }
  return Value(utf8_encode(s));
}

Value replace(const Value& v, CallArgs& args) {
  ArgReader r(args, "replace", {"old", "new", "count"});
  Value count = r.get_or(2, Value::none());
  return Value(py_replace(soft_str(v), soft_str(r.get_or(0, Value(""))),
                          soft_str(r.get_or(1, Value(""))),
                          count.is_none() ? -1 : count.int_value()));
}

Value default_filter(const Value& v, CallArgs& args) {
  ArgReader r(args, "default", {"default_value", "boolean"});
  if (v.is_undefined() || (truthy(r.get_or(1, Value(false))) && !truthy(v)))
    return r.get_or(0, Value(""));
  return v;
}

// Python int(str): surrounding whitespace and '_' between digits allowed.
bool parse_int(const std::string& text, int64_t* out) {
  std::string s = py_strip(text, nullptr, true, true);
  std::string digits;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && i > 0 && i + 1 < s.size() && std::isdigit((unsigned char)s[i - 1]) &&
        std::isdigit((unsigned char)s[i + 1]))
      continue;
    digits += s[i];
  }
  if (digits.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(digits.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE || std::isspace((unsigned char)digits[0])) return false;
  *out = v;
  return true;
}

bool parse_float(const Value& v, double* out) {
  if (v.is_number()) {
    *out = v.float_value();
    return true;
  }
  if (!v.is_string()) return false;
  std::string s = py_strip(v.as_string(), nullptr, true, true);
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return *end == '\0' && s.find_first_of("xXpP") == std::string::npos;
}

Value int_filter(const Value& v, CallArgs& args) {
  ArgReader r(args, "int", {"default", "base"});
  int64_t i = 0;
  if (v.is_int() || v.is_bool()) return Value(v.int_value());
  if (v.is_string() && parse_int(v.as_string(), &i)) return Value(i);
  double d = 0;
  if (parse_float(v, &d) && std::isfinite(d) && std::fabs(d) < 9.2e18)
    return Value(static_cast<int64_t>(d));
  return r.get_or(0, Value(int64_t{0}));
}

Value float_filter(const Value& v, CallArgs& args) {
  double d = 0;
  if (parse_float(v, &d)) return Value(d);
  return ArgReader(args, "float", {"default"}).get_or(0, Value(0.0));
}

Value round_filter(const Value& v, CallArgs& args) {
  ArgReader r(args, "round", {"precision", "method"});
  int64_t precision = r.get_or(0, Value(int64_t{0})).int_value();
  std::string method = soft_str(r.get_or(1, Value("common")));
  if (!v.is_number()) input_error("TypeError: type {} doesn't define __round__", type_name(v));
  double x = v.float_value();
  if (method == "common") {
    if (!v.is_float()) return Value(v.int_value());
    char buf[1024];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::clamp<int64_t>(precision, 0, 300)),
                  x);
    return Value(precision >= 0 ? std::strtod(buf, nullptr) : x);
  }
  double scale = std::pow(10.0, static_cast<double>(precision));
  if (method == "ceil") return Value(std::ceil(x * scale) / scale);
  if (method == "floor") return Value(std::floor(x * scale) / scale);
  input_error("FilterArgumentError: method must be common, ceil or floor");
}

Value abs_filter(const Value& v, CallArgs&) {
  if (v.is_float()) return Value(std::fabs(v.as_float()));
  if (v.is_int() || v.is_bool()) return v.int_value() < 0 ? negate(v) : Value(v.int_value());
  input_error("TypeError: bad operand type for abs(): '{}'", type_name(v));
}

Value safe(const Value& v, CallArgs&) { return Value(soft_str(v)); }

Value escape(const Value& v, CallArgs&) {
  std::string out;
  for (char c : soft_str(v)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return Value(std::move(out));
}

Value wordcount(const Value& v, CallArgs&) {
  int64_t n = 0;
  bool in_word = false;
  for (char32_t c : utf8_decode(soft_str(v))) {
    bool word = py_isalnum(c) || c == '_';
    if (word && !in_word) ++n;
    in_word = word;
  }
  return Value(n);
}

Value format_filter(const Value& v, CallArgs& args) {
  if (!args.named.empty()) {
    DictData d;
    for (auto& [k, val] : args.named) d.set(Value(k), val);
    return Value(printf_format(soft_str(v), Value::dict(std::move(d))));
  }
  return Value(printf_format(soft_str(v), Value::list(args.positional, true)));
}

Value center(const Value& v, CallArgs& args) {
  std::string s = soft_str(v);
  int64_t width = ArgReader(args, "center", {"width"}).get_or(0, Value(int64_t{80})).int_value();
  auto len = static_cast<int64_t>(utf8_length(s));
  if (width <= len) return Value(s);
  int64_t pad = std::min<int64_t>(width - len, 1 << 20);
  int64_t left = pad / 2 + (pad & width & 1);
  return Value(std::string(static_cast<size_t>(left), ' ') + s +
               std::string(static_cast<size_t>(pad - left), ' '));
}

}  // namespace

void register_text_filters(FilterTable& t) {
  t["tojson"] = tojson;
  t["trim"] = trim;
  t["upper"] = upper;
  t["lower"] = lower;
  t["capitalize"] = capitalize;
  t["title"] = title;
  t["string"] = string;
  t["replace"] = replace;
  t["default"] = t["d"] = default_filter;
  t["int"] = int_filter;
  t["float"] = float_filter;
  t["round"] = round_filter;
  t["abs"] = abs_filter;
  t["safe"] = safe;
  t["escape"] = t["e"] = t["forceescape"] = escape;
  t["wordcount"] = wordcount;
  t["format"] = format_filter;
  t["center"] = center;
}

static const FilterTable& filter_table() {
  static const FilterTable table = [] {
    FilterTable t;
    register_text_filters(t);
    register_sequence_filters(t);
    return t;
  }();
  return table;
}

bool is_known_filter(std::string_view name) {
  return std::find(kJinjaFilters.begin(), kJinjaFilters.end(), name) != kJinjaFilters.end();
}

Value apply_filter(const std::string& name, const Value& value, CallArgs& args) {
  const FilterTable& table = filter_table();
  auto it = table.find(name);
  if (it != table.end()) return it->second(value, args);
  if (is_known_filter(name)) input_error("filter '{}' is not supported by hadron", name);
  input_error("TemplateRuntimeError: No filter named '{}' found.", name);
}

}  // namespace hadron::chat
