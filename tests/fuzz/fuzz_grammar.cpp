// libFuzzer: the grammar front ends (JSON Schema, regex, GBNF, choice lists) on any bytes
// compile within their limits or throw GrammarError; a compiled grammar's matcher never
// reaches a dead end (every prefix it accepts can be continued or ended) and rollback
// restores what a fresh matcher would say. Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "grammar/grammar_cache.h"
#include "grammar/grammar_error.h"
#include "grammar/matcher.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  using hadron::grammar::GrammarKind;
  const GrammarKind kinds[] = {GrammarKind::kJsonSchema, GrammarKind::kRegex, GrammarKind::kGbnf,
                               GrammarKind::kChoice};
  const GrammarKind kind = kinds[data[0] % 4];
  // Input: kind byte, grammar text, a 0xFF byte, then bytes to match.
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t split = rest.find('\xFF');
  const std::string source = rest.substr(0, split);
  const std::string input = split == std::string::npos ? "" : rest.substr(split + 1);
  hadron::grammar::GrammarLimits limits;
  limits.max_states = 20000;
  limits.max_rules = 2000;
  limits.max_repeat = 500;
  limits.max_compile_seconds = 2;
  std::shared_ptr<const hadron::grammar::Grammar> grammar;
  try {
    grammar = std::make_shared<const hadron::grammar::Grammar>(
        hadron::grammar::compile(kind, source, limits));
  } catch (const hadron::grammar::GrammarError&) {
    return 0;
  }
  hadron::grammar::Matcher m(grammar);
  size_t n_read = 0;
  for (char c : input) {
    if (!m.advance(static_cast<uint8_t>(c))) continue;
    ++n_read;
    if (!m.can_end() && !m.can_continue()) __builtin_trap();  // a dead end
  }
  const bool end = m.can_end(), more = m.can_continue();
  m.rollback(n_read);
  hadron::grammar::Matcher fresh(grammar);
  if (m.can_end() != fresh.can_end() || m.can_continue() != fresh.can_continue()) __builtin_trap();
  (void)end;
  (void)more;
  return 0;
}
