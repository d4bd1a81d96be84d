// GgufMetadata: values of every type read back, typed getters, and a GgufError (never a crash
// or another exception) for each kind of malformed file, including every truncation.
#include "loader/gguf.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "test_files.h"

namespace hadron::testing {
namespace {

// Writes GGUF bytes field by field (little-endian host assumed, as the format is).
class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3, uint64_t n_values = 0) {
    bytes_ = "GGUF";
    put<uint32_t>(version);
    put<uint64_t>(0);  // tensors
    put<uint64_t>(n_values);
  }
  template <typename T>
  GgufWriter& put(T value) {
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(T));
    return *this;
  }
  GgufWriter& str(const std::string& text) {
    put<uint64_t>(text.size());
    bytes_ += text;
    return *this;
  }
  GgufWriter& key(const std::string& name, GgufType type) {
    str(name);
    return put<uint32_t>(static_cast<uint32_t>(type));
  }
  const std::string& bytes() const { return bytes_; }
  // Sets the key-value count in the header.
  GgufWriter& n_values(uint64_t n) {
    std::memcpy(bytes_.data() + 16, &n, 8);
    return *this;
  }

 private:
  std::string bytes_;
};

std::span<const uint8_t> span_of(const std::string& bytes) {
  return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
}

GgufMetadata parse(const std::string& bytes) {
  return GgufMetadata::parse(span_of(bytes), "t.gguf");
}

std::string error_of(const std::string& bytes) {
  try {
    parse(bytes);
  } catch (const GgufError& e) {
    return e.what();
  }
  return "";
}

// One pair of each type and an array of strings and of floats.
std::string every_type() {
  GgufWriter w(3, 15);
  w.key("u8", GgufType::kUint8).put<uint8_t>(200);
  w.key("i8", GgufType::kInt8).put<int8_t>(-100);
  w.key("u16", GgufType::kUint16).put<uint16_t>(60000);
  w.key("i16", GgufType::kInt16).put<int16_t>(-30000);
  w.key("u32", GgufType::kUint32).put<uint32_t>(4000000000u);
  w.key("i32", GgufType::kInt32).put<int32_t>(-2000000000);
  w.key("u64", GgufType::kUint64).put<uint64_t>(1ull << 40);
  w.key("i64", GgufType::kInt64).put<int64_t>(-(1ll << 40));
  w.key("f32", GgufType::kFloat32).put<float>(0.5f);
  w.key("f64", GgufType::kFloat64).put<double>(-2.25);
  w.key("yes", GgufType::kBool).put<uint8_t>(1);
  w.key("name", GgufType::kString).str("héllo");
  w.key("words", GgufType::kArray).put<uint32_t>(8).put<uint64_t>(3).str("a").str("").str("b c");
  w.key("scores", GgufType::kArray).put<uint32_t>(6).put<uint64_t>(2).put<float>(-1).put<float>(2);
  w.key("empty", GgufType::kArray).put<uint32_t>(5).put<uint64_t>(0);
  return w.bytes();
}

TEST(Gguf, ReadsEveryType) {
  const GgufMetadata m = parse(every_type());
  EXPECT_EQ(m.version(), 3u);
  EXPECT_EQ(m.n_tensors(), 0u);
  EXPECT_EQ(m.values().size(), 15u);
  EXPECT_EQ(*m.get_int("u8"), 200);
  EXPECT_EQ(*m.get_int("i8"), -100);
  EXPECT_EQ(*m.get_int("u16"), 60000);
  EXPECT_EQ(*m.get_int("i16"), -30000);
  EXPECT_EQ(*m.get_int("u32"), 4000000000ll);
  EXPECT_EQ(*m.get_int("i32"), -2000000000);
  EXPECT_EQ(*m.get_int("u64"), 1ll << 40);
  EXPECT_EQ(*m.get_int("i64"), -(1ll << 40));
  EXPECT_EQ(m.find("f32")->floats, std::vector<double>{0.5});
  EXPECT_EQ(m.find("f64")->floats, std::vector<double>{-2.25});
  EXPECT_EQ(*m.get_bool("yes"), true);
  EXPECT_EQ(*m.get_string("name"), "héllo");
  EXPECT_EQ(m.get_strings("words"), (std::vector<std::string>{"a", "", "b c"}));
  EXPECT_EQ(m.get_floats("scores"), (std::vector<double>{-1, 2}));
  EXPECT_TRUE(m.get_ints("empty").empty());
  EXPECT_TRUE(m.find("empty")->is_array());
  EXPECT_FALSE(m.get_string("absent").has_value());
  EXPECT_TRUE(m.get_strings("absent").empty());
}

