// libFuzzer: tokenizer.json text of any bytes loads into a Tokenizer or is an InputError; a
// loaded tokenizer encodes and decodes (whole and streamed) without any other failure.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const hadron::Tokenizer tokenizer =
        hadron::Tokenizer::from_json_text(text, "fuzz/tokenizer.json");
    for (const char* sample : {"Hello world", "  a\tb\r\n 123 <s> \xC3\xA9\xFF", ""}) {
      const std::vector<int32_t> ids = tokenizer.encode(sample, true);
      const std::string whole = tokenizer.decode(ids, false);
      hadron::IncrementalDecoder stream(tokenizer, false);
      std::string joined;
      for (const int32_t id : ids) joined += stream.push(id);
      joined += stream.finish();
      if (joined != whole) __builtin_trap();
      for (const int32_t id : ids) {
        if (id < 0 || id >= tokenizer.vocab_size()) __builtin_trap();
      }
    }
  } catch (const hadron::InputError&) {
  }
  return 0;
}
