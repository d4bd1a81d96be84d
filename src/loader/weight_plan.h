// WeightPlan: what a model needs from a checkpoint, as data. Each entry maps one or more
// Hugging Face tensors (concatenated along dim 0: q/k/v -> qkv, gate/up -> gate_up, experts
// stacked) to one parameter the model holds as a Tensor. The loader fills the plan from a
// checkpoint or with dummy values and reports anything declared but missing or found but unused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/fp8.h"
#include "core/tensor.h"

namespace hadron {

struct WeightSource {
  std::string name;            // checkpoint tensor name
  std::vector<int64_t> shape;  // its expected shape
};

struct WeightSpec {
  std::string name;  // the parameter's name, for messages (the first source's name)
  std::vector<WeightSource> sources;
  Tensor* target = nullptr;  // where the loaded tensor view goes
  bool optional = false;     // absent in the checkpoint -> left undefined
  bool raw = false;          // integer data loaded as stored (MXFP4 blocks and scales)
  // The one source is stored with its last two dims swapped ([..., in, out], as transformers
  // holds fused experts in memory) and loaded as [..., out, in].
  bool transposed = false;
  // Set when the model can multiply by this 2-D [N, K] weight in FP8 (core/fp8.h): the loader
  // may then keep it as e4m3 codes and scales here (*target then views the same codes).
  Fp8Weight* fp8 = nullptr;

  // The merged shape: sources concatenated along dim 0 (last two dims swapped if transposed).
  std::vector<int64_t> shape() const;
  int64_t numel() const;
};

class WeightPlan {
 public:
  // One parameter from one checkpoint tensor.
  void add(Tensor* target, std::string name, std::vector<int64_t> shape);
  // One parameter merged from several tensors along dim 0.
  void add_merged(Tensor* target, std::vector<WeightSource> sources);
  // One parameter [..., out, in] from a tensor stored as stored_shape [..., in, out].
  void add_transposed(Tensor* target, std::string name, std::vector<int64_t> stored_shape);
  // A U8 tensor loaded as stored, for the model to decode (MXFP4 blocks and scales).
  void add_raw(Tensor* target, std::string name, std::vector<int64_t> shape);
  // A parameter the checkpoint may lack (e.g. biases of some variants).
  void add_optional(Tensor* target, std::string name, std::vector<int64_t> shape);
  // The spec loaded into `target` may be kept in FP8 into `fp8` (WeightSpec::fp8).
  void allow_fp8(const Tensor* target, Fp8Weight* fp8);
  // Checkpoint tensors starting with `prefix` may stay unused (vision towers, MTP layers...).
  void allow_unused(std::string prefix);

  bool unused_allowed(const std::string& tensor_name) const;
  const std::vector<WeightSpec>& specs() const { return specs_; }
  int64_t n_params() const;

 private:
  std::vector<WeightSpec> specs_;
  std::vector<std::string> allowed_unused_prefixes_;
};

}  // namespace hadron
