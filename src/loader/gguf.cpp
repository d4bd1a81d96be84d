// GGUF layout (ggml docs/gguf.md): "GGUF" magic, uint32 version, uint64 tensor count, uint64
// key-value count, then per pair a string key, a uint32 value type and the value. A string is
// a uint64 byte length and the bytes; an array is a uint32 element type, a uint64 count and
// the elements. All little-endian.
#include "loader/gguf.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/error.h"
#include "core/utf8.h"
#include "loader/json_text.h"

namespace hadron {
namespace {

constexpr uint64_t kMaxKeyBytes = 65535;  // the GGUF spec's limit on key length

// Bytes of one element of a fixed-size type; 0 for strings and arrays.
size_t element_bytes(GgufType type) {
  switch (type) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
      return 8;
    case GgufType::kString:
    case GgufType::kArray:
      return 0;
  }
  return 0;
}

}  // namespace

// Where the bytes come from: a span (the fuzzer, tests) or a file read as it is parsed. Outside
// the anonymous namespace because GgufMetadata::Parser, declared in the header, holds one.
class GgufSource {
 public:
  virtual ~GgufSource() = default;
  virtual uint64_t remaining() const = 0;
  // Reads exactly n <= remaining() bytes.
  virtual void read(void* out, size_t n) = 0;
};

