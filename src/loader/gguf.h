// GGUF metadata: the header and key-value section of a llama.cpp model file (versions 2 and 3,
// little-endian). Tensor infos and data are not read. Everything is validated as untrusted
// input: counts and lengths against the bytes left, value types, UTF-8 of strings, duplicate
// keys; nested arrays are rejected (ggml's own reader rejects them too).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace hadron {

// A malformed GGUF file: the message names the file, the byte offset and the key at fault.
class GgufError : public InputError {
 public:
  GgufError(const std::string& message, uint64_t offset) : InputError(message), offset_(offset) {}
  // Offset of the bytes at fault from the start of the file.
  uint64_t offset() const { return offset_; }

 private:
  uint64_t offset_;
};

// The value types of GGUF key-value pairs, numbered as in the file.
enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

std::string_view gguf_type_name(GgufType type);

// One value: a scalar is held as a one-element list. Integers and bools are in `ints` (a
// uint64 above INT64_MAX is rejected), floats in `floats`, strings in `strings`.
struct GgufValue {
  GgufType type = GgufType::kUint8;          // kArray for arrays
  GgufType element_type = GgufType::kUint8;  // the elements' type (== type for scalars)
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;

  bool is_array() const { return type == GgufType::kArray; }
  size_t size() const;  // number of elements
};

class GgufMetadata {
 public:
  // Parses the header and metadata at the start of `bytes` (the rest may be tensor infos
  // and data, or missing). `origin` names the file in messages. Throws GgufError.
  static GgufMetadata parse(std::span<const uint8_t> bytes, const std::string& origin);
  // Reads only the header and metadata of the file at `path`. Throws InputError/GgufError.
  static GgufMetadata read(const std::string& path);

  uint32_t version() const { return version_; }
  uint64_t n_tensors() const { return n_tensors_; }
  const std::string& origin() const { return origin_; }
  const std::map<std::string, GgufValue, std::less<>>& values() const { return values_; }

  // nullptr when the key is absent.
  const GgufValue* find(std::string_view key) const;
  // Typed getters: nullopt/empty when the key is absent; InputError naming the key when it
  // holds another type (an integer must fit the result; a scalar is not an array).
  std::optional<std::string> get_string(std::string_view key) const;
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  std::vector<std::string> get_strings(std::string_view key) const;
  std::vector<int64_t> get_ints(std::string_view key) const;
  std::vector<double> get_floats(std::string_view key) const;

 private:
  class Parser;
  const GgufValue& expect(std::string_view key, bool array, std::initializer_list<GgufType> types,
                          std::string_view wanted) const;

  std::string origin_;
  uint32_t version_ = 0;
  uint64_t n_tensors_ = 0;
  std::map<std::string, GgufValue, std::less<>> values_;
};

}  // namespace hadron
