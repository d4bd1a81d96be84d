#include "engine/stop_checker.h"

#include <gtest/gtest.h>

#include <random>

namespace hadron {
namespace {

// Feeds `text` in the given chunk sizes and returns everything emitted.
std::string run(StopChecker& checker, const std::string& text, std::vector<size_t> chunks) {
  std::string out;
  size_t pos = 0;
  for (size_t len : chunks) {
    out += checker.push(text.substr(pos, len));
    pos += len;
  }
  out += checker.push(text.substr(pos));
  return out + checker.flush();
}

TEST(StopChecker, StopsAcrossChunkBoundariesAndExcludesTheStop) {
  StopChecker checker({"END", "\n\n"});
  EXPECT_EQ(run(checker, "hello wEN world ENDtrailing", {3, 4, 2, 5, 1, 1, 1}), "hello wEN world ");
  EXPECT_TRUE(checker.stopped());
  EXPECT_EQ(checker.matched(), "END");
}

TEST(StopChecker, ReportsTheEarliestStopThatMatched) {
  StopChecker checker({"world", "lo"});
  EXPECT_EQ(checker.matched(), "");
  EXPECT_EQ(checker.push("hello world"), "hel");
  EXPECT_EQ(checker.matched(), "lo");
}

TEST(StopChecker, HoldsBackOnlyPossibleStopPrefixes) {
  StopChecker checker({"</s>"});
  EXPECT_EQ(checker.push("abc<"), "abc");
  EXPECT_EQ(checker.push("/x"), "</x");
  EXPECT_EQ(checker.push("</"), "");
  EXPECT_EQ(checker.flush(), "</");
  EXPECT_FALSE(checker.stopped());
}

TEST(StopChecker, RandomChunkingsAgreeWithWholeText) {
  std::mt19937 rng(5);
  const std::string alphabet = "ab\n";
  for (int trial = 0; trial < 500; ++trial) {
    std::string text;
    for (int i = 0; i < 30; ++i) text += alphabet[rng() % alphabet.size()];
    const std::vector<std::string> stops = {"aab", "\n\n", "bba"};
    size_t expected_end = std::string::npos;
    for (const std::string& s : stops) expected_end = std::min(expected_end, text.find(s));
    const std::string expected = text.substr(0, expected_end);
    std::vector<size_t> chunks;
    for (size_t left = text.size(); left > 0;) {
      const size_t len = std::min<size_t>(left, 1 + rng() % 4);
      chunks.push_back(len);
      left -= len;
    }
    StopChecker checker(stops);
    EXPECT_EQ(run(checker, text, chunks), expected) << text;
  }
}

}  // namespace
}  // namespace hadron
