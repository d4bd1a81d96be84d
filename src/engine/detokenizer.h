// What the engine needs from a tokenizer to stream text: an incremental decoder per sequence.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace hadron {

class TextStream {
 public:
  virtual ~TextStream() = default;
  // Text completed by this token (never half a UTF-8 character).
  virtual std::string push(int32_t token) = 0;
  // At the end: whatever is still held back.
  virtual std::string finish() = 0;
};

class Detokenizer {
 public:
  virtual ~Detokenizer() = default;
  virtual std::unique_ptr<TextStream> start(bool skip_special_tokens) const = 0;
};

}  // namespace hadron
