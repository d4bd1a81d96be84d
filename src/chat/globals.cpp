// Global functions: jinja2's range/dict/namespace/joiner and transformers' raise_exception and
// strftime_now. None of them reaches outside the template's inputs (the clock aside).
#include <chrono>
#include <memory>

#include "chat/builtins.h"
#include "core/error.h"

namespace hadron::chat {
namespace {

constexpr int64_t kMaxRange = 100000;  // jinja2.sandbox.MAX_RANGE

int64_t int_arg(const Value& v) {
  if (!v.is_int() && !v.is_bool())
    input_error("TypeError: '{}' object cannot be interpreted as an integer", type_name(v));
  return v.int_value();
}

Value range(CallArgs& args) {
  if (!args.named.empty()) input_error("TypeError: range() takes no keyword arguments");
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3)
    input_error("TypeError: range expected 1 to 3 arguments, got {}", p.size());
  int64_t start = 0, stop = 0, step = 1;
  if (p.size() == 1) {
    stop = int_arg(p[0]);
  } else {
    start = int_arg(p[0]);
    stop = int_arg(p[1]);
    if (p.size() == 3) step = int_arg(p[2]);
  }
  if (step == 0) input_error("ValueError: range() arg 3 must not be zero");
  std::vector<Value> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (static_cast<int64_t>(out.size()) >= kMaxRange)
      input_error(
          "OverflowError: Range too big. The sandbox blocks ranges larger than MAX_RANGE ({}).",
          kMaxRange);
    out.emplace_back(i);
  }
  return Value::list(std::move(out));
}

// dict(mapping_or_pairs, **kwargs), as dict() and namespace() take them.
DictData dict_from_args(CallArgs& args, std::string_view function) {
  DictData d;
  if (args.positional.size() > 1)
    input_error("TypeError: {} expected at most 1 argument, got {}", function,
                args.positional.size());
  if (!args.positional.empty()) {
    const Value& src = args.positional[0];
    if (src.is_dict()) {
      d = src.as_dict();
    } else {
      for (const Value& pair : iterate(src)) {
        if (!pair.is_list() || pair.items().size() != 2)
          input_error("ValueError: dictionary update sequence element has wrong length");
        d.set(pair.items()[0], pair.items()[1]);
      }
    }
  }
  for (auto& [k, v] : args.named) d.set(Value(k), v);
  return d;
}

Value make_namespace(CallArgs& args) {
  NamespaceData ns;
  for (auto& [k, v] : dict_from_args(args, "namespace").entries) {
    if (!k.is_string()) input_error("TypeError: namespace keywords must be strings");
    ns.set(k.as_string(), v);
  }
  return Value::new_namespace(std::move(ns));
}

Value joiner(CallArgs& args) {
  std::string sep = to_str(ArgReader(args, "joiner", {"sep"}).get_or(0, Value(", ")));
  auto used = std::make_shared<bool>(false);
  return Value::function("joiner", [sep, used](CallArgs&) {
    if (!*used) {
      *used = true;
      return Value("");
    }
    return Value(sep);
  });
}

std::tm local_now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

}  // namespace

void add_globals(DictData& globals, std::optional<std::tm> now) {
  globals.set(Value("range"), Value::function("range", range));
  globals.set(Value("dict"), Value::function("dict", [](CallArgs& a) {
                return Value::dict(dict_from_args(a, "dict"));
              }));
  globals.set(Value("namespace"), Value::function("namespace", make_namespace));
  globals.set(Value("joiner"), Value::function("joiner", joiner));
  for (const char* name : {"cycler", "lipsum"})  // defined in jinja2; no template uses them
    globals.set(Value(name), Value::function(name, [name](CallArgs&) -> Value {
                  input_error("{}() is not supported by hadron", name);
                }));
  globals.set(Value("raise_exception"),
              Value::function("raise_exception", [](CallArgs& a) -> Value {
                Value message = ArgReader(a, "raise_exception", {"message"}).get_or(0, Value(""));
                input_error("TemplateError: {}", to_str(message));
              }));
  globals.set(Value("strftime_now"), Value::function("strftime_now", [now](CallArgs& a) {
                Value format = ArgReader(a, "strftime_now", {"format"}).get_or(0, Value(""));
                if (!format.is_string())
                  input_error("TypeError: strftime() argument 1 must be str, not {}",
                              type_name(format));
                std::tm tm = now ? *now : local_now();
                std::string buf(256 + format.as_string().size() * 16, '\0');
                size_t n = std::strftime(buf.data(), buf.size(), format.as_string().c_str(), &tm);
                buf.resize(n);
                return Value(std::move(buf));
              }));
}

}  // namespace hadron::chat
