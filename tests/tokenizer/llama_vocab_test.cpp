// Tokenizers built from llama.cpp vocabularies (GGUF files in tests/data and small hand-made
// ones): decoding inverts encoding, streaming equals decoding, the post-processor adds the
// model type's BOS/CLS/SEP, and a bad vocabulary is a clear InputError.
#include "tokenizer/llama_vocab.h"

#include <gtest/gtest.h>

#include <cstring>

#include "loader/gguf_tokenizer.h"
#include "reference_data.h"
#include "tokenizer/tokenizer.h"

namespace hadron::test {
namespace {

namespace fs = std::filesystem;
using tok::LlamaTokenType;
using tok::LlamaVocab;

fs::path vocab_file(const std::string& name) {
  return fs::path(HADRON_TEST_DATA_DIR) / "tokenizer-tests/llama.cpp" /
         ("ggml-vocab-" + name + ".gguf");
}

// llama.cpp's test inputs (the same 46 in every set with a .gguf) and one more.
std::vector<std::string> texts() {
  const std::string all = read_file(vocab_file("gpt-2").string() + ".inp");
  std::vector<std::string> out = {"caf\xc3\xa9 \xe2\x82\xac 12345\r\n"};
  const std::string separator = "\n__ggml_vocab_test__\n";
  for (size_t start = 0, hit; (hit = all.find(separator, start)) != std::string::npos;
       start = hit + separator.size()) {
    out.push_back(all.substr(start, hit - start));
  }
  return out;
}

std::string stream(const Tokenizer& tokenizer, const std::vector<int32_t>& ids) {
  IncrementalDecoder decoder(tokenizer, false);
  std::string text;
  for (const int32_t id : ids) text += decoder.push(id);
  return text + decoder.finish();
}

class GgufRoundTrip : public ::testing::TestWithParam<std::string> {};

// Byte-level BPE and SentencePiece BPE (byte fallback) lose nothing.
TEST_P(GgufRoundTrip, DecodeInvertsEncode) {
  const Tokenizer tokenizer = load_gguf_tokenizer(vocab_file(GetParam()));
  for (const std::string& text : texts()) {
    const std::vector<int32_t> ids = tokenizer.encode(text, false);
    EXPECT_EQ(tokenizer.decode(ids, false), text) << GetParam();
    EXPECT_EQ(stream(tokenizer, ids), text) << GetParam();
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, GgufRoundTrip,
                         ::testing::Values("gpt-2", "mpt", "starcoder", "refact", "falcon",
                                           "deepseek-llm", "deepseek-coder", "llama-spm", "phi-3",
                                           "baichuan", "gpt-neox"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(GgufVocab, WordPieceDecodesAsBert) {
  const Tokenizer tokenizer = load_gguf_tokenizer(vocab_file("bert-bge"));
  const std::vector<int32_t> ids = tokenizer.encode("Hello, world! Discard Äpfel.", true);
  EXPECT_EQ(ids.front(), 101);  // [CLS]
  EXPECT_EQ(ids.back(), 102);   // [SEP]
  EXPECT_EQ(tokenizer.decode(ids, true), "hello, world! discard apfel.");
  EXPECT_EQ(tokenizer.decode(ids, false), "[CLS] hello, world! discard apfel. [SEP]");
  EXPECT_EQ(stream(tokenizer, ids), tokenizer.decode(ids, false));
  EXPECT_EQ(tokenizer.id_to_token(2094), "##d");
  EXPECT_EQ(tokenizer.token_to_id("months"), 2706);
}

// A GGUF vocabulary gives the ids that Hugging Face tokenizers gives with the model's
// tokenizer.json (reference.mjs builds it from the same vocabulary) on the whole corpus:
// WordPiece (bge), Falcon's split of digits after ByteLevel, DeepSeek's character classes.
class GgufMatchesReference : public ::testing::TestWithParam<std::pair<const char*, const char*>> {
};

TEST_P(GgufMatchesReference, OnTheCorpus) {
  const auto [gguf_name, reference_name] = GetParam();
  const Tokenizer tokenizer = load_gguf_tokenizer(vocab_file(gguf_name));
  const nlohmann::json reference = reference_results(reference_name);
  const std::vector<CorpusSample>& samples = corpus_samples();
  ASSERT_EQ(reference.at("samples").size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const nlohmann::json& want = reference.at("samples")[i];
    EXPECT_EQ(tokenizer.encode(samples[i].bytes, false), want.at("ids").get<std::vector<int32_t>>())
        << samples[i].file << "#" << samples[i].index;
    EXPECT_EQ(tokenizer.encode(samples[i].bytes, true),
              want.at("ids_special").get<std::vector<int32_t>>());
    EXPECT_EQ(tokenizer.decode(want.at("ids").get<std::vector<int32_t>>(), false),
              want.at("text").get<std::string>());
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, GgufMatchesReference,
                         ::testing::Values(std::pair{"bert-bge", "bert_bge"},
                                           std::pair{"falcon", "falcon"},
                                           std::pair{"deepseek-llm", "deepseek_llm"},
                                           std::pair{"deepseek-coder", "deepseek_coder"}),
                         [](const auto& info) { return std::string(info.param.second); });

// The pieces, scores and types of a SentencePiece model file (ModelProto field 1, repeated
// SentencePiece {1: piece, 2: score, 3: type}), as llama.cpp's converter reads them.
LlamaVocab vocab_of_sentencepiece(const std::string& bytes) {
  LlamaVocab vocab;
  vocab.model = "llama";
  size_t pos = 0;
  const auto varint = [&](std::string_view data, size_t& at) {
    uint64_t value = 0;
    for (int shift = 0; at < data.size(); shift += 7) {
      const auto byte = static_cast<uint8_t>(data[at++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) break;
    }
    return value;
  };
  const auto skip = [&](std::string_view data, size_t& at, uint64_t wire) {
    if (wire == 0)
      varint(data, at);
    else if (wire == 1)
      at += 8;
    else if (wire == 2)
      at += varint(data, at);
    else if (wire == 5)
      at += 4;
  };
  while (pos < bytes.size()) {
    const uint64_t key = varint(bytes, pos);
    if (key != ((1 << 3) | 2)) {
      skip(bytes, pos, key & 7);
      continue;
    }
    const std::string_view piece = std::string_view(bytes).substr(pos, varint(bytes, pos));
    pos += piece.size();
    vocab.tokens.emplace_back();
    vocab.scores.push_back(0);
    vocab.token_types.push_back(LlamaTokenType::kNormal);
    for (size_t at = 0; at < piece.size();) {
      const uint64_t field = varint(piece, at);
      if (field == ((1 << 3) | 2)) {
        const size_t n = varint(piece, at);
        vocab.tokens.back() = std::string(piece.substr(at, n));
        at += n;
      } else if (field == ((2 << 3) | 5)) {
        std::memcpy(&vocab.scores.back(), piece.data() + at, 4);
        at += 4;
      } else if (field == ((3 << 3) | 0)) {
        vocab.token_types.back() = static_cast<LlamaTokenType>(varint(piece, at));
      } else {
        skip(piece, at, field & 7);
      }
    }
  }
  vocab.bos_id = 1;
  return vocab;
}

// Merges rebuilt from SentencePiece scores equal the ones transformers wrote into Mistral v1's
// tokenizer.json: the vocabulary of its tokenizer.model gives Hugging Face's ids on the corpus.
TEST(GgufVocab, SentencePieceScoresGiveTheReferenceMerges) {
  const LlamaVocab vocab = vocab_of_sentencepiece(
      read_file(fs::path(HADRON_TEST_DATA_DIR) /
                "tokenizers/mistralai__Mixtral-8x7B-Instruct-v0.1/tokenizer.model"));
  ASSERT_EQ(vocab.tokens.size(), 32000u);
  const Tokenizer tokenizer = Tokenizer::from_llama_vocab(vocab, "mistral v1 tokenizer.model");
  const nlohmann::json reference = reference_results("mistral_v1");
  const std::vector<CorpusSample>& samples = corpus_samples();
  ASSERT_EQ(reference.at("samples").size(), samples.size());
  size_t n_mismatches = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const nlohmann::json& want = reference.at("samples")[i];
    n_mismatches +=
        tokenizer.encode(samples[i].bytes, false) != want.at("ids").get<std::vector<int32_t>>();
    n_mismatches += tokenizer.encode(samples[i].bytes, true) !=
                    want.at("ids_special").get<std::vector<int32_t>>();
    n_mismatches += tokenizer.decode(want.at("ids").get<std::vector<int32_t>>(), false) !=
                    want.at("text").get<std::string>();
  }
  EXPECT_EQ(n_mismatches, 0u);
}

TEST(GgufVocab, SpecialTokensAndFlags) {
  const Tokenizer spm = load_gguf_tokenizer(vocab_file("llama-spm"));
  EXPECT_EQ(spm.encode("Hello", true), (std::vector<int32_t>{1, 15043}));  // add_bos_token
  EXPECT_EQ(spm.encode("<s>", false), std::vector<int32_t>{1});            // control token
  EXPECT_TRUE(spm.is_special(2));
  const Tokenizer gpt2 = load_gguf_tokenizer(vocab_file("gpt-2"));
  EXPECT_EQ(gpt2.encode("Hello", true), std::vector<int32_t>{15496});  // no BOS by default
  EXPECT_EQ(gpt2.encode("<|endoftext|>", false), std::vector<int32_t>{50256});
  EXPECT_EQ(gpt2.vocab_size(), 50257);
  // llama.cpp's "[PAD<id>]" fillers are not tokens of the HF tokenizer: no match in the text.
  const Tokenizer coder = load_gguf_tokenizer(vocab_file("deepseek-coder"));
  EXPECT_EQ(coder.vocab_size(), 32022);  // HF's len(tokenizer): the fillers come after
  EXPECT_EQ(coder.id_to_token(32022), "");
  EXPECT_GT(coder.encode("[PAD32022]", false).size(), 1u);
  EXPECT_EQ(coder.encode("<|EOT|>", false), std::vector<int32_t>{32021});  // user-defined
}

LlamaVocab tiny_bpe() {
  LlamaVocab vocab;
  vocab.model = "gpt2";
  vocab.tokens = {"a", "b", "ab", "<eos>"};
  vocab.token_types = {LlamaTokenType::kNormal, LlamaTokenType::kNormal, LlamaTokenType::kNormal,
                       LlamaTokenType::kControl};
  vocab.merges = {"a b"};
  vocab.eos_id = 3;
  return vocab;
}

TEST(GgufVocab, TinyVocabularies) {
  LlamaVocab bpe = tiny_bpe();
  bpe.add_eos = true;
  const Tokenizer tokenizer = Tokenizer::from_llama_vocab(bpe, "tiny");
  EXPECT_EQ(tokenizer.encode("abab<eos>a", true), (std::vector<int32_t>{2, 2, 3, 0, 3}));

  // An EOS the file marks unused (so neither in the model nor added) is still an id of the
  // tokenizer, since the post-processor adds it (found by fuzz_gguf_metadata).
  bpe.tokens.push_back("<unused>");
  bpe.token_types.push_back(LlamaTokenType::kUnused);
  bpe.eos_id = 4;
  const Tokenizer unused_eos = Tokenizer::from_llama_vocab(bpe, "tiny-unused-eos");
  const std::vector<int32_t> ids = unused_eos.encode("ab", true);
  EXPECT_EQ(ids, (std::vector<int32_t>{2, 4}));
  EXPECT_EQ(unused_eos.vocab_size(), 5);
  EXPECT_EQ(unused_eos.decode(ids, false), "ab");

  // SentencePiece: merges follow the scores ("bc" outranks "ab"), unknown bytes fall back.
  LlamaVocab spm;
  spm.model = "llama";
  spm.tokens = {"<unk>", "\xE2\x96\x81", "a", "b", "c", "ab", "bc", "<0x0A>"};
  spm.scores = {0, -1, -2, -3, -4, -6, -5, 0};
  spm.token_types = std::vector<LlamaTokenType>(8, LlamaTokenType::kNormal);
  spm.token_types[0] = LlamaTokenType::kUnknown;
  spm.token_types[7] = LlamaTokenType::kByte;
  spm.add_bos = false;
  const Tokenizer sp = Tokenizer::from_llama_vocab(spm, "tiny-spm");
  EXPECT_EQ(sp.encode("abc\nd", false), (std::vector<int32_t>{1, 2, 6, 7, 0}));
  spm.add_space_prefix = false;
  EXPECT_EQ(Tokenizer::from_llama_vocab(spm, "no-prefix").encode("ab", false),
            std::vector<int32_t>{5});
}

TEST(GgufVocab, BadVocabulariesAreInputErrors) {
  const auto error_of = [](const LlamaVocab& vocab) {
    try {
      Tokenizer::from_llama_vocab(vocab, "v.gguf");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  LlamaVocab vocab = tiny_bpe();
  vocab.model = "ugm";
  EXPECT_EQ(error_of(vocab),
            "v.gguf: tokenizer.ggml.model \"ugm\" is not supported (supported: llama, gpt2, bert)");
  vocab = tiny_bpe();
  vocab.pre = "tekken";
  EXPECT_NE(error_of(vocab).find(
                "tokenizer.ggml.pre \"tekken\" is not supported (supported: default, gpt-2"),
            std::string::npos);
  vocab = tiny_bpe();
  vocab.merges = {"a c"};
  EXPECT_NE(error_of(vocab).find("missing from the vocabulary"), std::string::npos);
  vocab = tiny_bpe();
  vocab.token_types.pop_back();
  EXPECT_EQ(error_of(vocab), "v.gguf: 3 token types for 4 tokens");
  vocab = tiny_bpe();
  vocab.eos_id = 4;
  EXPECT_EQ(error_of(vocab), "v.gguf: the eos token id 4 is outside the 4 tokens");
  vocab = tiny_bpe();
  vocab.add_bos = true;
  EXPECT_NE(error_of(vocab).find("its id is not given"), std::string::npos);
  vocab = tiny_bpe();
  vocab.model = "llama";
  EXPECT_EQ(error_of(vocab), "v.gguf: 0 scores for 4 tokens");
  vocab.tokens.clear();
  EXPECT_EQ(error_of(vocab), "v.gguf: the vocabulary has no tokens");
}

}  // namespace
}  // namespace hadron::test