TEST(Gguf, GettersNameKeyAndTypes) {
  const GgufMetadata m = parse(every_type());
  EXPECT_EQ(input_error_of([&] { m.get_string("u8"); }),
            "t.gguf: \"u8\" should be a string, but it is a uint8");
  EXPECT_EQ(input_error_of([&] { m.get_ints("words"); }),
            "t.gguf: \"words\" should be an array of integers, but it is an array of string");
  EXPECT_NE(input_error_of([&] { m.get_int("f32"); }).find("should be an integer"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { m.get_strings("name"); }).find("array of strings"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { m.get_bool("u8"); }).find("a bool"), std::string::npos);
}

TEST(Gguf, EveryTruncationIsAnError) {
  const std::string bytes = every_type();
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string message = error_of(bytes.substr(0, n));
    EXPECT_NE(message.find("t.gguf: at byte"), std::string::npos) << n << ": " << message;
  }
}

TEST(Gguf, MalformedFiles) {
  const auto header = [](uint64_t n_values) { return GgufWriter(3, n_values); };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"GGML" + every_type().substr(4), "not a GGUF file"},
      {GgufWriter(1).bytes(), "version 1 is not supported"},
      {GgufWriter(0x03000000u).bytes(), "big-endian"},
      {header(1).key("k", static_cast<GgufType>(13)).bytes(), "unknown value type 13"},
      {header(1).str("").put<uint32_t>(4).put<uint32_t>(1).bytes(), "key 0 is empty"},
      {header(1).str("k\xff").put<uint32_t>(4).put<uint32_t>(1).bytes(), "not UTF-8"},
      {header(2)
           .key("k", GgufType::kUint8)
           .put<uint8_t>(1)
           .key("k", GgufType::kUint8)
           .put<uint8_t>(2)
           .bytes(),
       "duplicate key \"k\""},
      {header(1).key("k", GgufType::kBool).put<uint8_t>(2).bytes(), "bool value 2"},
      {header(1).key("k", GgufType::kUint64).put<uint64_t>(~0ull).bytes(), "too large"},
      {header(1).key("k", GgufType::kString).put<uint64_t>(1ull << 62).bytes(),
       "is 4611686018427387904 bytes long"},
      {header(1).key("k", GgufType::kArray).put<uint32_t>(0).put<uint64_t>(1000).bytes(),
       "1000 elements of uint8 cannot fit"},
      {header(1)
           .key("k", GgufType::kArray)
           .put<uint32_t>(8)
           .put<uint64_t>(2)
           .put<uint64_t>(1)
           .bytes(),
       "2 elements of string cannot fit"},
      {header(1).key("k", GgufType::kArray).put<uint32_t>(9).bytes(), "arrays of arrays"},
      {header(1).key("k", GgufType::kArray).put<uint32_t>(77).bytes(), "unknown value type 77"},
      {header(2).key("k", GgufType::kUint8).put<uint8_t>(1).bytes(), "key 1 of 2"},
  };
  for (const auto& [bytes, expected] : cases) {
    const std::string message = error_of(bytes);
    EXPECT_NE(message.find(expected), std::string::npos)
        << "want \"" << expected << "\", got \"" << message << "\"";
  }
}

TEST(Gguf, ErrorsCarryTheOffset) {
  const std::string bytes = GgufWriter(3, 1).key("k", GgufType::kBool).put<uint8_t>(7).bytes();
  try {
    parse(bytes);
    FAIL() << "no error";
  } catch (const GgufError& e) {
    EXPECT_EQ(e.offset(), bytes.size() - 1);
  }
}

TEST(Gguf, ReadsOnlyTheMetadataOfAFile) {
  ScratchDir dir;
  // Metadata, then bytes that are not GGUF at all (where tensor infos would be).
  const std::string path = dir.write("m.gguf", every_type() + std::string(1000, '\xee'));
  const GgufMetadata m = GgufMetadata::read(path);
  EXPECT_EQ(m.origin(), path);
  EXPECT_EQ(m.get_strings("words"), parse(every_type()).get_strings("words"));
  EXPECT_NE(
      input_error_of([&] { GgufMetadata::read(dir.path() / "none.gguf"); }).find("cannot open"),
      std::string::npos);
  EXPECT_NE(input_error_of([&] { GgufMetadata::read(dir.path()); }).find("not a regular file"),
            std::string::npos);
  const std::string truncated = dir.write("t.gguf", every_type().substr(0, 100));
  EXPECT_NE(input_error_of([&] { GgufMetadata::read(truncated); }).find("truncated"),
            std::string::npos);
}

}  // namespace
}  // namespace hadron::testing
