#include "grammar/char_class.h"

namespace hadron::grammar {

std::vector<CodePointRange> shorthand_class(char letter) {
  switch (letter) {
    case 'd':
      return {{U'0', U'9'}};
    case 'w':
      return {{U'0', U'9'}, {U'A', U'Z'}, {U'_', U'_'}, {U'a', U'z'}};
    default:  // 's'
      return {{U'\t', U'\r'}, {U' ', U' '}, {0xA0, 0xA0}, {0x2028, 0x2029}, {0xFEFF, 0xFEFF}};
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace hadron::grammar
