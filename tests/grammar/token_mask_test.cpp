#include "grammar/token_mask.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <set>

#include "grammar/gbnf.h"
#include "grammar/grammar_cache.h"
#include "grammar/grammar_error.h"
#include "grammar/json_schema.h"
#include "grammar/regex.h"
#include "grammar/tokenizer_vocabulary.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"

namespace hadron::grammar {
namespace {

// Every string over `alphabet` of length <= max_len.
std::vector<std::string> all_strings(const std::string& alphabet, size_t max_len) {
  std::vector<std::string> out = {""};
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].size() < max_len)
      for (char c : alphabet) out.push_back(out[i] + c);
  return out;
}

// Brute force: with a finite language known by an independent matcher (std::regex), a token
// may follow `prefix` exactly when prefix + token starts some string of the language, and
// EOS exactly when the prefix is one.
TEST(TokenMask, AdmitsExactlyTheTokensWithAValidContinuation) {
  const std::string alphabet = "abc\"";
  const std::vector<std::string> strings = all_strings(alphabet, 7);
  std::vector<std::string> vocab_bytes = {""};  // token 0: a special token
  for (const std::string& s : all_strings(alphabet, 3))
    if (!s.empty()) vocab_bytes.push_back(s);
  vocab_bytes.push_back("abcabc");
  vocab_bytes.push_back("\"\"\"\"");
  vocab_bytes.push_back("ab");  // a duplicate of another token's bytes
  const auto eos = static_cast<int32_t>(vocab_bytes.size());
  vocab_bytes.push_back("");
  const auto shared_vocab =
      std::make_shared<const TokenVocabulary>(vocab_bytes, std::vector<int32_t>{eos});
  const TokenVocabulary& vocab = *shared_vocab;
  std::mt19937 rng(7);
  for (const char* pattern : {"(a|bc){0,3}\"?", "a?b?c?(\"a\"|\"bb\")", "[ab]{2,5}|c{1,2}\"",
                              "(abc|ab|a)(c|\"){1,2}", "\"[^\"]{0,4}\""}) {
    const std::regex reference(pattern);
    std::set<std::string> language, prefixes;
    for (const std::string& s : strings)
      if (std::regex_match(s, reference)) {
        language.insert(s);
        for (size_t n = 0; n <= s.size(); ++n) prefixes.insert(s.substr(0, n));
      }
    ASSERT_FALSE(language.empty()) << pattern;
    auto g = share(compile_regex(pattern));
    const TokenMasker masker(g, shared_vocab);
    for (int walk = 0; walk < 20; ++walk) {
      Matcher m(g);
      std::string prefix;
      std::vector<uint32_t> mask(mask_words(vocab.size()));
      for (int step = 0; step < 8; ++step) {
        masker.fill_mask(m, mask);
        std::vector<int32_t> allowed;
        for (int32_t t = 0; t < vocab.size(); ++t) {
          const bool expected =
              t == eos ? language.contains(prefix)
                       : !vocab_bytes[t].empty() && prefixes.contains(prefix + vocab_bytes[t]);
          ASSERT_EQ(mask_allows(mask, t), expected)
              << pattern << " after '" << prefix << "' token '" << vocab_bytes[t] << "'";
          if (expected) allowed.push_back(t);
        }
        ASSERT_FALSE(allowed.empty()) << pattern << " after '" << prefix << "'";
        const int32_t pick = allowed[rng() % allowed.size()];
        if (pick == eos) break;
        ASSERT_TRUE(vocab.accept(m, pick));
        prefix += vocab_bytes[pick];
      }
    }
  }
}

// Nesting inside one token: "((x))" and "(x))" differ only in which set a rule began in, so
// the walk's determinized sets must tell the origins apart. Reference: the prefixes of
// "(" * n + "x" + ")" * n.
TEST(TokenMask, NestedRulesWithinOneToken) {
  auto is_prefix = [](const std::string& s) {
    const size_t open = s.find_first_not_of('(');
    if (open == std::string::npos) return true;
    if (s[open] != 'x') return false;
    const std::string rest = s.substr(open + 1);
    return rest.find_first_not_of(')') == std::string::npos && rest.size() <= open;
  };
  std::vector<std::string> vocab_bytes = {""};
  for (const std::string& t : all_strings("(x)", 5))
    if (!t.empty()) vocab_bytes.push_back(t);
  const auto eos = static_cast<int32_t>(vocab_bytes.size());
  vocab_bytes.push_back("");
  const auto vocab =
      std::make_shared<const TokenVocabulary>(vocab_bytes, std::vector<int32_t>{eos});
  auto g = share(compile_gbnf(R"g(root ::= "x" | "(" root ")")g"));
  const TokenMasker masker(g, vocab);
  std::vector<uint32_t> mask(mask_words(vocab->size()));
  for (const std::string& prefix : {"", "(", "((", "(((x", "((x)"}) {
    Matcher m(g);
    ASSERT_TRUE(m.advance(prefix));
    masker.fill_mask(m, mask);
    for (int32_t t = 1; t < eos; ++t)
      EXPECT_EQ(mask_allows(mask, t), is_prefix(prefix + vocab_bytes[t]))
          << "after '" << prefix << "' token '" << vocab_bytes[t] << "'";
  }
}

