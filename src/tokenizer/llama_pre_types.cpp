// Each entry restates the pre_tokenizer of the Hugging Face tokenizer.json that llama.cpp's
// convert_hf_to_gguf_update.py names it after (the regexes of llama.cpp's llama-vocab.cpp are
// its own approximations of these); the test vectors in tests/data check them.
#include "tokenizer/llama_pre_types.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "tokenizer/llama_vocab.h"
#include "tokenizer/split_patterns.h"

namespace hadron::tok {
namespace {

using nlohmann::json;

json split(const char* regex, const char* behavior = "Isolated") {
  return {{"type", "Split"},
          {"pattern", {{"Regex", regex}}},
          {"behavior", behavior},
          {"invert", false}};
}
json byte_level(bool use_regex) {
  return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", use_regex}};
}
json digits(bool individual) { return {{"type", "Digits"}, {"individual_digits", individual}}; }
json sequence(std::vector<json> steps) {
  return {{"type", "Sequence"}, {"pretokenizers", std::move(steps)}};
}

// deepseek-llm-7b-base: letters of the cased scripts (written as escapes: several are
// singletons that Unicode normalization of the source would change), then ASCII and
// full-width punctuation.
constexpr const char* kDeepseekLetters =
    "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}"
    "\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}"
    "\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-"
    "\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}"
    "\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-"
    "\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}"
    "\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}"
    "\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}"
    "\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-"
    "\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}"
    "\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}"
    "\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}"
    "\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-"
    "\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}"
    "\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}"
    "-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-"
    "\\x{118DF}\\x{1E900}-\\x{1E943}]+";
constexpr const char* kDeepseekPunctuation =
    "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+";
constexpr const char* kCjk = "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+";

struct Entry {
  std::vector<std::string_view> names;
  LlamaPreType (*make)();
};

LlamaPreType gpt2() { return {nullptr, byte_level(true)}; }
LlamaPreType gpt_neox() { return {{{"type", "NFC"}}, byte_level(true)}; }
LlamaPreType starcoder() { return {nullptr, sequence({digits(true), byte_level(true)})}; }
LlamaPreType falcon() {
  return {nullptr, sequence({{{"type", "Punctuation"}, {"behavior", "Contiguous"}},
                             byte_level(true),
                             digits(false),
                             split("[0-9][0-9][0-9]")})};
}
LlamaPreType deepseek_llm() {
  return {nullptr, sequence({split("[\r\n]"), split(kDeepseekLetters), split(kDeepseekPunctuation),
                             split("\\s+$"), split(kCjk), digits(false), byte_level(false)})};
}
LlamaPreType deepseek_coder() {
  return {nullptr, sequence({split("[\r\n]"), split("\\s?\\p{L}+"), split("\\s?\\p{P}+"),
                             split(kCjk), digits(true), byte_level(false)})};
}
LlamaPreType llama3() {
  return {nullptr, sequence({split(kLlama3Pattern), byte_level(false)}), true};
}
LlamaPreType qwen2() {
  return {{{"type", "NFC"}}, sequence({split(kQwen2Pattern), byte_level(false)})};
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = {
      {{"default", "gpt-2"}, gpt2},         {{"mpt"}, gpt_neox},
      {{"starcoder", "refact"}, starcoder}, {{"falcon"}, falcon},
      {{"deepseek-llm"}, deepseek_llm},     {{"deepseek-coder"}, deepseek_coder},
      {{"llama-bpe", "llama3"}, llama3},    {{"qwen2"}, qwen2},
  };
  return kEntries;
}

}  // namespace

std::string supported_llama_pre_types() {
  std::string names;
  for (const Entry& entry : entries()) {
    for (const std::string_view name : entry.names) {
      names += names.empty() ? "" : ", ";
      names += name;
    }
  }
  return names;
}

LlamaPreType llama_pre_type(const std::string& name) {
  for (const Entry& entry : entries()) {
    if (std::find(entry.names.begin(), entry.names.end(), name) != entry.names.end()) {
      return entry.make();
    }
  }
  input_error("tokenizer.ggml.pre \"{}\" is not supported (supported: {})", name,
              supported_llama_pre_types());
}

}  // namespace hadron::tok
