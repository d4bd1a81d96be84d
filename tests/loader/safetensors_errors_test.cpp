// Every malformed safetensors file is an InputError naming the file and, where there is one,
// the tensor at fault; the checks follow the reference crate's validation.
#include <gtest/gtest.h>

#include "loader/safetensors.h"
#include "test_files.h"

namespace hadron {
namespace {

using testing::safetensors_raw;
using testing::with_length_prefix;

const std::string kGood = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";

// Opens `bytes` as bad.safetensors; the message must name the file and each of `expected`.
void expect_rejected(const std::string& bytes, const std::vector<std::string>& expected) {
  testing::ScratchDir dir;
  const std::string path = dir.write("bad.safetensors", bytes);
  const std::string message = testing::input_error_of([&] { SafetensorsFile::open(path); });
  ASSERT_FALSE(message.empty()) << "accepted";
  EXPECT_NE(message.find(path), std::string::npos) << message;
  for (const std::string& part : expected)
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
}

TEST(SafetensorsErrors, TooSmallForTheLengthPrefix) {
  expect_rejected("", {"too small"});
  expect_rejected("\x05\x00\x00", {"too small"});
}

TEST(SafetensorsErrors, TruncatedHeader) {
  expect_rejected(with_length_prefix(kGood.size(), kGood.substr(0, 20)), {"truncated"});
}

TEST(SafetensorsErrors, HeaderLengthPastTheCap) {
  expect_rejected(with_length_prefix(100'000'001, kGood), {"100000001", "limit"});
  expect_rejected(with_length_prefix(~uint64_t{0}, kGood), {"limit"});
}

TEST(SafetensorsErrors, HeaderLengthPastTheFile) {
  expect_rejected(with_length_prefix(4096, kGood + std::string(8, '\0')), {"4096", "past the end"});
}

TEST(SafetensorsErrors, TruncatedData) {
  expect_rejected(safetensors_raw(kGood, std::string(5, '\0')), {"'w'", "truncated"});
}

TEST(SafetensorsErrors, TrailingBytes) {
  expect_rejected(safetensors_raw(kGood, std::string(12, '\0')), {"'w'", "trailing"});
}

TEST(SafetensorsErrors, HeaderIsNotJson) {
  expect_rejected(safetensors_raw("{not json", ""), {"not valid JSON"});
  expect_rejected(safetensors_raw(kGood + std::string(2, '\0'), std::string(8, '\0')),
                  {"not valid JSON"});
}

TEST(SafetensorsErrors, HeaderIsNotUtf8) {
  expect_rejected(safetensors_raw("{\"\xff\xfe\":1}", ""), {"UTF-8"});
  expect_rejected(safetensors_raw("{\"\xed\xa0\x80\":1}", ""), {"UTF-8"});  // a surrogate
}

TEST(SafetensorsErrors, HeaderIsNotAnObject) {
  expect_rejected(safetensors_raw("[1, 2]", ""), {"JSON object", "array"});
  expect_rejected(safetensors_raw(R"({"w": [1]})", ""), {"'w'", "JSON object"});
}

TEST(SafetensorsErrors, DuplicateTensorNames) {
  const std::string entry = R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  expect_rejected(safetensors_raw("{\"dup\":" + entry + ",\"dup\":" + entry + "}", "x"),
                  {"'dup'", "twice"});
  expect_rejected(
      safetensors_raw(R"({"w":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "x"),
      {"'dtype'", "twice"});
}

TEST(SafetensorsErrors, HoleBetweenTensors) {
  expect_rejected(safetensors_raw(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                                  R"("b":{"dtype":"U8","shape":[4],"data_offsets":[6,10]}})",
                                  std::string(10, 'x')),
                  {"'b'", "hole of 2 bytes"});
  expect_rejected(safetensors_raw(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})",
                                  std::string(6, 'x')),
                  {"'a'", "hole"});
}

TEST(SafetensorsErrors, OverlappingTensors) {
  expect_rejected(safetensors_raw(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                                  R"("b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})",
                                  std::string(6, 'x')),
                  {"'b'", "overlaps tensor 'a'"});
}

