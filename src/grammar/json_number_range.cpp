#include "grammar/json_number_range.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace hadron::grammar {
namespace {

ExprPtr digits(char lo, char hi) {
  return byte_ranges({{static_cast<uint8_t>(lo), static_cast<uint8_t>(hi)}});
}

// Decimal strings of equal length a <= b (no sign), digit by digit.
ExprPtr same_length(const std::string& a, const std::string& b) {
  if (a.empty()) return empty();
  if (a[0] == b[0]) return seq({digits(a[0], a[0]), same_length(a.substr(1), b.substr(1))});
  const size_t n = a.size() - 1;
  std::vector<ExprPtr> options = {
      seq({digits(a[0], a[0]), same_length(a.substr(1), std::string(n, '9'))})};
  if (a[0] + 1 <= b[0] - 1)
    options.push_back(
        seq({digits(static_cast<char>(a[0] + 1), static_cast<char>(b[0] - 1)),
             repeat(digits('0', '9'), static_cast<int32_t>(n), static_cast<int32_t>(n))}));
  options.push_back(seq({digits(b[0], b[0]), same_length(std::string(n, '0'), b.substr(1))}));
  return alt(std::move(options));
}

// Non-negative integers in [a, b]; b < 0 means unbounded.
ExprPtr non_negative(int64_t a, int64_t b) {
  const std::string sa = std::to_string(a);
  std::vector<ExprPtr> options;
  const size_t max_len = b < 0 ? sa.size() : std::to_string(b).size();
  for (size_t len = sa.size(); len <= max_len; ++len) {
    const std::string lo = len == sa.size() ? sa : "1" + std::string(len - 1, '0');
    const std::string hi = b >= 0 && len == max_len ? std::to_string(b) : std::string(len, '9');
    options.push_back(same_length(lo, hi));
  }
  if (b < 0)  // longer numbers than a: any
    options.push_back(
        seq({digits('1', '9'), repeat(digits('0', '9'), static_cast<int32_t>(sa.size()), -1)}));
  return alt(std::move(options));
}

}  // namespace

ExprPtr integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  std::vector<ExprPtr> options;
  if (!lo || *lo < 0) {  // negative numbers -x with x in [max(1, -hi), -lo]
    const int64_t x_min = hi && *hi < 0 ? -*hi : 1;
    const int64_t x_max = lo ? -*lo : -1;
    options.push_back(seq({literal("-"), non_negative(x_min, x_max)}));
  }
  if (!hi || *hi >= 0)
    options.push_back(non_negative(lo ? std::max<int64_t>(*lo, 0) : 0, hi ? *hi : -1));
  return alt(std::move(options));
}

ExprPtr number_range(std::optional<NumberBound> lo, std::optional<NumberBound> hi) {
  // Integers: the smallest and largest in range.
  std::optional<int64_t> int_lo, int_hi;
  if (lo) {
    int_lo = static_cast<int64_t>(std::ceil(lo->value));
    if (lo->exclusive && static_cast<double>(*int_lo) == lo->value) ++*int_lo;
  }
  if (hi) {
    int_hi = static_cast<int64_t>(std::floor(hi->value));
    if (hi->exclusive && static_cast<double>(*int_hi) == hi->value) --*int_hi;
  }
  std::vector<ExprPtr> options;
  if (!int_lo || !int_hi || *int_lo <= *int_hi) options.push_back(integer_range(int_lo, int_hi));
  const ExprPtr fraction = seq({literal("."), repeat(digits('0', '9'), 0, -1), digits('1', '9')});
  // x = I.F in (I, I + 1): needs I >= lo and I + 1 <= hi.
  const int64_t pos_lo = lo ? std::max<int64_t>(0, static_cast<int64_t>(std::ceil(lo->value))) : 0;
  const int64_t pos_hi = hi ? static_cast<int64_t>(std::floor(hi->value)) - 1 : -1;
  if (!hi || pos_hi >= pos_lo) options.push_back(seq({non_negative(pos_lo, pos_hi), fraction}));
  // x = -I.F in (-I - 1, -I): needs -I - 1 >= lo and -I <= hi.
  const int64_t neg_lo = hi ? std::max<int64_t>(0, static_cast<int64_t>(std::ceil(-hi->value))) : 0;
  const int64_t neg_hi = lo ? static_cast<int64_t>(std::floor(-lo->value)) - 1 : -1;
  if (!lo || neg_hi >= neg_lo)
    options.push_back(seq({literal("-"), non_negative(neg_lo, neg_hi), fraction}));
  if (options.empty()) return nullptr;
  return alt(std::move(options));
}

ExprPtr integer_multiples(GrammarBuilder& builder, double multiple_of, const std::string& name) {
  constexpr int64_t kMaxModulus = 100;
  int64_t m = 0;  // the smallest integer multiple of multiple_of
  for (int64_t n = 1; n <= 1000000 && m == 0; ++n) {
    const double v = multiple_of * static_cast<double>(n);
    if (v > kMaxModulus + 0.5) return nullptr;
    if (std::abs(v - std::round(v)) <= 1e-9 * std::max(1.0, v)) m = std::llround(v);
  }
  if (m == 0) return nullptr;
  // rules[r]: the digits after a prefix whose value is r modulo m, up to a multiple.
  std::vector<int32_t> rules(static_cast<size_t>(m));
  for (int64_t r = 0; r < m; ++r) rules[r] = builder.declare(name + "/mod" + std::to_string(r));
  auto digit_then = [&](int64_t r, char d) {
    return seq({digits(d, d), ref(rules[(10 * r + (d - '0')) % m])});
  };
  for (int64_t r = 0; r < m; ++r) {
    std::vector<ExprPtr> options;
    if (r == 0) options.push_back(empty());
    for (char d = '0'; d <= '9'; ++d) options.push_back(digit_then(r, d));
    builder.define(rules[r], alt(std::move(options)));
  }
  std::vector<ExprPtr> leading;
  for (char d = '1'; d <= '9'; ++d) leading.push_back(digit_then(0, d));
  return alt({literal("0"), seq({repeat(literal("-"), 0, 1), alt(std::move(leading))})});
}

}  // namespace hadron::grammar
