#include "tokenizer/byte_level.h"

#include "core/utf8.h"

namespace hadron::tok {
namespace {

struct ByteMap {
  std::array<std::string, 256> to_char;
  std::array<int, 324> to_byte;  // code point -> byte, -1 when none

  ByteMap() {
    to_byte.fill(-1);
    int n_extra = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const char32_t cp = printable ? static_cast<char32_t>(b) : 256 + n_extra++;
      utf8_append(to_char[b], cp);
      to_byte[cp] = b;
    }
  }
};

const ByteMap& byte_map() {
  static const ByteMap map;
  return map;
}

}  // namespace

const std::string& byte_to_char(unsigned char byte) { return byte_map().to_char[byte]; }

std::optional<std::string> byte_level_to_bytes(std::string_view token) {
  const ByteMap& map = byte_map();
  std::string bytes;
  size_t pos = 0;
  while (pos < token.size()) {
    const char32_t cp = next_code_point(token, pos);
    if (cp >= map.to_byte.size() || map.to_byte[cp] < 0) return std::nullopt;
    bytes += static_cast<char>(map.to_byte[cp]);
  }
  return bytes;
}

}  // namespace hadron::tok
