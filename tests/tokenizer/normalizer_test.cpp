// The NFC shortcut: every character nfc_inert() accepts is left alone by utf8proc's NFC, and no
// character that composes with a preceding one (the second of any primary composite) is accepted.
#include "tokenizer/normalizer.h"

#include <gtest/gtest.h>
#include <utf8proc.h>

#include <cstdlib>

#include "core/utf8.h"

namespace hadron::test {
namespace {

std::u32string nfc(const std::u32string& text, utf8proc_option_t options) {
  std::string utf8;
  for (const char32_t cp : text) utf8_append(utf8, cp);
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()),
                   static_cast<utf8proc_ssize_t>(utf8.size()), &out,
                   static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  std::u32string result;
  const std::string_view mapped(reinterpret_cast<const char*>(out), n > 0 ? n : 0);
  for (size_t pos = 0; pos < mapped.size();) result += next_code_point(mapped, pos);
  std::free(out);
  return result;
}

bool is_scalar(char32_t cp) { return cp < 0xD800 || (cp > 0xDFFF && cp <= 0x10FFFF); }

TEST(NfcInert, AcceptedCharactersAreUnchanged) {
  size_t n_inert = 0;
  for (char32_t cp = 1; cp <= 0x10FFFF; ++cp) {
    if (!is_scalar(cp) || !tok::nfc_inert(cp)) continue;
    ++n_inert;
    ASSERT_TRUE(nfc({cp}, UTF8PROC_COMPOSE) == std::u32string{cp}) << std::hex << uint32_t{cp};
  }
  EXPECT_GT(n_inert, 100000u);
}

TEST(NfcInert, SecondsOfCompositesAreRejected) {
  size_t n_composites = 0;
  for (char32_t cp = 0x300; cp <= 0x10FFFF; ++cp) {
    if (!is_scalar(cp)) continue;
    const std::u32string decomposed = nfc({cp}, UTF8PROC_DECOMPOSE);
    if (decomposed.size() < 2 || nfc(decomposed, UTF8PROC_COMPOSE) != std::u32string{cp}) continue;
    ++n_composites;
    for (size_t i = 1; i < decomposed.size(); ++i) {
      ASSERT_FALSE(tok::nfc_inert(decomposed[i]))
          << std::hex << uint32_t{cp} << " " << uint32_t{decomposed[i]};
    }
  }
  EXPECT_GT(n_composites, 1000u);
}

}  // namespace
}  // namespace hadron::test
