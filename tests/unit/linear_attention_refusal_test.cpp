// A backend without the linear-attention ops refuses hybrid models when the model
// is made, before any weight loads, and still takes the others. The backend here has every op
// but those, and none of them runs: making a model runs none.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "loader/hf_config.h"
#include "models/registry.h"

namespace hadron {
namespace {

class NoLinearAttentionBackend final : public Backend {
 public:
  Device device() const override { return Device::CPU; }
  std::string name() const override { return "test"; }
  DType activation_dtype() const override { return DType::F32; }
  DType weight_dtype(DType checkpoint_dtype) const override { return checkpoint_dtype; }
  Buffer allocate(size_t bytes) override { return Buffer::host(bytes); }
  void copy(const Tensor&, const Tensor&) override { unused(); }
  void synchronize() override {}
  void embedding(const Tensor&, const Tensor&, const Tensor&) override { unused(); }
  void rms_norm(const Tensor&, const Tensor&, float, const Tensor&) override { unused(); }
  void add_rms_norm(const Tensor&, const Tensor&, const Tensor&, float, const Tensor&) override {
    unused();
  }
  void linear(const Tensor&, const Tensor&, const Tensor&, const Tensor&) override { unused(); }
  void rope(const Tensor&, const Tensor&, const Tensor&, RopeStyle) override { unused(); }
  void store_kv(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                const Tensor&) override {
    unused();
  }
  void qkv_rope_store(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                      const QkvParams&, const Tensor&, const Tensor&, const Tensor&,
                      const Tensor&) override {
    unused();
  }
  void attention(const Tensor&, const Tensor&, const Tensor&, const BatchMeta&,
                 const AttentionParams&, const Tensor&) override {
    unused();
  }
  void silu_mul(const Tensor&, const Tensor&) override { unused(); }
  void gather_rows(const Tensor&, const Tensor&, const Tensor&) override { unused(); }
  void moe_route(const Tensor&, const Tensor&, const MoeRoutingParams&, const Tensor&,
                 const Tensor&) override {
    unused();
  }
  void moe_experts(const Tensor&, const Tensor&, const Tensor&, const MoeExpertWeights&,
                   const MoeExpertParams&, const Tensor&, const Tensor&) override {
    unused();
  }

 private:
  [[noreturn]] static void unused() { throw std::logic_error("no op runs when a model is made"); }
};

ModelConfig fixture_config(const std::string& name) {
  return load_model_config(std::string(HADRON_SOURCE_DIR) + "/tests/fixtures/" + name);
}

TEST(LinearAttentionRefusal, HybridModelsAreRefusedBeforeWeightsLoad) {
  NoLinearAttentionBackend backend;
  for (const char* name : {"qwen3-next", "qwen3.5", "qwen3.5-moe"}) {
    SCOPED_TRACE(name);
    try {
      create_model(fixture_config(name), backend);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("linear-attention"), std::string::npos) << message;
      EXPECT_NE(message.find("--device cpu"), std::string::npos) << message;
    }
  }
  EXPECT_NE(create_model(fixture_config("qwen3-moe"), backend), nullptr);
}

}  // namespace
}  // namespace hadron
