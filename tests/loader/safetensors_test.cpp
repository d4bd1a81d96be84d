// Valid safetensors files read back exactly: every dtype, metadata, empty and scalar tensors,
// headers listed out of offset order.
#include "loader/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/dtype.h"
#include "test_files.h"

namespace hadron {
namespace {

using testing::bytes_of;
using testing::ScratchDir;
using testing::TensorBytes;

template <typename T>
std::vector<T> values_of(const TensorInfo& info) {
  std::vector<T> values(info.nbytes / sizeof(T));
  std::memcpy(values.data(), info.data, info.nbytes);
  return values;
}

TEST(Safetensors, RoundTripsEveryDtype) {
  const std::vector<float> f32 = {1.5f, -2.25f, 3.0f, 1e-3f, 7.0f, -0.0f};
  const std::vector<uint16_t> f16 = {f32_to_f16(0.5f), f32_to_f16(-3.0f), f32_to_f16(65504.0f)};
  const std::vector<uint16_t> bf16 = {f32_to_bf16(1.0f), f32_to_bf16(-7.5f)};
  const std::vector<uint8_t> e4m3 = {0x38, 0xb8, 0x7e, 0x01};  // 1, -1, 448, smallest subnormal
  const std::vector<int8_t> i8 = {-128, 0, 127};
  const std::vector<int16_t> i16 = {-32768, 12345};
  const std::vector<int32_t> i32 = {-7, 1 << 30};
  const std::vector<int64_t> i64 = {int64_t{1} << 40, -1};
  const std::vector<uint8_t> boolean = {1, 0, 1, 1};
  ScratchDir dir;
  const std::string path =
      dir.write("model.safetensors",
                testing::safetensors_bytes({{"f32", "F32", {2, 3}, bytes_of(f32)},
                                            {"f16", "F16", {3}, bytes_of(f16)},
                                            {"bf16", "BF16", {1, 2}, bytes_of(bf16)},
                                            {"e4m3", "F8_E4M3", {4}, bytes_of(e4m3)},
                                            {"e5m2", "F8_E5M2", {1}, std::string("\x3c", 1)},
                                            {"i8", "I8", {3}, bytes_of(i8)},
                                            {"u8", "U8", {2}, std::string("\xff\x01", 2)},
                                            {"i16", "I16", {2}, bytes_of(i16)},
                                            {"i32", "I32", {2}, bytes_of(i32)},
                                            {"i64", "I64", {2}, bytes_of(i64)},
                                            {"mask", "BOOL", {2, 2}, bytes_of(boolean)}},
                                           {{"format", "pt"}}));
  const std::unique_ptr<SafetensorsFile> file = SafetensorsFile::open(path);
  ASSERT_EQ(file->tensors().size(), 11u);
  EXPECT_EQ(file->metadata().at("format"), "pt");
  std::map<std::string, const TensorInfo*> by_name;
  for (const TensorInfo& info : file->tensors()) by_name[info.name] = &info;

  const TensorInfo& t_f32 = *by_name.at("f32");
  EXPECT_EQ(t_f32.dtype, DType::F32);
  EXPECT_EQ(t_f32.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t_f32.numel(), 6);
  EXPECT_EQ(t_f32.file, path);
  EXPECT_EQ(values_of<float>(t_f32), f32);

  std::vector<float> converted(3);
  convert_to_f32(by_name.at("f16")->data, DType::F16, converted.data(), 3);
  EXPECT_EQ(converted, (std::vector<float>{0.5f, -3.0f, 65504.0f}));
  convert_to_f32(by_name.at("bf16")->data, DType::BF16, converted.data(), 2);
  EXPECT_EQ(converted[1], -7.5f);
  convert_to_f32(by_name.at("e4m3")->data, DType::F8_E4M3, converted.data(), 3);
  EXPECT_EQ(converted, (std::vector<float>{1.0f, -1.0f, 448.0f}));
  EXPECT_EQ(by_name.at("e5m2")->dtype, DType::F8_E5M2);
  EXPECT_EQ(values_of<int8_t>(*by_name.at("i8")), i8);
  EXPECT_EQ(values_of<uint8_t>(*by_name.at("u8")), (std::vector<uint8_t>{255, 1}));
  EXPECT_EQ(values_of<int16_t>(*by_name.at("i16")), i16);
  EXPECT_EQ(values_of<int32_t>(*by_name.at("i32")), i32);
  EXPECT_EQ(values_of<int64_t>(*by_name.at("i64")), i64);
  EXPECT_EQ(by_name.at("mask")->dtype, DType::BOOL);
  EXPECT_EQ(values_of<uint8_t>(*by_name.at("mask")), boolean);
}

TEST(Safetensors, SortsTensorsByOffsetWhateverTheHeaderOrder) {
  const std::string header = R"({"second":{"dtype":"I32","shape":[1],"data_offsets":[4,8]},)"
                             R"("first":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})";
  const std::vector<int32_t> data = {11, 22};
  ScratchDir dir;
  const auto file = SafetensorsFile::open(
      dir.write("a.safetensors", testing::safetensors_raw(header, bytes_of(data))));
  ASSERT_EQ(file->tensors().size(), 2u);
  EXPECT_EQ(file->tensors()[0].name, "first");
  EXPECT_EQ(file->tensors()[0].offset, 0u);
  EXPECT_EQ(values_of<int32_t>(file->tensors()[1]), std::vector<int32_t>{22});
}

TEST(Safetensors, AcceptsEmptyAndScalarTensorsAndPaddedHeaders) {
  const std::vector<float> scalar = {42.0f};
  ScratchDir dir;
  const auto file = SafetensorsFile::open(dir.write(
      "a.safetensors", testing::safetensors_bytes({{"empty", "F32", {0, 8}, ""},
                                                   {"scalar", "F32", {}, bytes_of(scalar)}})));
  ASSERT_EQ(file->tensors().size(), 2u);
  EXPECT_EQ(file->tensors()[0].name, "empty");
  EXPECT_EQ(file->tensors()[0].numel(), 0);
  EXPECT_EQ(file->tensors()[0].nbytes, 0u);
  EXPECT_EQ(file->tensors()[1].numel(), 1);
  EXPECT_EQ(values_of<float>(file->tensors()[1]), scalar);
}

TEST(Safetensors, AcceptsAFileWithoutTensors) {
  ScratchDir dir;
  const auto file =
      SafetensorsFile::open(dir.write("a.safetensors", testing::safetensors_bytes({})));
  EXPECT_TRUE(file->tensors().empty());
  const auto with_null_metadata = SafetensorsFile::open(
      dir.write("b.safetensors", testing::safetensors_raw(R"({"__metadata__":null})", "")));
  EXPECT_TRUE(with_null_metadata->metadata().empty());
}

TEST(Safetensors, HeaderParserReportsOffsetsAndDataStart) {
  const std::string bytes =
      testing::safetensors_raw(R"({"x":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}}  )", "abc");
  const SafetensorsHeader header = parse_safetensors_header(
      {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "mem");
  ASSERT_EQ(header.tensors.size(), 1u);
  EXPECT_EQ(header.data_offset, bytes.size() - 3);
  EXPECT_EQ(header.tensors[0].offset, 0u);
  EXPECT_EQ(header.tensors[0].nbytes, 3u);
}

TEST(Safetensors, ReadsTheProjectFixture) {
  const auto file = SafetensorsFile::open(std::string(HADRON_SOURCE_DIR) +
                                          "/tests/fixtures/qwen3-tied/model.safetensors");
  ASSERT_FALSE(file->tensors().empty());
  size_t total = 0;
  for (const TensorInfo& info : file->tensors()) {
    EXPECT_EQ(info.nbytes, static_cast<size_t>(info.numel()) * dtype_size(info.dtype)) << info.name;
    total += info.nbytes;
  }
  EXPECT_GT(total, 0u);
}

}  // namespace
}  // namespace hadron
