// jinja2's filters on sequences and mappings, plus `indent`.
#include <algorithm>

#include "chat/builtins.h"
#include "chat/filter_registry.h"
#include "chat/methods.h"
#include "chat/py_unicode.h"
#include "core/error.h"
#include "core/utf8.h"

namespace hadron::chat {

Value attribute_path(const Value& v, const Value& path) {
  if (!path.is_string()) return get_item(v, path);
  Value cur = v;
  Value dot(".");
  for (const Value& part : py_split(path.as_string(), &dot, -1, false)) {
    const std::string& p = part.as_string();
    bool digits = !p.empty() && p.size() < 18 &&
                  std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
    cur = get_item(cur, digits ? Value(static_cast<int64_t>(std::stoll(p))) : part);
  }
  return cur;
}

namespace {

Value length(const Value& v, CallArgs&) {
  switch (v.kind()) {
    case ValueKind::undefined:
      return Value(int64_t{0});
    case ValueKind::string:
      return Value(utf8_length(v.as_string()));
    case ValueKind::list:
      if (v.as_list().kind == SeqKind::generator) break;
      return Value(v.items().size());
    case ValueKind::dict:
      return Value(v.as_dict().entries.size());
    case ValueKind::none:
    case ValueKind::boolean:
    case ValueKind::integer:
    case ValueKind::floating:
    case ValueKind::namespace_object:
    case ValueKind::function:
      break;
  }
  input_error("TypeError: object of type '{}' has no len()", type_name(v));
}

Value items(const Value& v, CallArgs&) {
  if (v.is_undefined()) return Value::sequence({}, SeqKind::generator);
  if (!v.is_dict()) input_error("TypeError: Can only get item pairs from a mapping.");
  std::vector<Value> out;
  for (const auto& [k, val] : v.as_dict().entries) out.push_back(Value::list({k, val}, true));
  return Value::sequence(std::move(out), SeqKind::generator);
}

Value list(const Value& v, CallArgs&) { return Value::list(iterate(v)); }

Value first(const Value& v, CallArgs&) {
  std::vector<Value> all = iterate(v);
  if (all.empty()) return Value::undefined("No first item, sequence was empty.");
  return all.front();
}

Value last(const Value& v, CallArgs&) {
  if (v.is_list() && v.as_list().kind == SeqKind::generator)
    input_error("TypeError: 'generator' object is not reversible");
  std::vector<Value> all = iterate(v);
  if (all.empty()) return Value::undefined("No last item, sequence was empty.");
  return all.back();
}

Value join(const Value& v, CallArgs& args) {
  ArgReader r(args, "join", {"d", "attribute"});
  std::string sep = soft_str(r.get_or(0, Value("")));
  const Value* attribute = r.get(1);
  std::string out;
  bool first_item = true;
  for (const Value& item : iterate(v)) {
    if (!first_item) out += sep;
    first_item = false;
    out += soft_str(attribute && !attribute->is_none() ? attribute_path(item, *attribute) : item);
  }
  return Value(std::move(out));
}

Value map(const Value& v, CallArgs& args) {
  std::vector<Value> out;
  const Value* attribute = nullptr;
  const Value* fallback = nullptr;
  for (const auto& [name, val] : args.named) {
    if (name == "attribute")
      attribute = &val;
    else if (name == "default")
      fallback = &val;
  }
  if (attribute) {
    for (const Value& item : iterate(v)) {
      Value x = attribute_path(item, *attribute);
      out.push_back(x.is_undefined() && fallback ? *fallback : x);
    }
    return Value::sequence(std::move(out), SeqKind::generator);
  }
  if (args.positional.empty()) input_error("TypeError: map requires a filter argument");
  std::string filter = soft_str(args.positional[0]);
  CallArgs rest{std::vector<Value>(args.positional.begin() + 1, args.positional.end()), args.named};
  for (const Value& item : iterate(v)) {
    CallArgs a = rest;
    out.push_back(apply_filter(filter, item, a));
  }
  return Value::sequence(std::move(out), SeqKind::generator);
}

// select/reject/selectattr/rejectattr: keep items whose test result equals `keep`.
Value select_items(const Value& v, CallArgs& args, bool by_attribute, bool keep) {
  size_t pos = 0;
  Value attribute;
  if (by_attribute) {
    if (args.positional.empty()) input_error("TypeError: missing attribute for selectattr");
    attribute = args.positional[pos++];
  }
  std::string test = pos < args.positional.size() ? soft_str(args.positional[pos++]) : "";
  CallArgs test_args{
      std::vector<Value>(args.positional.begin() + static_cast<long>(pos), args.positional.end()),
      args.named};
  std::vector<Value> out;
  for (const Value& item : iterate(v)) {
    Value x = by_attribute ? attribute_path(item, attribute) : item;
    CallArgs a = test_args;
    bool result = test.empty() ? truthy(x) : apply_test(test, x, a);
    if (result == keep) out.push_back(item);
  }
  return Value::sequence(std::move(out), SeqKind::generator);
}

Value select(const Value& v, CallArgs& a) { return select_items(v, a, false, true); }
Value reject(const Value& v, CallArgs& a) { return select_items(v, a, false, false); }
Value selectattr(const Value& v, CallArgs& a) { return select_items(v, a, true, true); }
Value rejectattr(const Value& v, CallArgs& a) { return select_items(v, a, true, false); }

// The sort key of jinja's sort/unique/min/max: lower-cased strings unless case-sensitive.
Value sort_key(const Value& item, const Value* attribute, bool case_sensitive) {
  Value k = attribute && !attribute->is_none() ? attribute_path(item, *attribute) : item;
  if (!case_sensitive && k.is_string()) return Value(py_lower(k.as_string()));
  return k;
}

Value sort(const Value& v, CallArgs& args) {
  ArgReader r(args, "sort", {"reverse", "case_sensitive", "attribute"});
  bool reverse = truthy(r.get_or(0, Value(false)));
  bool cs = truthy(r.get_or(1, Value(false)));
  std::vector<std::pair<Value, Value>> keyed;
  for (const Value& item : iterate(v)) keyed.emplace_back(sort_key(item, r.get(2), cs), item);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return reverse ? compare(b.first, a.first) < 0 : compare(a.first, b.first) < 0;
  });
  std::vector<Value> out;
  for (auto& [k, item] : keyed) out.push_back(std::move(item));
  return Value::list(std::move(out));
}

