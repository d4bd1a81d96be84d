// A compiled PCRE2 pattern (UTF, Unicode properties, JIT) with Oniguruma's meaning of \s, the
// engine Hugging Face tokenizers uses for Split and Replace patterns.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hadron::tok {

class Regex {
 public:
  // Throws InputError naming the pattern when it does not compile.
  explicit Regex(const std::string& pattern);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;

  // Calls on_match(start, end) for each non-overlapping match in `text` (valid UTF-8),
  // left to right; an empty match advances one character, as Oniguruma's find_iter does.
  template <typename F>
  void for_each_match(std::string_view text, F&& on_match) const {
    size_t pos = 0;
    std::pair<size_t, size_t> m;
    while (pos <= text.size() && next_match(text, pos, m)) {
      on_match(m.first, m.second);
      pos = m.second > m.first ? m.second : m.second + 1;
      while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
    }
  }

 private:
  bool next_match(std::string_view text, size_t pos, std::pair<size_t, size_t>& match) const;

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Rewrites \s and \S so PCRE2 matches what Oniguruma matches (it adds U+0085).
std::string oniguruma_to_pcre2(std::string_view pattern);

}  // namespace hadron::tok
