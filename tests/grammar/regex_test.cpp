#include "grammar/regex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "grammar/grammar_error.h"
#include "test_util.h"

namespace hadron::grammar {
namespace {

TEST(Regex, MatchesWholeStrings) {
  auto g = share(compile_regex(R"(\d{3}-[a-c]+(x|yz)?)"));
  EXPECT_TRUE(matches(g, "123-abc"));
  EXPECT_TRUE(matches(g, "000-ayz"));
  EXPECT_TRUE(matches(g, "999-cx"));
  EXPECT_FALSE(matches(g, "12-abc"));
  EXPECT_FALSE(matches(g, "123-"));
  EXPECT_FALSE(matches(g, "123-abd"));
  EXPECT_FALSE(matches(g, "123-ay"));
}

TEST(Regex, ClassesEscapesAndUnicode) {
  auto g = share(compile_regex(R"([^a-z\s]{2}\.\u00e9.é?)"));
  EXPECT_TRUE(matches(g, "AB.é€"));
  EXPECT_TRUE(matches(g, "AB.é€é"));
  EXPECT_FALSE(matches(g, "aB.é€"));
  EXPECT_FALSE(matches(g, "A .é€"));
  EXPECT_FALSE(matches(g, "AB.é\n"));
  EXPECT_FALSE(matches(g, "AB.e€"));
  // A prefix of a multi-byte character is a viable prefix, a broken one is not.
  Matcher m(g);
  EXPECT_TRUE(m.advance("AB.\xC3"));
  EXPECT_FALSE(m.advance(static_cast<uint8_t>('x')));
}

TEST(Regex, BoundsAndAnchors) {
  auto g = share(compile_regex("^a{2,3}b{2,}c{0,1}$"));
  EXPECT_TRUE(matches(g, "aabb"));
  EXPECT_TRUE(matches(g, "aaabbbbbc"));
  EXPECT_FALSE(matches(g, "abb"));
  EXPECT_FALSE(matches(g, "aaaabb"));
  EXPECT_FALSE(matches(g, "aab"));
  EXPECT_FALSE(matches(g, "aabbcc"));
}

TEST(Regex, RollbackRestoresState) {
  auto g = share(compile_regex("(ab|cd)*e"));
  Matcher m(g);
  ASSERT_TRUE(m.advance("abcd"));
  ASSERT_TRUE(m.advance("ab"));
  m.rollback(3);  // back to "abc"
  EXPECT_FALSE(m.advance(static_cast<uint8_t>('e')));
  EXPECT_TRUE(m.advance("de"));
  EXPECT_TRUE(m.can_end());
  EXPECT_FALSE(m.can_continue());
}

TEST(Regex, RefusesWhatHasNoAutomaton) {
  for (const char* pattern : {"(a)\\1", "a(?=b)", "(?!a)b", "\\bword", "a**+", "(ab", "ab)", "[ab",
                              "a{3,2}", "\\q", "a{20000}"}) {
    EXPECT_THROW(compile_regex(pattern), GrammarError) << pattern;
  }
  try {
    compile_regex("ab(?<=c)");
    FAIL();
  } catch (const GrammarError& e) {
    EXPECT_NE(std::string(e.what()).find("lookaround"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
  }
}

TEST(Regex, StateLimitIsAnErrorNotAHang) {
  GrammarLimits limits;
  limits.max_states = 10000;
  EXPECT_THROW(compile_regex("(a{100}){100}", limits), GrammarError);
  EXPECT_THROW(compile_regex("((((a{50}){50}){50}){50})", limits), GrammarError);
}

struct MatchCost {
  double seconds;  // the fastest of three runs
  size_t n_items;  // Earley items made
};

MatchCost match_cost(const std::shared_ptr<const Grammar>& g, const std::string& text) {
  MatchCost cost{1e9, 0};
  for (int run = 0; run < 3; ++run) {
    const auto start = std::chrono::steady_clock::now();
    Matcher m(g);
    for (char c : text)
      if (!m.advance(static_cast<uint8_t>(c))) break;
    (void)m.can_end();
    cost.seconds =
        std::min(cost.seconds,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    cost.n_items = m.n_items();
  }
  return cost;
}

// Catastrophic-backtracking patterns: ten times the input makes ten times the Earley items
// (quadratic matching would make 100 times) and takes well under 100 times the time.
TEST(Regex, ReDoSPatternsStayLinear) {
  for (const char* pattern :
       {"(a+)+b", "(a|a)*b", "(a*)*b", "(a|aa)+b", "(.*a){12}", "([a-z]+)*[0-9]", "(\\w+\\s?)*x"}) {
    auto g = share(compile_regex(pattern));
    const MatchCost small = match_cost(g, std::string(4000, 'a'));
    const MatchCost large = match_cost(g, std::string(40000, 'a'));
    EXPECT_LE(large.n_items, 11 * small.n_items) << pattern;
    EXPECT_LT(large.seconds, 40 * small.seconds + 0.02)
        << pattern << ": " << small.seconds << " s -> " << large.seconds << " s";
    EXPECT_LT(large.seconds, 2.0) << pattern;
  }
}

}  // namespace
}  // namespace hadron::grammar
