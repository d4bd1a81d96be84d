// Split regexes that several tokenizers share, in the syntax of tokenizer.json patterns.
#pragma once

namespace hadron::tok {

// GPT-2's split: a ByteLevel pre-tokenizer with use_regex.
inline constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Qwen2's split (single digits), the pattern of Qwen2TokenizerFast.
inline constexpr const char* kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Llama 3's split: Qwen2's with digits in groups of up to three.
inline constexpr const char* kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// OpenAI's o200k_base split (gpt-4o, gpt-oss): cased words keep their capitals and apostrophe
// suffixes, and a run of punctuation takes trailing newlines and slashes.
inline constexpr const char* kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Moonshot's Kimi/Moonlight split (tokenization_kimi.py): runs of Han characters on their own,
// then o200k's words without Han (the "[\p{Lu}...&&[^\p{Han}]]" class intersection of Rust's
// regex written as a lookahead, which PCRE2 has) and o200k's punctuation without the slash.
// \p{sc=Han}: PCRE2's \p{Han} also matches the characters whose Script_Extensions include Han
// (。, 【), Rust's does not.
inline constexpr const char* kKimiPattern =
    R"([\p{sc=Han}]+)"
    R"(|[^\r\n\p{L}\p{N}]?(?:(?!\p{sc=Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])*(?:(?!\p{sc=Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?(?:(?!\p{sc=Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])+(?:(?!\p{sc=Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

}  // namespace hadron::tok