Value dictsort(const Value& v, CallArgs& args) {
  ArgReader r(args, "dictsort", {"case_sensitive", "by", "reverse"});
  bool cs = truthy(r.get_or(0, Value(false)));
  bool by_value = soft_str(r.get_or(1, Value("key"))) == "value";
  bool reverse = truthy(r.get_or(2, Value(false)));
  CallArgs none;
  std::vector<Value> pairs = items(v, none).items();
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
    Value ka = sort_key(a.items()[by_value], nullptr, cs),
          kb = sort_key(b.items()[by_value], nullptr, cs);
    return reverse ? compare(kb, ka) < 0 : compare(ka, kb) < 0;
  });
  return Value::list(std::move(pairs));
}

Value unique(const Value& v, CallArgs& args) {
  ArgReader r(args, "unique", {"case_sensitive", "attribute"});
  bool cs = truthy(r.get_or(0, Value(false)));
  std::vector<Value> out, seen;
  for (const Value& item : iterate(v)) {
    Value k = sort_key(item, r.get(1), cs);
    if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, k); }))
      continue;
    seen.push_back(k);
    out.push_back(item);
  }
  return Value::sequence(std::move(out), SeqKind::generator);
}

Value min_max(const Value& v, CallArgs& args, bool want_max) {
  ArgReader r(args, want_max ? "max" : "min", {"case_sensitive", "attribute"});
  bool cs = truthy(r.get_or(0, Value(false)));
  std::vector<Value> all = iterate(v);
  if (all.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  for (size_t i = 1; i < all.size(); ++i) {
    int c = compare(sort_key(all[i], r.get(1), cs), sort_key(all[best], r.get(1), cs));
    if (want_max ? c > 0 : c < 0) best = i;
  }
  return all[best];
}

Value min(const Value& v, CallArgs& a) { return min_max(v, a, false); }
Value max(const Value& v, CallArgs& a) { return min_max(v, a, true); }

Value sum(const Value& v, CallArgs& args) {
  ArgReader r(args, "sum", {"attribute", "start"});
  Value total = r.get_or(1, Value(int64_t{0}));
  for (const Value& item : iterate(v)) {
    const Value* attribute = r.get(0);
    total = binary_op(BinaryOp::add, total,
                      attribute && !attribute->is_none() ? attribute_path(item, *attribute) : item,
                      SIZE_MAX);
  }
  return total;
}

Value reverse(const Value& v, CallArgs&) {
  if (v.is_string()) {
    std::u32string s = utf8_decode(v.as_string());
    std::reverse(s.begin(), s.end());
    return Value(utf8_encode(s));
  }
  // reversed(list) is an iterator; a generator is listed first and reversed into a list.
  bool sequence = v.is_list() && v.as_list().is_sequence();
  std::vector<Value> all = iterate(v);
  std::reverse(all.begin(), all.end());
  return sequence ? Value::sequence(std::move(all), SeqKind::generator)
                  : Value::list(std::move(all));
}

// Python getattr only: methods, namespace attributes; never dict items.
Value attr(const Value& v, CallArgs& args) {
  std::string name = soft_str(ArgReader(args, "attr", {"name"}).get_or(0, Value("")));
  if (auto method = find_method(v, name)) return *method;
  if (v.is_namespace()) return get_attribute(v, name);
  if (v.is_undefined()) fail_undefined(v);
  return Value::undefined(fmt::format("'{}' has no attribute '{}'", object_type_repr(v), name));
}

// Python str.splitlines() boundaries.
std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::u32string t = utf8_decode(s);
  std::u32string cur;
  for (size_t i = 0; i < t.size(); ++i) {
    char32_t c = t[i];
    bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) ||
               c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!brk) {
      cur += c;
      continue;
    }
    if (c == '\r' && i + 1 < t.size() && t[i + 1] == '\n') ++i;
    lines.push_back(utf8_encode(cur));
    cur.clear();
  }
  if (!cur.empty()) lines.push_back(utf8_encode(cur));
  return lines;
}

