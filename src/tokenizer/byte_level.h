// The GPT-2 byte <-> character map of byte-level BPE vocabularies (ByteLevel pre-tokenizer and
// decoder): printable Latin-1 bytes map to themselves, the other 68 bytes to U+0100 upward.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace hadron::tok {

// The character (as UTF-8) that stands for `byte` in a byte-level vocabulary.
const std::string& byte_to_char(unsigned char byte);

// The raw bytes a byte-level token stands for, or nullopt when one of its characters is
// outside the map (e.g. an added token such as "<｜begin▁of▁sentence｜>").
std::optional<std::string> byte_level_to_bytes(std::string_view token);

}  // namespace hadron::tok
