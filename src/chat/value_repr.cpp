// Python's str() and repr() of template values, byte for byte.
#include <charconv>
#include <cmath>
#include <cstdio>

#include "chat/py_unicode.h"
#include "chat/value.h"
#include "core/error.h"
#include "core/utf8.h"

namespace hadron::chat {

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-1.2345e+02": shortest round-trip digits
  bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e_pos = sci.find('e');
  int exponent = std::stoi(sci.substr(e_pos + 1));
  std::string digits;
  for (size_t i = 0; i < e_pos; ++i)
    if (sci[i] != '.') digits += sci[i];
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp_buf;
  }
  if (exponent < 0)
    return out + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  auto int_digits = static_cast<size_t>(exponent + 1);
  if (digits.size() <= int_digits)
    return out + digits + std::string(int_digits - digits.size(), '0') + ".0";
  return out + digits.substr(0, int_digits) + "." + digits.substr(int_digits);
}

static void append_escaped_char(std::string& out, char32_t c) {
  char buf[16];
  if (c < 0x100)
    std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
  else if (c < 0x10000)
    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
  else
    std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
  out += buf;
}

static std::string string_repr(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : utf8_decode(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && !py_isprintable(c))) {
      append_escaped_char(out, c);
    } else {
      utf8_append(out, c);
    }
  }
  out += quote;
  return out;
}

static void append_repr(std::string& out, const Value& v, int depth);

static void append_items(std::string& out, const std::vector<Value>& items, int depth) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    append_repr(out, items[i], depth + 1);
  }
}

static void append_dict(std::string& out, const DictData& d, int depth) {
  out += '{';
  bool first = true;
  for (const auto& [k, val] : d.entries) {
    if (!first) out += ", ";
    first = false;
    append_repr(out, k, depth + 1);
    out += ": ";
    append_repr(out, val, depth + 1);
  }
  out += '}';
}

static void append_repr(std::string& out, const Value& v, int depth) {
  if (depth > 256) input_error("RecursionError: value nested too deeply to print");
  switch (v.kind()) {
    case ValueKind::undefined:
      out += "Undefined";
      return;
    case ValueKind::string:
      out += string_repr(v.as_string());
      return;
    case ValueKind::list: {
      const ListData& l = v.as_list();
      if (l.kind == SeqKind::generator) {
        out += "<generator object>";
        return;
      }
      bool view = !l.is_sequence();
      if (view) out += type_name(v) + "(";
      out += l.is_tuple() ? '(' : '[';
      append_items(out, l.items, depth);
      if (l.is_tuple() && l.items.size() == 1) out += ',';
      out += l.is_tuple() ? ')' : ']';
      if (view) out += ')';
      return;
    }
    case ValueKind::dict:
      append_dict(out, v.as_dict(), depth);
      return;
    case ValueKind::namespace_object: {
      DictData attrs;
      for (const auto& [k, val] : v.as_namespace().attrs) attrs.entries.emplace_back(k, val);
      out += "<Namespace ";
      append_dict(out, attrs, depth);
      out += '>';
      return;
    }
    case ValueKind::none:
    case ValueKind::boolean:
    case ValueKind::integer:
    case ValueKind::floating:
    case ValueKind::function:
      out += to_str(v);
      return;
  }
}

std::string repr(const Value& v) {
  std::string out;
  append_repr(out, v, 0);
  return out;
}

std::string to_str(const Value& v) {
  switch (v.kind()) {
    case ValueKind::undefined:
      return "";
    case ValueKind::none:
      return "None";
    case ValueKind::boolean:
      return v.as_bool() ? "True" : "False";
    case ValueKind::integer:
      return std::to_string(v.as_int());
    case ValueKind::floating:
      return float_repr(v.as_float());
    case ValueKind::string:
      return v.as_string();
    case ValueKind::function:
      return "<function " + v.as_function().name + ">";
    case ValueKind::list:
    case ValueKind::dict:
    case ValueKind::namespace_object:
      return repr(v);
  }
  return "";
}

}  // namespace hadron::chat
