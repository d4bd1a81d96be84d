// Element types of tensors and checkpoints, and scalar conversions to and from fp32.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace hadron {

enum class DType : uint8_t { F32, F16, BF16, F8_E4M3, F8_E5M2, I8, U8, I16, I32, I64, BOOL };

// Bytes per element.
size_t dtype_size(DType dtype);
// The safetensors spelling: "F32", "BF16", "F8_E4M3", ...
std::string_view dtype_name(DType dtype);
// Parses a safetensors dtype string; nullopt when unknown.
std::optional<DType> parse_dtype(std::string_view name);
bool is_float(DType dtype);

inline float bits_to_f32(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline uint32_t f32_to_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float bf16_to_f32(uint16_t value) { return bits_to_f32(uint32_t{value} << 16); }

// Round to nearest even; NaN stays NaN.
inline uint16_t f32_to_bf16(float value) {
  uint32_t bits = f32_to_bits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float f16_to_f32(uint16_t value);
uint16_t f32_to_f16(float value);
float fp8_e4m3_to_f32(uint8_t value);
float fp8_e5m2_to_f32(uint8_t value);
// Round to nearest even, saturating at +-448 (e4m3fn has no infinity); NaN -> 0x7f.
uint8_t f32_to_fp8_e4m3(float value);

// Converts n elements of a float dtype (F32, F16, BF16, F8_*) to fp32.
void convert_to_f32(const void* src, DType src_dtype, float* dst, size_t n);
// Converts n fp32 values to F32, F16, BF16 or F8_E4M3 (saturating at +-448).
void convert_from_f32(const float* src, void* dst, DType dst_dtype, size_t n);
// Converts n elements from any float dtype to F32, F16 or BF16 (a copy when they match).
void convert_dtype(const void* src, DType src_dtype, void* dst, DType dst_dtype, size_t n);

}  // namespace hadron
