#include "chat/value_json.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/utf8.h"

namespace hadron::chat {

Value value_from_json(const nlohmann::ordered_json& j) {
  using Type = nlohmann::ordered_json::value_t;
  switch (j.type()) {
    case Type::null:
      return Value::none();
    case Type::boolean:
      return Value(j.get<bool>());
    case Type::number_integer:
      return Value(j.get<int64_t>());
    case Type::number_unsigned: {
      auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<int64_t>(u));
    }
    case Type::number_float:
      return Value(j.get<double>());
    case Type::string:
      return Value(j.get<std::string>());
    case Type::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& item : j) items.push_back(value_from_json(item));
      return Value::list(std::move(items));
    }
    case Type::object: {
      DictData d;
      d.entries.reserve(j.size());
      for (const auto& [k, v] : j.items()) d.set(Value(k), value_from_json(v));
      return Value::dict(std::move(d));
    }
    case Type::binary:
    case Type::discarded:
      break;
  }
  input_error("unsupported JSON value in template context");
}

namespace {

class JsonWriter {
 public:
  explicit JsonWriter(const JsonDumpOptions& o) : options_(o) {
    item_sep_ = o.item_separator.value_or(o.indent ? "," : ", ");
    key_sep_ = o.key_separator.value_or(": ");
  }

  void write(const Value& v, int depth);
  std::string out_;

 private:
  void write_string(const std::string& s);
  void newline(int depth);
  void write_list(const std::vector<Value>& items, int depth);
  void write_dict(const DictData& d, int depth);
  std::string key_string(const Value& k);

  const JsonDumpOptions& options_;
  std::string item_sep_, key_sep_;
};

void JsonWriter::write_string(const std::string& s) {
  out_ += '"';
  for (char32_t c : utf8_decode(s)) {
    char buf[16];
    switch (c) {
      case '"':
        out_ += "\\\"";
        continue;
      case '\\':
        out_ += "\\\\";
        continue;
      case '\n':
        out_ += "\\n";
        continue;
      case '\r':
        out_ += "\\r";
        continue;
      case '\t':
        out_ += "\\t";
        continue;
      case '\b':
        out_ += "\\b";
        continue;
      case '\f':
        out_ += "\\f";
        continue;
    }
    if (c < 0x20 || (options_.ensure_ascii && c >= 0x7F && c < 0x10000)) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out_ += buf;
    } else if (options_.ensure_ascii && c >= 0x10000) {
      char32_t v = c - 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                    static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
      out_ += buf;
    } else {
      utf8_append(out_, c);
    }
  }
  out_ += '"';
}

void JsonWriter::newline(int depth) {
  out_ += '\n';
  for (int i = 0; i < depth; ++i) out_ += *options_.indent;
}

void JsonWriter::write_list(const std::vector<Value>& items, int depth) {
  if (items.empty()) {
    out_ += "[]";
    return;
  }
  out_ += '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out_ += item_sep_;
    if (options_.indent) newline(depth + 1);
    write(items[i], depth + 1);
  }
  if (options_.indent) newline(depth);
  out_ += ']';
}

std::string JsonWriter::key_string(const Value& k) {
  switch (k.kind()) {
    case ValueKind::string:
      return k.as_string();
    case ValueKind::boolean:
      return k.as_bool() ? "true" : "false";
    case ValueKind::none:
      return "null";
    case ValueKind::integer:
      return std::to_string(k.as_int());
    case ValueKind::floating:
      return float_repr(k.as_float());
    case ValueKind::undefined:
    case ValueKind::list:
    case ValueKind::dict:
    case ValueKind::namespace_object:
    case ValueKind::function:
      break;
  }
  input_error("TypeError: keys must be str, int, float, bool or None, not {}", type_name(k));
}

void JsonWriter::write_dict(const DictData& d, int depth) {
  if (d.entries.empty()) {
    out_ += "{}";
    return;
  }
  std::vector<std::pair<std::string, const Value*>> entries;
  for (const auto& [k, v] : d.entries) entries.emplace_back(key_string(k), &v);
  if (options_.sort_keys)
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  out_ += '{';
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i) out_ += item_sep_;
    if (options_.indent) newline(depth + 1);
    write_string(entries[i].first);
    out_ += key_sep_;
    write(*entries[i].second, depth + 1);
  }
  if (options_.indent) newline(depth);
  out_ += '}';
}

void JsonWriter::write(const Value& v, int depth) {
  if (depth > 256) input_error("RecursionError: value nested too deeply for tojson");
  switch (v.kind()) {
    case ValueKind::none:
      out_ += "null";
      return;
    case ValueKind::boolean:
      out_ += v.as_bool() ? "true" : "false";
      return;
    case ValueKind::integer:
      out_ += std::to_string(v.as_int());
      return;
    case ValueKind::floating: {
      double d = v.as_float();
      if (std::isnan(d))
        out_ += "NaN";
      else if (std::isinf(d))
        out_ += d > 0 ? "Infinity" : "-Infinity";
      else
        out_ += float_repr(d);
      return;
    }
    case ValueKind::string:
      write_string(v.as_string());
      return;
    case ValueKind::list:
      if (!v.as_list().is_sequence()) break;
      write_list(v.items(), depth);
      return;
    case ValueKind::dict:
      write_dict(v.as_dict(), depth);
      return;
    case ValueKind::undefined:
    case ValueKind::namespace_object:
    case ValueKind::function:
      break;
  }
  input_error("TypeError: Object of type {} is not JSON serializable", type_name(v));
}

}  // namespace

std::string json_dumps(const Value& v, const JsonDumpOptions& options) {
  JsonWriter writer(options);
  writer.write(v, 0);
  return std::move(writer.out_);
}

}  // namespace hadron::chat