TEST(SafetensorsErrors, OffsetsEndBeforeTheyBegin) {
  expect_rejected(safetensors_raw(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},)"
                                  R"("b":{"dtype":"U8","shape":[4],"data_offsets":[4,0]}})",
                                  std::string(4, 'x')),
                  {"'b'", "end before"});
}

TEST(SafetensorsErrors, OffsetsOutOfBounds) {
  expect_rejected(safetensors_raw(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                                  R"("big":{"dtype":"U8","shape":[1000],"data_offsets":[4,1004]}})",
                                  std::string(16, 'x')),
                  {"'big'", "out of bounds", "1004"});
}

TEST(SafetensorsErrors, SizeDoesNotMatchShapeAndDtype) {
  expect_rejected(safetensors_raw(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
                                  std::string(8, 'x')),
                  {"'w'", "needs 12 bytes", "span 8"});
}

TEST(SafetensorsErrors, ShapeOverflow) {
  expect_rejected(
      safetensors_raw(
          R"({"w":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", ""),
      {"'w'", "overflows"});
  expect_rejected(
      safetensors_raw(R"({"w":{"dtype":"I64","shape":[4611686018427387904],"data_offsets":[0,0]}})",
                      ""),
      {"'w'", "overflows"});
  expect_rejected(
      safetensors_raw(R"({"w":{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,0]}})",
                      ""),
      {"'w'", "overflows int64"});
}

TEST(SafetensorsErrors, UnknownDtype) {
  expect_rejected(
      safetensors_raw(R"({"w":{"dtype":"Q4_K","shape":[1],"data_offsets":[0,1]}})", "x"),
      {"'w'", "unsupported dtype 'Q4_K'", "BF16"});
  expect_rejected(safetensors_raw(R"({"w":{"dtype":7,"shape":[1],"data_offsets":[0,1]}})", "x"),
                  {"'w'", "dtype"});
}

TEST(SafetensorsErrors, MalformedFields) {
  expect_rejected(safetensors_raw(R"({"w":{"dtype":"U8","data_offsets":[0,1]}})", "x"),
                  {"'w'", "no \"shape\""});
  expect_rejected(safetensors_raw(R"({"w":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", "x"),
                  {"'w'", "non-negative"});
  expect_rejected(
      safetensors_raw(R"({"w":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}})", "x"),
      {"'w'", "non-negative integer"});
  expect_rejected(
      safetensors_raw(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}})", "x"),
      {"'w'", "[begin, end]"});
  expect_rejected(safetensors_raw(R"({"w":{"dtype":"U8","shape":[1]}})", "x"),
                  {"'w'", "no \"data_offsets\""});
}

TEST(SafetensorsErrors, BadMetadata) {
  expect_rejected(safetensors_raw(R"({"__metadata__":{"format":1}})", ""),
                  {"__metadata__", "'format'", "string"});
  expect_rejected(safetensors_raw(R"({"__metadata__":["pt"]})", ""), {"__metadata__", "object"});
}

TEST(SafetensorsErrors, ExcessiveNesting) {
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  expect_rejected(
      safetensors_raw(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":)" + deep + "}}",
                      "x"),
      {"nested deeper"});
}

TEST(SafetensorsErrors, MissingFileAndFolder) {
  const std::string message =
      testing::input_error_of([] { SafetensorsFile::open("/nonexistent/x.safetensors"); });
  EXPECT_NE(message.find("/nonexistent/x.safetensors"), std::string::npos) << message;
  testing::ScratchDir dir;
  EXPECT_NE(testing::input_error_of([&] { SafetensorsFile::open(dir.path().string()); }), "");
}

}  // namespace
}  // namespace hadron
