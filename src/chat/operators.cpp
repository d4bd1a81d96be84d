// Python's arithmetic, `in`, iteration and slicing on template values.
#include <algorithm>
#include <cmath>

#include "chat/builtins.h"
#include "core/error.h"
#include "core/utf8.h"

namespace hadron::chat {
namespace {

const char* op_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::add:
      return "+";
    case BinaryOp::sub:
      return "-";
    case BinaryOp::mul:
      return "*";
    case BinaryOp::div:
      return "/";
    case BinaryOp::floordiv:
      return "//";
    case BinaryOp::mod:
      return "%";
    case BinaryOp::pow:
      return "**";
  }
  return "?";
}

[[noreturn]] void unsupported(BinaryOp op, const Value& a, const Value& b) {
  input_error("TypeError: unsupported operand type(s) for {}: '{}' and '{}'", op_symbol(op),
              type_name(a), type_name(b));
}

Value checked(bool overflow, const int64_t& result) {
  if (overflow) input_error("OverflowError: integer result out of range");
  return Value(result);
}

Value int_pow(int64_t base, int64_t exp) {
  if (exp < 0) return Value(std::pow(static_cast<double>(base), static_cast<double>(exp)));
  int64_t result = 1;
  while (exp-- > 0) {
    if (__builtin_mul_overflow(result, base, &result))
      input_error("OverflowError: integer result out of range");
    if (result == 0 || result == 1) break;
  }
  return Value(result);
}

Value int_op(BinaryOp op, int64_t x, int64_t y) {
  int64_t r = 0;
  switch (op) {
    case BinaryOp::add: {
      bool overflow = __builtin_add_overflow(x, y, &r);
      return checked(overflow, r);
    }
    case BinaryOp::sub: {
      bool overflow = __builtin_sub_overflow(x, y, &r);
      return checked(overflow, r);
    }
    case BinaryOp::mul: {
      bool overflow = __builtin_mul_overflow(x, y, &r);
      return checked(overflow, r);
    }
    case BinaryOp::div:
      if (y == 0) input_error("ZeroDivisionError: division by zero");
      return Value(static_cast<double>(x) / static_cast<double>(y));
    case BinaryOp::floordiv: {
      if (y == 0) input_error("ZeroDivisionError: integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) input_error("OverflowError: integer result out of range");
      int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
      return Value(q);
    }
    case BinaryOp::mod: {
      if (y == 0) input_error("ZeroDivisionError: integer division or modulo by zero");
      if (y == -1) return Value(int64_t{0});
      int64_t m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return Value(m);
    }
    case BinaryOp::pow:
      return int_pow(x, y);
  }
  return Value();
}

Value float_op(BinaryOp op, double x, double y) {
  switch (op) {
    case BinaryOp::add:
      return Value(x + y);
    case BinaryOp::sub:
      return Value(x - y);
    case BinaryOp::mul:
      return Value(x * y);
    case BinaryOp::div:
      if (y == 0) input_error("ZeroDivisionError: float division by zero");
      return Value(x / y);
    case BinaryOp::floordiv:
      if (y == 0) input_error("ZeroDivisionError: float floor division by zero");
      return Value(std::floor(x / y));
    case BinaryOp::mod: {
      if (y == 0) input_error("ZeroDivisionError: float modulo");
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return Value(m);
    }
    case BinaryOp::pow:
      return Value(std::pow(x, y));
  }
  return Value();
}

Value repeat(const Value& seq, int64_t times, size_t max_bytes) {
  if (times < 0) times = 0;
  if (seq.is_string()) {
    const std::string& s = seq.as_string();
    if (!s.empty() && static_cast<uint64_t>(times) > max_bytes / s.size())
      input_error("MemoryError: string repetition exceeds the output limit");
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += s;
    return Value(std::move(out));
  }
  const auto& items = seq.items();
  if (!items.empty() && static_cast<uint64_t>(times) > max_bytes / (items.size() * 16))
    input_error("MemoryError: list repetition exceeds the output limit");
  std::vector<Value> out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::list(std::move(out), seq.as_list().is_tuple());
}

}  // namespace

