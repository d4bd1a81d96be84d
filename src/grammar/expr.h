// Grammar expressions over bytes, the common output of the front ends (regex, GBNF, JSON
// Schema). GrammarBuilder compiles each rule's expression into a small automaton.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace hadron::grammar {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

enum class ExprKind : uint8_t { kBytes, kRef, kSeq, kAlt, kRepeat };

struct Expr {
  ExprKind kind = ExprKind::kSeq;
  std::vector<std::pair<uint8_t, uint8_t>> ranges;  // kBytes: inclusive byte ranges
  int32_t rule = -1;                                // kRef
  std::vector<ExprPtr> items;                       // kSeq, kAlt; kRepeat: the one item
  int32_t min = 0;                                  // kRepeat
  int32_t max = -1;                                 // kRepeat; -1: unbounded
};

// A Unicode code-point range, inclusive.
using CodePointRange = std::pair<char32_t, char32_t>;

ExprPtr byte_ranges(std::vector<std::pair<uint8_t, uint8_t>> ranges);
ExprPtr literal(std::string_view bytes);
ExprPtr ref(int32_t rule);
ExprPtr seq(std::vector<ExprPtr> items);
ExprPtr alt(std::vector<ExprPtr> items);
ExprPtr repeat(ExprPtr item, int32_t min, int32_t max);
ExprPtr empty();
// The UTF-8 encodings of the code points in `ranges` (surrogates excluded); with `negate`,
// of every other code point.
ExprPtr code_points(std::vector<CodePointRange> ranges, bool negate);
// Sorted, merged ranges; with `negate`, their complement in [0, 0x10FFFF].
std::vector<CodePointRange> normalize_ranges(std::vector<CodePointRange> ranges, bool negate);

}  // namespace hadron::grammar
