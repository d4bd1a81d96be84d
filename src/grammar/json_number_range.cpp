#include "grammar/json_number_range.h"

#include <algorithm>
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

}  // namespace hadron::grammar