Value binary_op(BinaryOp op, const Value& a, const Value& b, size_t max_bytes) {
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return float_op(op, a.float_value(), b.float_value());
    return int_op(op, a.int_value(), b.int_value());
  }
  if (op == BinaryOp::add && a.is_string() && b.is_string()) {
    if (a.as_string().size() + b.as_string().size() > max_bytes)
      input_error("MemoryError: string exceeds the output limit");
    return Value(a.as_string() + b.as_string());
  }
  if (op == BinaryOp::add && a.is_list() && b.is_list() && a.as_list().is_sequence() &&
      a.as_list().kind == b.as_list().kind) {
    if ((a.items().size() + b.items().size()) * sizeof(Value) > max_bytes)
      input_error("MemoryError: list exceeds the output limit");
    std::vector<Value> items = a.items();
    items.insert(items.end(), b.items().begin(), b.items().end());
    return Value::list(std::move(items), a.as_list().is_tuple());
  }
  auto repeatable = [](const Value& v) {
    return v.is_string() || (v.is_list() && v.as_list().is_sequence());
  };
  if (op == BinaryOp::mul && repeatable(a) && (b.is_int() || b.is_bool()))
    return repeat(a, b.int_value(), max_bytes);
  if (op == BinaryOp::mul && repeatable(b) && (a.is_int() || a.is_bool()))
    return repeat(b, a.int_value(), max_bytes);
  if (op == BinaryOp::mod && a.is_string()) return Value(printf_format(a.as_string(), b));
  unsupported(op, a, b);
}

Value negate(const Value& v) {
  if (v.is_undefined()) fail_undefined(v);
  if (v.is_float()) return Value(-v.as_float());
  if (v.is_int() || v.is_bool()) {
    if (v.int_value() == INT64_MIN) input_error("OverflowError: integer result out of range");
    return Value(-v.int_value());
  }
  input_error("TypeError: bad operand type for unary -: '{}'", type_name(v));
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case ValueKind::undefined:
      return false;
    case ValueKind::string:
      if (!item.is_string())
        input_error("TypeError: 'in <string>' requires string as left operand, not {}",
                    type_name(item));
      return container.as_string().find(item.as_string()) != std::string::npos;
    case ValueKind::list:
      for (const Value& v : container.items())
        if (equals(v, item)) return true;
      return false;
    case ValueKind::dict:
      return container.as_dict().find(item) != nullptr;
    case ValueKind::none:
    case ValueKind::boolean:
    case ValueKind::integer:
    case ValueKind::floating:
    case ValueKind::namespace_object:
    case ValueKind::function:
      break;
  }
  input_error("TypeError: argument of type '{}' is not iterable", type_name(container));
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case ValueKind::undefined:
      return {};
    case ValueKind::list:
      return v.items();
    case ValueKind::dict: {
      std::vector<Value> keys;
      for (const auto& [k, val] : v.as_dict().entries) keys.push_back(k);
      return keys;
    }
    case ValueKind::string: {
      std::vector<Value> chars;
      for (char32_t c : utf8_decode(v.as_string())) chars.emplace_back(utf8_encode({&c, 1}));
      return chars;
    }
    case ValueKind::none:
    case ValueKind::boolean:
    case ValueKind::integer:
    case ValueKind::floating:
    case ValueKind::namespace_object:
    case ValueKind::function:
      break;
  }
  input_error("TypeError: '{}' object is not iterable", type_name(v));
}

namespace {

int64_t slice_bound(const Value* v, int64_t fallback) {
  if (!v || v->is_none()) return fallback;
  if (!v->is_int() && !v->is_bool())
    input_error("TypeError: slice indices must be integers or None");
  return v->int_value();
}

// Python's slice.indices(): the positions a slice selects from a sequence of length n.
std::vector<int64_t> slice_positions(int64_t n, const Value* start_v, const Value* stop_v,
                                     const Value* step_v) {
  int64_t step = slice_bound(step_v, 1);
  if (step == 0) input_error("ValueError: slice step cannot be zero");
  auto clamp = [&](int64_t i) {
    if (i < 0) i += n;
    return step > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
  };
  int64_t start = step > 0 ? 0 : n - 1, stop = step > 0 ? n : -1;
  if (start_v && !start_v->is_none()) start = clamp(slice_bound(start_v, 0));
  if (stop_v && !stop_v->is_none()) stop = clamp(slice_bound(stop_v, 0));
  std::vector<int64_t> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(i);
  return out;
}

}  // namespace

Value get_slice(const Value& obj, const Value* start, const Value* stop, const Value* step) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (obj.is_string()) {
    std::u32string chars = utf8_decode(obj.as_string());
    std::u32string out;
    for (int64_t i : slice_positions(static_cast<int64_t>(chars.size()), start, stop, step))
      out += chars[static_cast<size_t>(i)];
    return Value(utf8_encode(out));
  }
  if (obj.is_list() && obj.as_list().is_sequence()) {
    const auto& items = obj.items();
    std::vector<Value> out;
    for (int64_t i : slice_positions(static_cast<int64_t>(items.size()), start, stop, step))
      out.push_back(items[static_cast<size_t>(i)]);
    return Value::list(std::move(out), obj.as_list().is_tuple());
  }
  return Value::undefined(fmt::format("{} has no element slice", object_type_repr(obj)));
}

}  // namespace hadron::chat
