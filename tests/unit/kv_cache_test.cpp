// The KV pool's layout: a sparse-attention layer's indexer keys sit in the same pool as its
// latent (counted in bytes_per_block), without overlapping any other cache.
#include "kv/kv_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_backend.h"

namespace hadron {
namespace {

TEST(KvCache, IndexCacheBesideTheLatentInOneBudget) {
  const std::vector<KvLayerSpec> layers = {KvLayerSpec::latent(32, 8, 16),
                                           KvLayerSpec::latent(32, 8), KvLayerSpec{2, 4}};
  EXPECT_TRUE(layers[0].has_index());
  EXPECT_FALSE(layers[1].has_index());
  EXPECT_EQ(layers[0].values_per_token(), 40 + 16);
  EXPECT_EQ(layers[1].values_per_token(), 40);
  EXPECT_EQ(layers[2].values_per_token(), 2 * 2 * 4);
  const int64_t n_blocks = 3, block_size = 4;
  EXPECT_EQ(KvCache::bytes_per_block(layers, block_size, DType::F32),
            static_cast<size_t>(block_size * (56 + 40 + 16) * 4));
  auto backend = make_cpu_backend();
  KvCache kv;
  kv.allocate(*backend, layers, n_blocks, block_size, DType::F32);
  EXPECT_EQ(kv.bytes(), KvCache::bytes_per_block(layers, block_size, DType::F32) * n_blocks);
  const Tensor& index = kv.index_cache(0);
  ASSERT_TRUE(index.defined());
  EXPECT_EQ(index.ndim, 3);
  EXPECT_EQ(index.size(0), n_blocks);
  EXPECT_EQ(index.size(1), block_size);
  EXPECT_EQ(index.size(2), 16);
  EXPECT_FALSE(kv.index_cache(1).defined());
  EXPECT_FALSE(kv.index_cache(2).defined());
  // Every cache a disjoint byte range of the pool.
  std::vector<std::pair<const char*, const char*>> ranges;
  for (int l = 0; l < 3; ++l)
    for (const Tensor* t : {&kv.k_cache(l), &kv.v_cache(l), &kv.index_cache(l)})
      if (t->defined())
        ranges.emplace_back(static_cast<const char*>(t->data),
                            static_cast<const char*>(t->data) + t->nbytes());
  ASSERT_EQ(ranges.size(), 5u);
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) EXPECT_LE(ranges[i - 1].second, ranges[i].first);
  EXPECT_LE(ranges.back().second - ranges.front().first, static_cast<ptrdiff_t>(kv.bytes()));
}

}  // namespace
}  // namespace hadron
