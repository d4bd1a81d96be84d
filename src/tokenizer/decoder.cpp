#include "tokenizer/decoder.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/json_number.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pattern_json.h"

namespace hadron::tok {
namespace {

constexpr const char* kReplacementChar = "\xEF\xBF\xBD";

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte of a "<0xXX>" token as Rust's u8::from_str_radix(&token[3..5], 16) reads it
// (which also accepts "+X"), or -1.
int byte_token_value(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return -1;
  const int hi = hex_digit(token[3]), lo = hex_digit(token[4]);
  if (token[3] == '+' && lo >= 0) return lo;
  return hi >= 0 && lo >= 0 ? hi * 16 + lo : -1;
}

}  // namespace

Decoder Decoder::from_json(const nlohmann::json& json) {
  Decoder decoder;
  decoder.present_ = !json.is_null();
  if (decoder.present_) decoder.add_from_json(json);
  return decoder;
}

void Decoder::add_from_json(const nlohmann::json& json) {
  const std::string type = json.at("type").get<std::string>();
  Step step{};
  if (type == "Sequence") {
    for (const nlohmann::json& child : json.at("decoders")) add_from_json(child);
    return;
  } else if (type == "ByteLevel") {
    step.kind = Kind::kByteLevel;
  } else if (type == "Metaspace") {
    step.kind = Kind::kMetaspace;
    step.text = json.value("replacement", std::string("\xE2\x96\x81"));
    const bool add_prefix_space = json.value("add_prefix_space", true);
    step.prepend =
        json.value("prepend_scheme", std::string(add_prefix_space ? "always" : "never")) != "never";
  } else if (type == "ByteFallback") {
    step.kind = Kind::kByteFallback;
  } else if (type == "Fuse") {
    step.kind = Kind::kFuse;
  } else if (type == "Strip") {
    step.kind = Kind::kStrip;
    step.text = json.at("content").get<std::string>();
    step.start = static_cast<size_t>(json_integer(json.at("start"), 0, 1 << 20, "Strip start"));
    step.stop = static_cast<size_t>(json_integer(json.at("stop"), 0, 1 << 20, "Strip stop"));
    if (step.text.empty() || utf8_len(step.text[0]) != step.text.size()) {
      input_error("tokenizer: Strip decoder content \"{}\" is not one character", step.text);
    }
  } else if (type == "Replace") {
    step.kind = Kind::kReplace;
    Pattern pattern = pattern_from_json(json.at("pattern"));
    step.text = std::move(pattern.literal);
    step.regex = std::move(pattern.regex);
    step.content = json.at("content").get<std::string>();
  } else if (type == "WordPiece") {
    step.kind = Kind::kWordPiece;
    step.text = json.value("prefix", std::string("##"));
    step.prepend = json.value("cleanup", true);
  } else {
    input_error("tokenizer: decoder type \"{}\" is not supported", type);
  }
  steps_.push_back(std::move(step));
}

bool Decoder::byte_level_only() const {
  return steps_.size() == 1 && steps_[0].kind == Kind::kByteLevel;
}

bool Decoder::has_byte_fallback() const {
  return std::any_of(steps_.begin(), steps_.end(),
                     [](const Step& step) { return step.kind == Kind::kByteFallback; });
}

bool Decoder::is_local() const {
  return std::none_of(steps_.begin(), steps_.end(), [](const Step& step) {
    return step.kind == Kind::kStrip && (step.start > 1 || step.stop > 0);
  });
}

bool Decoder::is_byte_token(const std::string& token) { return byte_token_value(token) >= 0; }

std::string Decoder::byte_level_bytes(const std::string& token) {
  std::optional<std::string> bytes = byte_level_to_bytes(token);
  return bytes ? std::move(*bytes) : token;
}

void Decoder::byte_fallback(std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  std::string pending;
  const auto flush = [&] {
    if (pending.empty()) return;
    if (is_valid_utf8(pending)) {
      out.push_back(pending);
    } else {
      for (size_t i = 0; i < pending.size(); ++i) out.emplace_back(kReplacementChar);
    }
    pending.clear();
  };
  for (std::string& token : tokens) {
    const int byte = byte_token_value(token);
    if (byte >= 0) {
      pending += static_cast<char>(byte);
      continue;
    }
    flush();
    out.push_back(std::move(token));
  }
  flush();
  tokens = std::move(out);
}

// Removes up to `start` leading and `stop` trailing copies of the content character.
void Decoder::strip(const Step& step, std::string& token) {
  const std::string& c = step.text;
  size_t begin = 0, end = token.size();
  for (size_t i = 0; i < step.start && token.compare(begin, c.size(), c) == 0; ++i)
    begin += c.size();
  for (size_t i = 0;
       i < step.stop && end >= begin + c.size() && token.compare(end - c.size(), c.size(), c) == 0;
       ++i) {
    end -= c.size();
  }
  token = token.substr(begin, end - begin);
}

// WordPiece: a token after the first loses its continuation prefix or gains a leading space;
// cleanup then undoes BERT's spacing of punctuation and English contractions.
void Decoder::wordpiece(const Step& step, std::vector<std::string>& tokens) {
  static const std::pair<const char*, const char*> kCleanup[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string& token = tokens[i];
    if (i > 0 && token.compare(0, step.text.size(), step.text) == 0) {
      token.erase(0, step.text.size());
    } else if (i > 0) {
      token.insert(0, 1, ' ');
    }
    if (!step.prepend) continue;
    for (const auto& [from, to] : kCleanup) token = replace_all(token, from, to);
  }
}

void Decoder::apply(const Step& step, std::vector<std::string>& tokens) {
  switch (step.kind) {
    case Kind::kByteLevel: {
      std::string bytes;
      for (const std::string& token : tokens) bytes += byte_level_bytes(token);
      tokens = {utf8_lossy(bytes)};
      return;
    }
    case Kind::kMetaspace:
      // Every replacement character of the first token is dropped, as HF does.
      for (size_t i = 0; i < tokens.size(); ++i) {
        tokens[i] = replace_all(tokens[i], step.text, i == 0 && step.prepend ? "" : " ");
      }
      return;
    case Kind::kByteFallback:
      byte_fallback(tokens);
      return;
    case Kind::kFuse: {
      std::string joined;
      for (const std::string& token : tokens) joined += token;
      tokens = {std::move(joined)};
      return;
    }
    case Kind::kStrip:
      for (std::string& token : tokens) strip(step, token);
      return;
    case Kind::kWordPiece:
      wordpiece(step, tokens);
      return;
    case Kind::kReplace:
      for (std::string& token : tokens) {
        token = step.regex ? replace_all(token, *step.regex, step.content)
                           : replace_all(token, step.text, step.content);
      }
      return;
  }
}

std::string Decoder::decode(std::vector<std::string> tokens) const {
  std::string text;
  if (!present_) {
    for (size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
    return text;
  }
  for (const Step& step : steps_) apply(step, tokens);
  for (const std::string& token : tokens) text += token;
  return text;
}

}  // namespace hadron::tok
