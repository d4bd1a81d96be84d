#include "core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace hadron {
namespace {

TEST(DType, NamesRoundTrip) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::F8_E4M3, DType::F8_E5M2,
                      DType::I8, DType::U8, DType::I16, DType::I32, DType::I64, DType::BOOL}) {
    EXPECT_EQ(parse_dtype(dtype_name(dtype)), dtype);
  }
  EXPECT_FALSE(parse_dtype("F4").has_value());
  EXPECT_EQ(dtype_size(DType::I64), 8u);
  EXPECT_EQ(dtype_size(DType::F8_E4M3), 1u);
}

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  // 1 + 2^-8 is exactly half-way between bf16 neighbours 1 and 1 + 2^-7: rounds to even (1).
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
}

TEST(DType, F16MatchesIeeeOnRandomValues) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
  for (int i = 0; i < 10000; ++i) {
    const float x = dist(rng) * std::ldexp(1.0f, -static_cast<int>(rng() % 30));
    const float back = f16_to_f32(f32_to_f16(x));
    if (std::fabs(x) >= 65520.0f) {
      EXPECT_TRUE(std::isinf(back)) << x;
    } else {
      // Within half a unit in the last place of fp16 (11 significant bits) or of subnormals.
      const float ulp = std::max(std::ldexp(std::fabs(x), -11), std::ldexp(1.0f, -25));
      EXPECT_LE(std::fabs(back - x), ulp) << x;
    }
  }
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
}

TEST(DType, Fp8Decoding) {
  EXPECT_EQ(fp8_e4m3_to_f32(0x38), 1.0f);    // exponent 7 = bias
  EXPECT_EQ(fp8_e4m3_to_f32(0x7e), 448.0f);  // largest finite
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_f32(0x7f)));
  EXPECT_EQ(fp8_e4m3_to_f32(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(fp8_e4m3_to_f32(0xb8), -1.0f);
  EXPECT_EQ(fp8_e5m2_to_f32(0x3c), 1.0f);
  EXPECT_EQ(fp8_e5m2_to_f32(0x7b), 57344.0f);
  EXPECT_TRUE(std::isinf(fp8_e5m2_to_f32(0x7c)));
}

}  // namespace
}  // namespace hadron
