// libFuzzer: GGUF metadata of any bytes parses or throws GgufError (no other exception); parsed
// values are consistent with their types; a parsed file's vocabulary builds a Tokenizer or is an
// InputError, and that tokenizer encodes and decodes (whole and streamed) without failure.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "loader/gguf.h"
#include "loader/gguf_tokenizer.h"

namespace {

bool consistent(const hadron::GgufValue& value) {
  using hadron::GgufType;
  const bool is_float =
      value.element_type == GgufType::kFloat32 || value.element_type == GgufType::kFloat64;
  const bool is_string = value.element_type == GgufType::kString;
  const size_t n = value.size();
  if (!value.is_array() && n != 1) return false;
  if (is_float) return value.floats.size() == n;
  if (is_string) return value.strings.size() == n;
  return value.ints.size() == n && value.element_type != GgufType::kArray;
}

void use_tokenizer(const hadron::Tokenizer& tokenizer) {
  for (const char* sample : {"Hello w\xC3\xB6rld  123\n<s>[CLS]", "\xE4\xBD\xA0\xFF", ""}) {
    const std::vector<int32_t> ids = tokenizer.encode(sample, true);
    for (const int32_t id : ids) {
      if (id < 0 || id >= tokenizer.vocab_size()) __builtin_trap();
    }
    const std::string whole = tokenizer.decode(ids, false);
    hadron::IncrementalDecoder stream(tokenizer, false);
    std::string joined;
    for (const int32_t id : ids) joined += stream.push(id);
    if (joined + stream.finish() != whole) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hadron::GgufMetadata metadata;
  try {
    metadata = hadron::GgufMetadata::parse({data, size}, "fuzz.gguf");
  } catch (const hadron::GgufError&) {
    return 0;
  }
  for (const auto& [key, value] : metadata.values()) {
    if (key.empty() || !consistent(value)) __builtin_trap();
  }
  try {
    use_tokenizer(
        hadron::Tokenizer::from_llama_vocab(hadron::gguf_llama_vocab(metadata), "fuzz.gguf"));
  } catch (const hadron::InputError&) {
  }
  return 0;
}