namespace {

class SpanSource final : public GgufSource {
 public:
  explicit SpanSource(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint64_t remaining() const override { return bytes_.size() - pos_; }
  void read(void* out, size_t n) override {
    if (n > 0) std::memcpy(out, bytes_.data() + pos_, n);
    pos_ += n;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

class FileSource final : public GgufSource {
 public:
  explicit FileSource(const std::string& path) : in_(path, std::ios::binary) {
    if (!in_) input_error("cannot open GGUF file {}", path);
    if (!std::filesystem::is_regular_file(path)) input_error("{}: not a regular file", path);
    in_.seekg(0, std::ios::end);
    size_ = static_cast<uint64_t>(in_.tellg());
    in_.seekg(0);
    if (!in_) input_error("cannot read GGUF file {}", path);
  }
  uint64_t remaining() const override { return size_ - pos_; }
  void read(void* out, size_t n) override {
    in_.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
    if (static_cast<size_t>(in_.gcount()) != n) input_error("GGUF file changed while reading");
    pos_ += n;
  }

 private:
  std::ifstream in_;
  uint64_t size_ = 0;
  uint64_t pos_ = 0;
};

}  // namespace

class GgufMetadata::Parser {
 public:
  Parser(GgufSource& source, GgufMetadata& out) : source_(source), out_(out) {}

  void parse() {
    char magic[4];
    take(magic, 4, "the magic");
    if (std::memcmp(magic, "GGUF", 4) != 0) fail(0, "not a GGUF file (the magic is not \"GGUF\")");
    out_.version_ = scalar<uint32_t>("the version");
    if (out_.version_ == 0x02000000u || out_.version_ == 0x03000000u) {
      fail(4, "big-endian GGUF files are not supported");
    }
    if (out_.version_ != 2 && out_.version_ != 3) {
      fail(4, fmt::format("GGUF version {} is not supported (only 2 and 3)", out_.version_));
    }
    out_.n_tensors_ = scalar<uint64_t>("the tensor count");
    const uint64_t n_values = scalar<uint64_t>("the key-value count");
    for (uint64_t i = 0; i < n_values; ++i) key_value(i, n_values);
  }

 private:
  [[noreturn]] void fail(uint64_t offset, const std::string& what) const {
    throw GgufError(fmt::format("{}: at byte {}: {}", out_.origin_, offset, what), offset);
  }

  void take(void* out, uint64_t n, std::string_view what) {
    if (n > source_.remaining()) {
      fail(offset_,
           fmt::format("truncated: {} needs {} bytes, {} are left", what, n, source_.remaining()));
    }
    source_.read(out, static_cast<size_t>(n));
    offset_ += n;
  }

  template <typename T>
  T scalar(std::string_view what) {
    T value;
    take(&value, sizeof(T), what);
    return value;
  }

  std::string string(std::string_view what) {
    const uint64_t n = scalar<uint64_t>(what);
    if (n > source_.remaining()) {
      fail(offset_ - 8, fmt::format("{} is {} bytes long, but only {} bytes are left", what, n,
                                    source_.remaining()));
    }
    std::string text(static_cast<size_t>(n), '\0');
    take(text.data(), n, what);
    return text;
  }

  void key_value(uint64_t idx, uint64_t n_values) {
    const uint64_t key_offset = offset_;
    std::string key = string(fmt::format("key {} of {}", idx, n_values));
    if (key.empty() || key.size() > kMaxKeyBytes || !is_valid_utf8(key)) {
      fail(key_offset,
           fmt::format("key {} is empty, longer than {} bytes or not UTF-8", idx, kMaxKeyBytes));
    }
    if (out_.values_.contains(key)) fail(key_offset, fmt::format("duplicate key \"{}\"", key));
    GgufValue value;
    value.type = value_type(key);
    value.element_type = value.type;
    uint64_t n_elements = 1;
    if (value.is_array()) {
      value.element_type = value_type(key);
      if (value.element_type == GgufType::kArray) {
        fail(offset_ - 4, fmt::format("\"{}\": arrays of arrays are not supported", key));
      }
      n_elements = scalar<uint64_t>(key);
      // A string element takes at least its 8-byte length.
      const uint64_t min_bytes =
          value.element_type == GgufType::kString ? 8 : element_bytes(value.element_type);
      if (n_elements > source_.remaining() / min_bytes) {
        fail(offset_ - 8,
             fmt::format("\"{}\": {} elements of {} cannot fit in the {} bytes left", key,
                         n_elements, gguf_type_name(value.element_type), source_.remaining()));
      }
    }
    for (uint64_t i = 0; i < n_elements; ++i) element(key, value);
    out_.values_.emplace(std::move(key), std::move(value));
  }

  GgufType value_type(const std::string& key) {
    const uint64_t offset = offset_;
    const uint32_t raw = scalar<uint32_t>(key);
    if (raw > static_cast<uint32_t>(GgufType::kFloat64)) {
      fail(offset, fmt::format("\"{}\": unknown value type {}", key, raw));
    }
    return static_cast<GgufType>(raw);
  }

  template <typename T>
  void integer(const std::string& key, GgufValue& value) {
    const T raw = scalar<T>(key);
    if constexpr (std::is_same_v<T, uint64_t>) {
      if (raw > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail(offset_ - 8, fmt::format("\"{}\": uint64 value {} is too large", key, raw));
      }
    }
    value.ints.push_back(static_cast<int64_t>(raw));
  }

  void element(const std::string& key, GgufValue& value) {
    switch (value.element_type) {
      case GgufType::kUint8:
        return integer<uint8_t>(key, value);
      case GgufType::kInt8:
        return integer<int8_t>(key, value);
      case GgufType::kUint16:
        return integer<uint16_t>(key, value);
      case GgufType::kInt16:
        return integer<int16_t>(key, value);
      case GgufType::kUint32:
        return integer<uint32_t>(key, value);
      case GgufType::kInt32:
        return integer<int32_t>(key, value);
      case GgufType::kUint64:
        return integer<uint64_t>(key, value);
      case GgufType::kInt64:
        return integer<int64_t>(key, value);
      case GgufType::kFloat32:
        value.floats.push_back(scalar<float>(key));
        return;
      case GgufType::kFloat64:
        value.floats.push_back(scalar<double>(key));
        return;
      case GgufType::kBool: {
        const auto raw = scalar<uint8_t>(key);
        if (raw > 1)
          fail(offset_ - 1, fmt::format("\"{}\": bool value {} is not 0 or 1", key, raw));
        value.ints.push_back(raw);
        return;
      }
      case GgufType::kString:
        value.strings.push_back(string(key));
        return;
      case GgufType::kArray:
        fail(offset_, "nested array");  // rejected in key_value
    }
  }

  GgufSource& source_;
  GgufMetadata& out_;
  uint64_t offset_ = 0;
};

std::string_view gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::kUint8:
      return "uint8";
    case GgufType::kInt8:
      return "int8";
    case GgufType::kUint16:
      return "uint16";
    case GgufType::kInt16:
      return "int16";
    case GgufType::kUint32:
      return "uint32";
    case GgufType::kInt32:
      return "int32";
    case GgufType::kFloat32:
      return "float32";
    case GgufType::kBool:
      return "bool";
    case GgufType::kString:
      return "string";
    case GgufType::kArray:
      return "array";
    case GgufType::kUint64:
      return "uint64";
    case GgufType::kInt64:
      return "int64";
    case GgufType::kFloat64:
      return "float64";
  }
  return "unknown";
}

size_t GgufValue::size() const { return ints.size() + floats.size() + strings.size(); }

GgufMetadata GgufMetadata::parse(std::span<const uint8_t> bytes, const std::string& origin) {
  GgufMetadata metadata;
  metadata.origin_ = origin;
  SpanSource source(bytes);
  Parser(source, metadata).parse();
  return metadata;
}

GgufMetadata GgufMetadata::read(const std::string& path) {
  GgufMetadata metadata;
  metadata.origin_ = path;
  FileSource source(path);
  Parser(source, metadata).parse();
  return metadata;
}

const GgufValue* GgufMetadata::find(std::string_view key) const {
  const auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

const GgufValue& GgufMetadata::expect(std::string_view key, bool array,
                                      std::initializer_list<GgufType> types,
                                      std::string_view wanted) const {
  const GgufValue& value = *find(key);
  bool type_ok = false;
  for (const GgufType type : types) type_ok |= value.element_type == type;
  if (value.is_array() != array || !type_ok) {
    input_error("{}: \"{}\" should be {}, but it is {}{}", origin_, key, wanted,
                value.is_array() ? "an array of " : "a ", gguf_type_name(value.element_type));
  }
  return value;
}

namespace {
constexpr std::initializer_list<GgufType> kIntegerTypes = {
    GgufType::kUint8,  GgufType::kInt8,  GgufType::kUint16, GgufType::kInt16,
    GgufType::kUint32, GgufType::kInt32, GgufType::kUint64, GgufType::kInt64};
}  // namespace

std::optional<std::string> GgufMetadata::get_string(std::string_view key) const {
  if (!find(key)) return std::nullopt;
  return expect(key, false, {GgufType::kString}, "a string").strings[0];
}

std::optional<int64_t> GgufMetadata::get_int(std::string_view key) const {
  if (!find(key)) return std::nullopt;
  return expect(key, false, kIntegerTypes, "an integer").ints[0];
}

std::optional<bool> GgufMetadata::get_bool(std::string_view key) const {
  if (!find(key)) return std::nullopt;
  return expect(key, false, {GgufType::kBool}, "a bool").ints[0] != 0;
}

std::vector<std::string> GgufMetadata::get_strings(std::string_view key) const {
  if (!find(key)) return {};
  return expect(key, true, {GgufType::kString}, "an array of strings").strings;
}

std::vector<int64_t> GgufMetadata::get_ints(std::string_view key) const {
  if (!find(key)) return {};
  return expect(key, true, kIntegerTypes, "an array of integers").ints;
}

std::vector<double> GgufMetadata::get_floats(std::string_view key) const {
  if (!find(key)) return {};
  return expect(key, true, {GgufType::kFloat32, GgufType::kFloat64}, "an array of floats").floats;
}

}  // namespace hadron
