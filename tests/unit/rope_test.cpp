#include "models/rope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "core/error.h"

namespace hadron {
namespace {

TEST(Rope, DefaultFrequenciesAndTableLayout) {
  RopeConfig rope;
  rope.theta = 10000;
  const std::vector<double> inv_freq = rope_inv_freq(rope, 8);
  ASSERT_EQ(inv_freq.size(), 4u);
  EXPECT_NEAR(inv_freq[0], 1.0, 1e-12);
  EXPECT_NEAR(inv_freq[1], std::pow(10000.0, -0.25), 1e-7);
  const std::vector<float> table = rope_cos_sin_table(rope, 8, 3);
  // Row p: 4 cosines then 4 sines of p * inv_freq.
  EXPECT_NEAR(table[2 * 8 + 1], std::cos(2 * inv_freq[1]), 1e-6);
  EXPECT_NEAR(table[2 * 8 + 4 + 1], std::sin(2 * inv_freq[1]), 1e-6);
}

TEST(Rope, DeepSeekYarnSoftmaxMscale) {
  RopeConfig rope;
  EXPECT_EQ(mla_softmax_mscale(rope), 1.0);  // no mscale_all_dim: qk_head_dim^-0.5 alone
  rope.type = "yarn";
  rope.factor = 40;
  rope.mscale = 1;
  rope.mscale_all_dim = 1;
  const double mscale = 0.1 * std::log(40.0) + 1.0;
  EXPECT_NEAR(mla_softmax_mscale(rope), mscale * mscale, 1e-12);
  rope.factor = 1;  // no scaling: yarn_get_mscale is 1
  EXPECT_EQ(mla_softmax_mscale(rope), 1.0);
}

TEST(Rope, Llama3ScalesOnlyLowFrequencies) {
  RopeConfig plain;
  plain.theta = 500000;
  RopeConfig llama3 = plain;
  llama3.type = "llama3";
  llama3.factor = 8;
  llama3.low_freq_factor = 1;
  llama3.high_freq_factor = 4;
  llama3.original_max_position_embeddings = 8192;
  const std::vector<double> base = rope_inv_freq(plain, 128), scaled = rope_inv_freq(llama3, 128);
  for (size_t i = 0; i < base.size(); ++i) {
    const double wavelen = 2 * std::numbers::pi / base[i];
    if (wavelen < 8192 / 4.0) {
      EXPECT_DOUBLE_EQ(scaled[i], base[i]) << i;
    }
    if (wavelen > 8192 / 1.0) {
      EXPECT_DOUBLE_EQ(scaled[i], base[i] / 8) << i;
    }
    EXPECT_LE(scaled[i], base[i]);
    EXPECT_GE(scaled[i], base[i] / 8 - 1e-18);
  }
}

TEST(Rope, LinearDividesAndUnknownTypesAreRefused) {
  RopeConfig linear;
  linear.type = "linear";
  linear.factor = 4;
  RopeConfig plain;
  EXPECT_DOUBLE_EQ(rope_inv_freq(linear, 16)[3], rope_inv_freq(plain, 16)[3] / 4);
  RopeConfig unknown;
  unknown.type = "su";
  EXPECT_THROW(rope_inv_freq(unknown, 16), InputError);
  EXPECT_EQ(rope_rotary_dim(plain, 128), 128);
  RopeConfig partial;
  partial.partial_rotary_factor = 0.25;
  EXPECT_EQ(rope_rotary_dim(partial, 256), 64);
}

}  // namespace
}  // namespace hadron
