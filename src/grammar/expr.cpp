#include "grammar/expr.h"

#include <algorithm>
#include <array>

#include "core/utf8.h"

namespace hadron::grammar {
namespace {

ExprPtr make(Expr e) { return std::make_shared<const Expr>(std::move(e)); }

constexpr char32_t kMaxCodePoint = 0x10FFFF;

// Appends the byte-range sequences encoding [lo, hi] (same UTF-8 length on both ends is not
// required): splits until every byte position is an independent range (RE2's method).
void utf8_sequences(char32_t lo, char32_t hi, std::vector<ExprPtr>& out) {
  if (lo > hi) return;
  for (char32_t edge : {char32_t{0x7F}, char32_t{0x7FF}, char32_t{0xFFFF}}) {
    if (lo <= edge && hi > edge) {
      utf8_sequences(lo, edge, out);
      utf8_sequences(edge + 1, hi, out);
      return;
    }
  }
  if (lo < 0x80) {
    out.push_back(byte_ranges({{static_cast<uint8_t>(lo), static_cast<uint8_t>(hi)}}));
    return;
  }
  for (int i = 1; i < 4; ++i) {
    const char32_t mask = (char32_t{1} << (6 * i)) - 1;
    if ((lo & ~mask) != (hi & ~mask)) {
      if ((lo & mask) != 0) {
        utf8_sequences(lo, lo | mask, out);
        utf8_sequences((lo | mask) + 1, hi, out);
        return;
      }
      if ((hi & mask) != mask) {
        utf8_sequences(lo, (hi & ~mask) - 1, out);
        utf8_sequences(hi & ~mask, hi, out);
        return;
      }
    }
  }
  std::string a, b;
  utf8_append(a, lo);
  utf8_append(b, hi);
  std::vector<ExprPtr> bytes;
  for (size_t i = 0; i < a.size(); ++i)
    bytes.push_back(byte_ranges({{static_cast<uint8_t>(a[i]), static_cast<uint8_t>(b[i])}}));
  out.push_back(seq(std::move(bytes)));
}

}  // namespace

ExprPtr byte_ranges(std::vector<std::pair<uint8_t, uint8_t>> ranges) {
  Expr e;
  e.kind = ExprKind::kBytes;
  e.ranges = std::move(ranges);
  return make(std::move(e));
}

ExprPtr literal(std::string_view bytes) {
  std::vector<ExprPtr> items;
  for (char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    items.push_back(byte_ranges({{b, b}}));
  }
  return seq(std::move(items));
}

ExprPtr ref(int32_t rule) {
  Expr e;
  e.kind = ExprKind::kRef;
  e.rule = rule;
  return make(std::move(e));
}

ExprPtr seq(std::vector<ExprPtr> items) {
  if (items.size() == 1) return items[0];
  Expr e;
  e.kind = ExprKind::kSeq;
  e.items = std::move(items);
  return make(std::move(e));
}

ExprPtr alt(std::vector<ExprPtr> items) {
  if (items.size() == 1) return items[0];
  Expr e;
  e.kind = ExprKind::kAlt;
  e.items = std::move(items);
  return make(std::move(e));
}

ExprPtr repeat(ExprPtr item, int32_t min, int32_t max) {
  Expr e;
  e.kind = ExprKind::kRepeat;
  e.items = {std::move(item)};
  e.min = min;
  e.max = max;
  return make(std::move(e));
}

ExprPtr empty() { return make(Expr{}); }

std::vector<CodePointRange> normalize_ranges(std::vector<CodePointRange> ranges, bool negate) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<CodePointRange> merged;
  for (auto [lo, hi] : ranges) {
    if (lo > hi) continue;
    if (!merged.empty() && lo <= merged.back().second + 1)
      merged.back().second = std::max(merged.back().second, hi);
    else
      merged.push_back({lo, hi});
  }
  if (!negate) return merged;
  std::vector<CodePointRange> complement;
  char32_t next = 0;
  for (auto [lo, hi] : merged) {
    if (lo > next) complement.push_back({next, lo - 1});
    next = hi + 1;
  }
  if (next <= kMaxCodePoint) complement.push_back({next, kMaxCodePoint});
  return complement;
}

ExprPtr code_points(std::vector<CodePointRange> ranges, bool negate) {
  std::vector<ExprPtr> out;
  for (auto [lo, hi] : normalize_ranges(std::move(ranges), negate)) {
    hi = std::min(hi, kMaxCodePoint);
    if (lo <= 0xDFFF && hi >= 0xD800) {  // surrogates have no UTF-8 form
      if (lo < 0xD800) utf8_sequences(lo, 0xD7FF, out);
      if (hi > 0xDFFF) utf8_sequences(0xE000, hi, out);
    } else {
      utf8_sequences(lo, hi, out);
    }
  }
  if (out.empty()) return alt({});  // matches nothing
  return alt(std::move(out));
}

}  // namespace hadron::grammar