// On a real vocabulary the trie walk agrees with trying every token on its own, for flat and
// nested (recursive) grammars, whose Earley sets the walk determinizes.
TEST(TokenMask, TrieWalkEqualsPerTokenCheck) {
  const Tokenizer tokenizer = Tokenizer::load(HADRON_SOURCE_DIR "/models/default");
  const auto shared_vocab =
      std::make_shared<const TokenVocabulary>(make_token_vocabulary(tokenizer, {0}));
  const TokenVocabulary& vocab = *shared_vocab;
  const std::vector<std::shared_ptr<const Grammar>> grammars = {
      share(compile_json_schema(R"({"type": "object", "properties": {"name": {"type":
      "string", "maxLength": 12}, "n": {"type": "integer", "minimum": 0, "maximum": 500}},
      "required": ["name", "n"]})")),
      share(compile_any_json_object()), share(compile_gbnf(R"g(root ::= "(" list ")"
list ::= item | item "," list
item ::= [a-c]+ | "(" list ")" | "\"" [^"]* "\"")g"))};
  std::mt19937 rng(3);
  for (const auto& g : grammars) {
    const TokenMasker masker(g, shared_vocab);
    Matcher m(g);
    std::vector<uint32_t> mask(mask_words(vocab.size()));
    for (int step = 0; step < 40; ++step) {
      masker.fill_mask(m, mask);
      std::vector<int32_t> allowed;
      for (int32_t t = 0; t < vocab.size(); ++t) {
        bool ok;
        if (vocab.is_eos(t)) {
          ok = m.can_end();
        } else {
          ok = !vocab.bytes(t).empty() && m.advance(vocab.bytes(t));
          if (ok) m.rollback(vocab.bytes(t).size());
        }
        ASSERT_EQ(mask_allows(mask, t), ok) << "token " << t << " '" << vocab.bytes(t) << "'";
        if (ok) allowed.push_back(t);
      }
      ASSERT_FALSE(allowed.empty());
      const int32_t pick = allowed[rng() % allowed.size()];
      if (vocab.is_eos(pick)) break;
      ASSERT_TRUE(vocab.accept(m, pick));
    }
  }
}

// Masks computed ahead on the worker equal masks computed when asked, on fresh maskers.
TEST(TokenMask, PrefetchedMasksEqualMasksComputedOnDemand) {
  const Tokenizer tokenizer = Tokenizer::load(HADRON_SOURCE_DIR "/models/default");
  const auto vocab = std::make_shared<const TokenVocabulary>(make_token_vocabulary(tokenizer, {0}));
  auto g = share(compile_json_schema(R"({"type": "object", "properties": {"a": {"type":
      "array", "items": {"type": "string"}}, "b": {"type": "number"}}})"));
  const auto ahead = std::make_shared<const TokenMasker>(g, vocab);
  const TokenMasker on_demand(g, vocab);
  Matcher m(g);
  std::vector<uint32_t> mask(mask_words(vocab->size())), expected(mask.size());
  std::mt19937 rng(11);
  for (int step = 0; step < 60; ++step) {
    ahead->prefetch(m);
    ahead->fill_mask(m, mask);
    on_demand.fill_mask(m, expected);
    ASSERT_EQ(mask, expected) << "step " << step;
    std::vector<int32_t> allowed;
    for (int32_t t = 0; t < vocab->size(); ++t)
      if (mask_allows(mask, t)) allowed.push_back(t);
    ASSERT_FALSE(allowed.empty());
    const int32_t pick = allowed[rng() % allowed.size()];
    if (vocab->is_eos(pick)) break;
    ASSERT_TRUE(vocab->accept(m, pick));
  }
}

TEST(TokenMask, TokenBytesOfAByteLevelVocabulary) {
  const Tokenizer tokenizer = Tokenizer::load(HADRON_SOURCE_DIR "/models/default");
  const std::vector<std::string> bytes = token_bytes(tokenizer);
  // Encoding then joining token bytes gives the text back, whatever the bytes.
  const std::string text = "{\"name\": \"J\u00f6rg\", \"n\": 12}\n\t\u6f22";
  std::string joined;
  for (int32_t id : tokenizer.encode(text, false)) joined += bytes.at(id);
  EXPECT_EQ(joined, text);
}

}  // namespace
}  // namespace hadron::grammar

namespace hadron::grammar {
namespace {

TEST(GrammarCache, SameContentCompilesOnce) {
  auto vocab = std::make_shared<const TokenVocabulary>(std::vector<std::string>{"", "a", "b", "ab"},
                                                       std::vector<int32_t>{0});
  GrammarCache cache(vocab, 2);
  const auto first = cache.get(GrammarKind::kRegex, "a+b");
  EXPECT_EQ(cache.get(GrammarKind::kRegex, "a+b"), first);
  EXPECT_EQ(cache.n_compiled(), 1u);
  EXPECT_NE(cache.get(GrammarKind::kChoice, R"(["a+b"])"), first);  // same text, other kind
  EXPECT_THROW(cache.get(GrammarKind::kGbnf, "root ::= ("), GrammarError);
  cache.get(GrammarKind::kRegex, "b");
  cache.get(GrammarKind::kRegex, "ab");  // capacity 2: "a+b" is the least recent, dropped
  EXPECT_NE(cache.get(GrammarKind::kRegex, "a+b"), first);
  EXPECT_EQ(cache.n_compiled(), 5u);
}

}  // namespace
}  // namespace hadron::grammar
