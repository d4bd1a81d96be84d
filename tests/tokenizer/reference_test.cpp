// hadron's tokenizer against Hugging Face tokenizers (reference.mjs) on the corpus: ids with and
// without special tokens, decoded text with and without special tokens, for the corpus ids and
// for random id sequences. Zero mismatches allowed; the first few are printed.
#include <gtest/gtest.h>

#include <map>

#include "core/utf8.h"
#include "reference_data.h"
#include "tokenizer/tokenizer.h"

namespace hadron::test {
namespace {

using nlohmann::json;

constexpr const char* kReplacementChar = "\xEF\xBF\xBD";

std::string ids_string(const std::vector<int32_t>& ids) {
  std::string out;
  for (const int32_t id : ids) out += std::to_string(id) + " ";
  return out;
}

class ReferenceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    reference_ = reference_results(GetParam());
    tokenizer_ = std::make_unique<Tokenizer>(Tokenizer::load(reference_.at("tokenizer")));
  }

  json reference_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

TEST_P(ReferenceTest, EncodeMatches) {
  std::map<std::pair<std::string, size_t>, const CorpusSample*> by_key;
  for (const CorpusSample& sample : corpus_samples()) by_key[{sample.file, sample.index}] = &sample;
  size_t n_mismatches = 0, n_ids = 0;
  for (const json& expected : reference_.at("samples")) {
    const CorpusSample* sample = by_key.at({expected.at("file"), expected.at("index")});
    for (const bool add_special : {false, true}) {
      const auto want =
          expected.at(add_special ? "ids_special" : "ids").get<std::vector<int32_t>>();
      const std::vector<int32_t> got = tokenizer_->encode(sample->bytes, add_special);
      n_ids += want.size();
      if (got == want) continue;
      if (++n_mismatches <= 5) {
        ADD_FAILURE() << sample->file << "#" << sample->index << " add_special=" << add_special
                      << "\n  text: "
                      << json(sample->bytes).dump(-1, ' ', false, json::error_handler_t::replace)
                      << "\n  want: " << ids_string(want) << "\n  got:  " << ids_string(got);
      }
    }
  }
  std::printf("[%s] encode: %zu mismatches over %zu samples x 2 (%zu ids)\n", GetParam().c_str(),
              n_mismatches, reference_.at("samples").size(), n_ids);
  EXPECT_EQ(n_mismatches, 0u);
}

TEST_P(ReferenceTest, DecodeMatches) {
  size_t n_mismatches = 0, n_sequences = 0;
  for (const char* group : {"samples", "random"}) {
    for (const json& expected : reference_.at(group)) {
      const auto ids = expected.at("ids").get<std::vector<int32_t>>();
      for (const bool skip : {false, true}) {
        const std::string want = expected.at(skip ? "text_skip" : "text");
        const std::string got = tokenizer_->decode(ids, skip);
        ++n_sequences;
        if (got == want) continue;
        if (++n_mismatches <= 5) {
          ADD_FAILURE() << group << " ids: " << ids_string(ids) << " skip=" << skip
                        << "\n  want: " << json(want).dump() << "\n  got:  "
                        << json(got).dump(-1, ' ', false, json::error_handler_t::replace);
        }
      }
    }
  }
  std::printf("[%s] decode: %zu mismatches over %zu decodes\n", GetParam().c_str(), n_mismatches,
              n_sequences);
  EXPECT_EQ(n_mismatches, 0u);
}

// Streaming the same ids gives pieces that are valid UTF-8 and add up to decode(all ids); for
// ids of valid text no piece ever holds U+FFFD (no character was emitted half-done).
TEST_P(ReferenceTest, IncrementalEqualsDecode) {
  size_t n_streams = 0;
  for (const char* group : {"samples", "random"}) {
    for (const json& expected : reference_.at(group)) {
      const auto ids = expected.at("ids").get<std::vector<int32_t>>();
      for (const bool skip : {false, true}) {
        const std::string whole = tokenizer_->decode(ids, skip);
        IncrementalDecoder stream(*tokenizer_, skip);
        std::string joined;
        for (const int32_t id : ids) {
          const std::string piece = stream.push(id);
          ASSERT_TRUE(is_valid_utf8(piece)) << group << ": " << ids_string(ids);
          if (whole.find(kReplacementChar) == std::string::npos) {
            ASSERT_EQ(piece.find(kReplacementChar), std::string::npos) << ids_string(ids);
          }
          joined += piece;
        }
        joined += stream.finish();
        ASSERT_EQ(joined, whole) << group << " skip=" << skip << ": " << ids_string(ids);
        ++n_streams;
      }
    }
  }
  std::printf("[%s] incremental: %zu streams equal their decode\n", GetParam().c_str(), n_streams);
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, ReferenceTest,
                         ::testing::ValuesIn(reference_tokenizer_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hadron::test
