#include "core/dtype.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.h"

namespace hadron {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
  bool is_float;
};

constexpr std::array<DTypeInfo, 11> kDTypes = {{
    {DType::F32, "F32", 4, true},
    {DType::F16, "F16", 2, true},
    {DType::BF16, "BF16", 2, true},
    {DType::F8_E4M3, "F8_E4M3", 1, true},
    {DType::F8_E5M2, "F8_E5M2", 1, true},
    {DType::I8, "I8", 1, false},
    {DType::U8, "U8", 1, false},
    {DType::I16, "I16", 2, false},
    {DType::I32, "I32", 4, false},
    {DType::I64, "I64", 8, false},
    {DType::BOOL, "BOOL", 1, false},
}};

const DTypeInfo& info(DType dtype) { return kDTypes[static_cast<size_t>(dtype)]; }

}  // namespace

size_t dtype_size(DType dtype) { return info(dtype).size; }
std::string_view dtype_name(DType dtype) { return info(dtype).name; }
bool is_float(DType dtype) { return info(dtype).is_float; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& entry : kDTypes)
    if (entry.name == name) return entry.dtype;
  return std::nullopt;
}

float f16_to_f32(uint16_t value) {
  const uint32_t sign = uint32_t{value & 0x8000u} << 16;
  const uint32_t exponent = (value >> 10) & 0x1f;
  const uint32_t mantissa = value & 0x3ff;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return bits_to_f32(sign | 0x7f800000u | (mantissa << 13));
  return bits_to_f32(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t f32_to_f16(float value) {
  const uint32_t bits = f32_to_bits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const float magnitude = std::fabs(value);
  if (std::isnan(value)) return sign | 0x7e00;
  if (magnitude >= 65520.0f) return sign | 0x7c00;  // rounds to infinity
  if (magnitude < 6.103515625e-05f) {               // subnormal: units of 2^-24, nearest even
    return sign | static_cast<uint16_t>(std::nearbyint(magnitude * 16777216.0f));
  }
  uint32_t abs_bits = bits & 0x7fffffffu;
  abs_bits += 0xfffu + ((abs_bits >> 13) & 1u);  // round mantissa to 10 bits, nearest even
  return sign | static_cast<uint16_t>(((abs_bits >> 23) - 112) << 10 | ((abs_bits >> 13) & 0x3ff));
}

// e4m3fn: bias 7, no infinities, 0x7f/0xff are NaN, max 448.
float fp8_e4m3_to_f32(uint8_t value) {
  const bool negative = value & 0x80;
  const int exponent = (value >> 3) & 0xf;
  const int mantissa = value & 0x7;
  float magnitude;
  if (exponent == 0xf && mantissa == 0x7) {
    magnitude = NAN;
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -9);
  } else {
    magnitude = std::ldexp(1.0f + mantissa / 8.0f, exponent - 7);
  }
  return negative ? -magnitude : magnitude;
}

uint8_t f32_to_fp8_e4m3(float value) {
  if (std::isnan(value)) return 0x7f;
  const uint8_t sign = std::signbit(value) ? 0x80 : 0;
  const float magnitude = std::min(std::fabs(value), 448.0f);
  if (magnitude < 0.015625f) {  // below 2^-6: subnormal, units of 2^-9 (8 rounds up to 2^-6)
    return sign | static_cast<uint8_t>(std::nearbyint(magnitude * 512.0f));
  }
  int exponent = 0;
  const float fraction = std::frexp(magnitude, &exponent);  // magnitude = fraction 2^exponent
  int mantissa = static_cast<int>(std::nearbyint((fraction * 2.0f - 1.0f) * 8.0f));
  exponent -= 1;  // magnitude = (1 + mantissa / 8) 2^exponent
  if (mantissa == 8) mantissa = 0, ++exponent;
  return sign | static_cast<uint8_t>((exponent + 7) << 3 | mantissa);
}

// e5m2: IEEE-like with bias 15; the top 8 bits of an fp16.
float fp8_e5m2_to_f32(uint8_t value) { return f16_to_f32(static_cast<uint16_t>(value) << 8); }

void convert_to_f32(const void* src, DType src_dtype, float* dst, size_t n) {
  switch (src_dtype) {
    case DType::F32:
      std::memcpy(dst, src, n * sizeof(float));
      return;
    case DType::BF16: {
      const auto* in = static_cast<const uint16_t*>(src);
      for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(in[i]);
      return;
    }
    case DType::F16: {
      const auto* in = static_cast<const uint16_t*>(src);
      for (size_t i = 0; i < n; ++i) dst[i] = f16_to_f32(in[i]);
      return;
    }
    case DType::F8_E4M3: {
      const auto* in = static_cast<const uint8_t*>(src);
      for (size_t i = 0; i < n; ++i) dst[i] = fp8_e4m3_to_f32(in[i]);
      return;
    }
    case DType::F8_E5M2: {
      const auto* in = static_cast<const uint8_t*>(src);
      for (size_t i = 0; i < n; ++i) dst[i] = fp8_e5m2_to_f32(in[i]);
      return;
    }
    case DType::I8:
    case DType::U8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::BOOL:
      break;
  }
  HADRON_CHECK(false, "cannot convert {} to F32", dtype_name(src_dtype));
}

void convert_from_f32(const float* src, void* dst, DType dst_dtype, size_t n) {
  switch (dst_dtype) {
    case DType::F32:
      std::memcpy(dst, src, n * sizeof(float));
      return;
    case DType::BF16: {
      auto* out = static_cast<uint16_t*>(dst);
      for (size_t i = 0; i < n; ++i) out[i] = f32_to_bf16(src[i]);
      return;
    }
    case DType::F16: {
      auto* out = static_cast<uint16_t*>(dst);
      for (size_t i = 0; i < n; ++i) out[i] = f32_to_f16(src[i]);
      return;
    }
    case DType::F8_E4M3: {
      auto* out = static_cast<uint8_t*>(dst);
      for (size_t i = 0; i < n; ++i) out[i] = f32_to_fp8_e4m3(src[i]);
      return;
    }
    case DType::F8_E5M2:
    case DType::I8:
    case DType::U8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::BOOL:
      break;
  }
  HADRON_CHECK(false, "cannot convert F32 to {}", dtype_name(dst_dtype));
}

void convert_dtype(const void* src, DType src_dtype, void* dst, DType dst_dtype, size_t n) {
  if (src_dtype == dst_dtype) {
    std::memcpy(dst, src, n * dtype_size(src_dtype));
    return;
  }
  constexpr size_t kChunk = 4096;  // through fp32, a chunk at a time
  float scratch[kChunk];
  for (size_t done = 0; done < n; done += kChunk) {
    const size_t count = std::min(kChunk, n - done);
    convert_to_f32(static_cast<const char*>(src) + done * dtype_size(src_dtype), src_dtype, scratch,
                   count);
    convert_from_f32(scratch, static_cast<char*>(dst) + done * dtype_size(dst_dtype), dst_dtype,
                     count);
  }
}

}  // namespace hadron
