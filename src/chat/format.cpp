// str.format() and printf-style `%` formatting, for the conversions templates use.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "chat/builtins.h"
#include "core/error.h"
#include "core/utf8.h"

namespace hadron::chat {
namespace {

std::string convert(const Value& v, char conversion) {
  return conversion == 'r' ? repr(v) : to_str(v);
}

}  // namespace

std::string python_format(const std::string& format, const CallArgs& args) {
  std::string out;
  size_t auto_idx = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    if (c == '}' && i + 1 < format.size() && format[i + 1] == '}') {
      out += '}';
      ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    size_t close = format.find('}', i);
    if (close == std::string::npos)
      input_error("ValueError: Single '{{' encountered in format string");
    std::string field = format.substr(i + 1, close - i - 1);
    i = close;
    char conversion = 's';
    if (size_t bang = field.find('!'); bang != std::string::npos) {
      conversion = bang + 1 < field.size() ? field[bang + 1] : 's';
      field.resize(bang);
    }
    if (field.find(':') != std::string::npos)
      input_error("ValueError: format specifications are not supported in templates");
    const Value* value = nullptr;
    if (field.empty() || std::isdigit(static_cast<unsigned char>(field[0]))) {
      size_t idx = auto_idx++;
      if (!field.empty()) {
        idx = 0;
        for (char d : field) {
          if (!std::isdigit(static_cast<unsigned char>(d)) || idx > 1'000'000)
            input_error("ValueError: bad format field '{}'", field);
          idx = idx * 10 + static_cast<size_t>(d - '0');
        }
      }
      if (idx < args.positional.size()) value = &args.positional[idx];
    } else {
      for (const auto& [name, v] : args.named)
        if (name == field) value = &v;
    }
    if (!value) input_error("IndexError: Replacement index {} out of range", field);
    out += convert(*value, conversion);
  }
  return out;
}

namespace {

struct PrintfSpec {
  std::string flags;
  int width = -1;
  int precision = -1;
  char type = 's';
};

// Parses "[flags][width][.precision]type" at format[i]; leaves i on the type character.
PrintfSpec parse_printf_spec(const std::string& format, size_t& i) {
  PrintfSpec spec;
  while (i < format.size() && std::string_view("-+ #0").find(format[i]) != std::string_view::npos)
    spec.flags += format[i++];
  auto number = [&] {
    int n = 0;
    while (i < format.size() && std::isdigit(static_cast<unsigned char>(format[i])))
      n = std::min(n * 10 + (format[i++] - '0'), 4096);
    return n;
  };
  if (i < format.size() && std::isdigit(static_cast<unsigned char>(format[i])))
    spec.width = number();
  if (i < format.size() && format[i] == '.') {
    ++i;
    spec.precision = number();
  }
  if (i >= format.size()) input_error("ValueError: incomplete format");
  spec.type = format[i];
  return spec;
}

std::string pad(std::string s, const PrintfSpec& spec) {
  auto len = static_cast<int>(utf8_length(s));
  if (spec.width <= len) return s;
  std::string fill(static_cast<size_t>(spec.width - len), ' ');
  return spec.flags.find('-') != std::string::npos ? s + fill : fill + s;
}

// One conversion, as Python's printf-style formatting does it (C's for the numbers).
std::string convert_printf(const Value& v, const PrintfSpec& spec) {
  char type = spec.type;
  if (type == 's' || type == 'r' || type == 'a') {
    std::string s = type == 's' ? to_str(v) : repr(v);
    if (spec.precision >= 0) {
      std::u32string cps = utf8_decode(s);
      s = utf8_encode(cps.substr(0, static_cast<size_t>(spec.precision)));
    }
    return pad(s, spec);
  }
  std::string c_format(1, '%');
  c_format += spec.flags;
  if (spec.width >= 0) c_format += std::to_string(spec.width);
  if (spec.precision >= 0) c_format += '.' + std::to_string(spec.precision);
  char buf[8192];
  if (std::string_view("diouxX").find(type) != std::string_view::npos) {
    if (!v.is_number())
      input_error("TypeError: %{} format: a real number is required, not {}", type, type_name(v));
    if (v.is_float() && type != 'd' && type != 'i' && type != 'u')
      input_error("TypeError: %{} format: an integer is required, not float", type);
    if (v.is_float() && !(std::fabs(v.as_float()) < 9.2e18))
      input_error("OverflowError: %d format of a float out of range");
    long long i = v.is_float() ? static_cast<long long>(v.as_float()) : v.int_value();
    c_format += "ll";
    c_format += type == 'u' ? 'd' : type;
    std::snprintf(buf, sizeof buf, c_format.c_str(), i);
    return buf;
  }
  if (std::string_view("eEfFgG").find(type) != std::string_view::npos) {
    if (!v.is_number()) input_error("TypeError: must be real number, not {}", type_name(v));
    c_format += type;
    std::snprintf(buf, sizeof buf, c_format.c_str(), v.float_value());
    return buf;
  }
  input_error("ValueError: unsupported format character '{}'", type);
}

}  // namespace

std::string printf_format(const std::string& format, const Value& args) {
  std::vector<Value> positional;
  if (args.is_list() && args.as_list().is_tuple())
    positional = args.items();
  else if (!args.is_dict())
    positional.push_back(args);
  size_t next_arg = 0;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (++i >= format.size()) input_error("ValueError: incomplete format");
    const Value* value = nullptr;
    if (format[i] == '(' && args.is_dict()) {
      size_t close = format.find(')', i);
      if (close == std::string::npos) input_error("ValueError: incomplete format key");
      value = args.as_dict().find(std::string_view(format).substr(i + 1, close - i - 1));
      if (!value) input_error("KeyError: {}", format.substr(i + 1, close - i - 1));
      i = close + 1;
    }
    PrintfSpec spec = parse_printf_spec(format, i);
    if (spec.type == '%') {
      out += '%';
      continue;
    }
    if (!value) {
      if (next_arg >= positional.size())
        input_error("TypeError: not enough arguments for format string");
      value = &positional[next_arg++];
    }
    out += convert_printf(*value, spec);
  }
  if (!args.is_dict() && next_arg < positional.size())
    input_error("TypeError: not all arguments converted during string formatting");
  return out;
}

}  // namespace hadron::chat
