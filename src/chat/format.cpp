// str.format() and printf-style `%` formatting, for the conversions templates use.
#include <cmath>
#include <cstdio>

#include "chat/builtins.h"
#include "core/error.h"

namespace hadron::chat {
namespace {

std::string format_number(const Value& v, char type, int precision) {
  char buf[512];
  if (type == 'd' || type == 'i') {
    if (!v.is_number()) input_error("TypeError: %d format: a real number is required, not {}", type_name(v));
    if (v.is_float() && !(std::fabs(v.as_float()) < 9.2e18))
      input_error("OverflowError: %d format of a float out of range");
    int64_t i = v.is_float() ? static_cast<int64_t>(v.as_float()) : v.int_value();
    return std::to_string(i);
  }
  if (!v.is_number()) input_error("TypeError: must be real number, not {}", type_name(v));
  std::snprintf(buf, sizeof buf, "%.*f", precision < 0 ? 6 : std::min(precision, 100), v.float_value());
  return buf;
}

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
    if (close == std::string::npos) input_error("ValueError: Single '{{' encountered in format string");
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

std::string printf_format(const std::string& format, const Value& args) {
  std::vector<Value> positional;
  if (args.is_list() && args.as_list().is_tuple()) positional = args.items();
  else if (!args.is_dict()) positional.push_back(args);
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
    int precision = -1;
    if (i < format.size() && format[i] == '.') {
      precision = 0;
      while (++i < format.size() && std::isdigit(static_cast<unsigned char>(format[i])))
        precision = std::min(precision * 10 + (format[i] - '0'), 1000);
    }
    if (i >= format.size()) input_error("ValueError: incomplete format");
    char type = format[i];
    if (type == '%') {
      out += '%';
      continue;
    }
    if (!value) {
      if (next_arg >= positional.size()) input_error("TypeError: not enough arguments for format string");
      value = &positional[next_arg++];
    }
    if (type == 's' || type == 'r') out += convert(*value, type);
    else if (type == 'd' || type == 'i' || type == 'f') out += format_number(*value, type, precision);
    else input_error("ValueError: unsupported format character '{}'", type);
  }
  if (!args.is_dict() && next_arg < positional.size())
    input_error("TypeError: not all arguments converted during string formatting");
  return out;
}

}  // namespace hadron::chat
