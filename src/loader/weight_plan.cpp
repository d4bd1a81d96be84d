#include "loader/weight_plan.h"

#include <utility>

#include "core/error.h"

namespace hadron {

std::vector<int64_t> WeightSource::local_shape() const {
  std::vector<int64_t> local = shape;
  const size_t dim = slice.dim < 0 ? local.size() + slice.dim : slice.dim;
  local[dim] /= slice.n_parts;
  return local;
}

std::vector<int64_t> WeightSpec::shape() const {
  std::vector<int64_t> merged = sources.front().local_shape();
  for (size_t i = 1; i < sources.size(); ++i) merged[0] += sources[i].local_shape()[0];
  if (transposed) std::swap(merged[merged.size() - 2], merged.back());
  return merged;
}

int64_t WeightSpec::numel() const {
  int64_t n = 1;
  for (int64_t dim : shape()) n *= dim;
  return n;
}

WeightPlan::WeightPlan(int rank, int world) : rank_(rank), world_(world) {
  HADRON_CHECK(world >= 1 && rank >= 0 && rank < world, "rank {} of {}", rank, world);
}

ShardSlice WeightPlan::slice(Shard shard, int64_t n_units, const std::string& what,
                             bool replicate_if_fewer) const {
  switch (shard) {
    case Shard::kReplicated:
      return {};
    case Shard::kColumn:
    case Shard::kRow: {
      const int dim = shard == Shard::kColumn ? 0 : -1;
      if (world_ == 1) return {};
      if (n_units % world_ == 0) return {dim, world_, rank_};
      if (!replicate_if_fewer || n_units > world_ || world_ % n_units != 0)
        input_error("--tensor-parallel-size {} does not divide {} ({}){}", world_, what, n_units,
                    replicate_if_fewer ? ", nor is it a multiple of it" : "");
      return {dim, n_units, rank_ * n_units / world_};
    }
  }
  return {};
}

void WeightPlan::add(Tensor* target, std::string name, std::vector<int64_t> shape,
                     ShardSlice slice) {
  add_merged(target, {{std::move(name), std::move(shape), slice}});
}

void WeightPlan::add_merged(Tensor* target, std::vector<WeightSource> sources) {
  HADRON_CHECK(!sources.empty() && target != nullptr, "weight with no source or target");
  for (const WeightSource& source : sources) {
    const auto rank = static_cast<int>(source.shape.size());
    HADRON_CHECK(rank > 0 && rank == static_cast<int>(sources[0].shape.size()),
                 "{}: merged sources need the same rank", source.name);
    const ShardSlice& slice = source.slice;
    HADRON_CHECK(slice.dim >= -rank && slice.dim < rank && slice.n_parts >= 1 && slice.part >= 0 &&
                     slice.part < slice.n_parts &&
                     source.shape[(slice.dim + rank) % rank] % slice.n_parts == 0,
                 "{}: slice {} of {} along dim {}", source.name, slice.part, slice.n_parts,
                 slice.dim);
    for (int d = 1; d < rank; ++d)
      HADRON_CHECK(source.local_shape()[d] == sources[0].local_shape()[d],
                   "{}: merged sources differ in dim {}", source.name, d);
  }
  specs_.push_back({sources[0].name, std::move(sources), target, false});
}

void WeightPlan::add_transposed(Tensor* target, std::string name,
                                std::vector<int64_t> stored_shape) {
  HADRON_CHECK(stored_shape.size() >= 2, "{}: a transposed weight needs two dims", name);
  add(target, std::move(name), std::move(stored_shape));
  specs_.back().transposed = true;
}

void WeightPlan::add_raw(Tensor* target, std::string name, std::vector<int64_t> shape) {
  add(target, std::move(name), std::move(shape));
  specs_.back().raw = true;
}

void WeightPlan::add_optional(Tensor* target, std::string name, std::vector<int64_t> shape) {
  add(target, std::move(name), std::move(shape));
  specs_.back().optional = true;
}

void WeightPlan::allow_fp8(const Tensor* target, Fp8Weight* fp8) {
  for (WeightSpec& spec : specs_)
    if (spec.target == target) {
      HADRON_CHECK(spec.shape().size() == 2 && !spec.transposed && !spec.raw,
                   "{}: only plain 2-D weights may be kept in FP8", spec.name);
      spec.fp8 = fp8;
      return;
    }
  HADRON_CHECK(false, "allow_fp8: no weight declared for this target");
}

void WeightPlan::allow_unused(std::string prefix) {
  allowed_unused_prefixes_.push_back(std::move(prefix));
}

bool WeightPlan::unused_allowed(const std::string& tensor_name) const {
  for (const std::string& prefix : allowed_unused_prefixes_)
    if (tensor_name.starts_with(prefix)) return true;
  return false;
}

int64_t WeightPlan::n_params() const {
  int64_t n = 0;
  for (const WeightSpec& spec : specs_) n += spec.numel();
  return n;
}

}  // namespace hadron