Value indent(const Value& v, CallArgs& args) {
  ArgReader r(args, "indent", {"width", "first", "blank"});
  Value width = r.get_or(0, Value(int64_t{4}));
  std::string pad =
      width.is_string()
          ? width.as_string()
          : std::string(static_cast<size_t>(std::clamp<int64_t>(width.int_value(), 0, 256)), ' ');
  std::vector<std::string> lines = split_lines(soft_str(v) + "\n");
  std::string out;
  bool blank = truthy(r.get_or(2, Value(false)));
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += "\n";
    if (i > 0 && (blank || !lines[i].empty())) out += pad;
    out += lines[i];
  }
  if (truthy(r.get_or(1, Value(false)))) out = pad + out;
  return Value(std::move(out));
}

}  // namespace

void register_sequence_filters(FilterTable& t) {
  t["length"] = t["count"] = length;
  t["items"] = items;
  t["list"] = list;
  t["first"] = first;
  t["last"] = last;
  t["join"] = join;
  t["map"] = map;
  t["select"] = select;
  t["reject"] = reject;
  t["selectattr"] = selectattr;
  t["rejectattr"] = rejectattr;
  t["sort"] = sort;
  t["dictsort"] = dictsort;
  t["unique"] = unique;
  t["min"] = min;
  t["max"] = max;
  t["sum"] = sum;
  t["reverse"] = reverse;
  t["attr"] = attr;
  t["indent"] = indent;
}

}  // namespace hadron::chat
