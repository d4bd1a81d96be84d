// WeightPlan: what a model needs from a checkpoint, as data. Each entry maps one or more
// Hugging Face tensors (concatenated along dim 0: q/k/v -> qkv, gate/up -> gate_up, experts
// stacked) to one parameter the model holds as a Tensor. The loader fills the plan from a
// checkpoint or with dummy values and reports anything declared but missing or found but unused.
//
// Tensor parallelism: a plan is made for one rank of `world`, and each source says which slice
// of its checkpoint tensor that rank loads (ShardSlice), so a rank reads only its shard.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/fp8.h"
#include "core/tensor.h"

namespace hadron {

// How a parameter is split over the ranks of a tensor-parallel group.
enum class Shard : uint8_t {
  kReplicated,  // every rank holds all of it (norms, routers, the embedding)
  kColumn,      // dim 0 split: output features, heads, vocabulary rows (q/k/v, gate/up, LM head)
  kRow,         // the last dim split: input features (o_proj, down_proj); outputs are partial sums
};

// The slice of a checkpoint tensor a rank loads: part `part` of `n_parts` equal parts along
// `dim` (n_parts 1: the whole tensor).
struct ShardSlice {
  int dim = 0;
  int64_t n_parts = 1;
  int64_t part = 0;
};

struct WeightSource {
  std::string name;            // checkpoint tensor name
  std::vector<int64_t> shape;  // its expected shape in the checkpoint
  ShardSlice slice = {};       // what this rank loads of it

  // The shape this rank loads: shape with slice.dim divided by slice.n_parts.
  std::vector<int64_t> local_shape() const;
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

  // The merged shape this rank loads: its slices of the sources concatenated along dim 0 (last
  // two dims swapped if transposed).
  std::vector<int64_t> shape() const;
  int64_t numel() const;
};

class WeightPlan {
 public:
  // The plan of tensor-parallel rank `rank` of `world` (0 of 1: unsharded).
  explicit WeightPlan(int rank = 0, int world = 1);

  int rank() const { return rank_; }
  int world() const { return world_; }
  // Expert parallelism: MoE blocks place whole experts on ranks (declaring only this rank's)
  // instead of splitting every expert's intermediate dim.
  bool expert_parallel() const { return expert_parallel_; }
  void set_expert_parallel(bool enabled) { expert_parallel_ = enabled; }
  // This rank's slice for `shard` of a tensor whose split dim holds n_units indivisible units
  // (heads, rows). They are split evenly, an InputError naming `what` when world does not
  // divide them; except that with replicate_if_fewer and fewer units than ranks, each unit is
  // replicated on world / n_units consecutive ranks (KV heads when there are fewer than ranks).
  ShardSlice slice(Shard shard, int64_t n_units, const std::string& what,
                   bool replicate_if_fewer = false) const;

  // One parameter from one checkpoint tensor (sliced as `slice` says).
  void add(Tensor* target, std::string name, std::vector<int64_t> shape, ShardSlice slice = {});
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
  int rank_ = 0, world_ = 1;
  bool expert_parallel_ = false;
  std::vector<WeightSpec> specs_;
  std::vector<std::string> allowed_unused_prefixes_;
};

}  // namespace hadron
