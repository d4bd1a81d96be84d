#include "engine/model_runner.h"

#include <algorithm>

#include "core/error.h"

namespace hadron {
namespace {

// Activation bytes of a step, generously: per token the widest intermediate tensors of one
// layer plus the residual stream in fp32, and fp32 logits for up to max_logit_rows rows.
size_t arena_bytes(const ModelConfig& config, int64_t max_tokens, int64_t max_logit_rows) {
  const int64_t qkv = (config.n_heads + 2 * config.n_kv_heads) * config.head_dim;
  const int64_t widest = std::max(3 * config.intermediate_size,
                                  qkv + 2 * config.n_heads * config.head_dim);
  const int64_t per_token = widest + 5 * config.hidden_size;
  return sizeof(float) * (static_cast<size_t>(max_tokens) * per_token +
                          static_cast<size_t>(max_logit_rows) * config.vocab_size) +
         (1 << 20);
}

}  // namespace

ModelRunner::ModelRunner(Backend& backend, Model& model, KvCache& kv, int64_t max_tokens,
                         int64_t max_logit_rows)
    : backend_(backend), model_(model), kv_(kv), max_tokens_(max_tokens),
      max_logit_rows_(std::min(max_tokens, max_logit_rows)),
      arena_(backend.allocate(arena_bytes(model.config(), max_tokens, max_logit_rows_))) {}

BatchMeta ModelRunner::build_meta(std::span<const SequenceStep> steps) {
  const int64_t block_size = kv_.block_size();
  BatchMeta meta;
  meta.n_seqs = static_cast<int>(steps.size());
  meta.block_size = static_cast<int>(block_size);
  size_t max_blocks = 1;
  for (const SequenceStep& s : steps) max_blocks = std::max(max_blocks, s.blocks.size());
  std::vector<int32_t> ids, positions, cu_seqlens{0}, kv_lens, slots, logits_rows;
  std::vector<int32_t> tables(steps.size() * max_blocks, 0);
  meta.decode_only = true;
  for (size_t i = 0; i < steps.size(); ++i) {
    const SequenceStep& s = steps[i];
    const int64_t kv_len = s.n_cached + static_cast<int64_t>(s.tokens.size());
    HADRON_CHECK(!s.tokens.empty() && kv_len <= static_cast<int64_t>(s.blocks.size()) * block_size,
                 "sequence {}: {} tokens need more than its {} blocks", i, kv_len,
                 s.blocks.size());
    for (size_t j = 0; j < s.tokens.size(); ++j) {
      const int64_t pos = s.n_cached + static_cast<int64_t>(j);
      if (s.all_logits || j + 1 == s.tokens.size()) logits_rows.push_back(ids.size());
      ids.push_back(s.tokens[j]);
      positions.push_back(static_cast<int32_t>(pos));
      slots.push_back(static_cast<int32_t>(s.blocks[pos / block_size] * block_size +
                                           pos % block_size));
    }
    std::copy(s.blocks.begin(), s.blocks.end(), tables.begin() + i * max_blocks);
    cu_seqlens.push_back(static_cast<int32_t>(ids.size()));
    kv_lens.push_back(static_cast<int32_t>(kv_len));
    meta.max_q_len = std::max(meta.max_q_len, static_cast<int>(s.tokens.size()));
    meta.max_kv_len = std::max(meta.max_kv_len, static_cast<int>(kv_len));
    meta.decode_only = meta.decode_only && s.tokens.size() == 1;
  }
  meta.n_tokens = static_cast<int>(ids.size());
  HADRON_CHECK(meta.n_tokens <= max_tokens_, "step of {} tokens exceeds the runner's {}",
               meta.n_tokens, max_tokens_);
  // Every index array goes up in one copy and is viewed from one device buffer.
  const std::vector<int32_t>* arrays[] = {&ids, &positions, &cu_seqlens, &kv_lens,
                                          &slots, &tables, &logits_rows};
  std::vector<int32_t> staging;
  for (const auto* array : arrays) staging.insert(staging.end(), array->begin(), array->end());
  const auto total = static_cast<int64_t>(staging.size());
  if (meta_storage_.bytes() < staging.size() * sizeof(int32_t))
    meta_storage_ = backend_.allocate(std::max<size_t>(staging.size() * sizeof(int32_t) * 2, 4096));
  backend_.copy(Tensor::view_of(staging.data(), DType::I32, {total}),
                meta_storage_.view(DType::I32, {total}));
  Tensor* fields[] = {&meta.token_ids, &meta.positions, &meta.cu_seqlens_q, &meta.seq_lens_kv,
                      &meta.slot_mapping, &meta.block_tables, &meta.logits_rows};
  auto* cursor = static_cast<int32_t*>(meta_storage_.data());
  for (size_t f = 0; f < std::size(arrays); ++f) {
    const auto n = static_cast<int64_t>(arrays[f]->size());
    *fields[f] = Tensor::view_of(cursor, DType::I32, {n}, backend_.device());
    cursor += n;
  }
  meta.block_tables = meta.block_tables.reshape(
      {static_cast<int64_t>(steps.size()), static_cast<int64_t>(max_blocks)});
  return meta;
}

Tensor ModelRunner::forward_hidden(std::span<const SequenceStep> steps) {
  arena_.reset();
  const BatchMeta meta = build_meta(steps);
  return model_.forward(meta, kv_, arena_);
}

std::vector<float> ModelRunner::step(std::span<const SequenceStep> steps) {
  const Tensor hidden = forward_hidden(steps);
  const int64_t n_rows = hidden.size(0), vocab = model_.config().vocab_size;
  std::vector<float> host(n_rows * vocab);
  // The LM head runs on at most max_logit_rows_ rows at a time (scoring asks for every row).
  const size_t mark = arena_.used();
  for (int64_t begin = 0; begin < n_rows; begin += max_logit_rows_) {
    const int64_t end = std::min(n_rows, begin + max_logit_rows_);
    const Tensor logits = arena_.alloc(DType::F32, {end - begin, vocab});
    model_.compute_logits(hidden.slice_rows(begin, end), logits);
    backend_.copy(logits, Tensor::view_of(host.data() + begin * vocab, DType::F32,
                                          {end - begin, vocab}));
    arena_.rewind(mark);
  }
  backend_.synchronize();
  return host;
}

SamplingBatch ModelRunner::upload_sampling(std::span<const RowSampling> sampling) {
  // Columns packed into one 8-byte-slot staging array, uploaded in one copy.
  const auto n = static_cast<int64_t>(sampling.size());
  std::vector<int64_t> staging(6 * n);
  auto* f32 = reinterpret_cast<float*>(staging.data());
  auto* i32 = reinterpret_cast<int32_t*>(staging.data());
  for (int64_t r = 0; r < n; ++r) {
    f32[r] = sampling[r].temperature;            // slot 0: F32 [n] in the first n*4 bytes
    i32[2 * n + r] = sampling[r].top_k;          // slot 1
    f32[4 * n + r] = sampling[r].top_p;          // slot 2
    f32[6 * n + r] = sampling[r].min_p;          // slot 3
    staging[4 * n + r] = static_cast<int64_t>(sampling[r].seed);
    staging[5 * n + r] = static_cast<int64_t>(sampling[r].step);
  }
  const size_t bytes = staging.size() * sizeof(int64_t);
  if (sampling_storage_.bytes() < bytes) sampling_storage_ = backend_.allocate(2 * bytes + 4096);
  backend_.copy(Tensor::view_of(staging.data(), DType::I64, {6 * n}),
                sampling_storage_.view(DType::I64, {6 * n}));
  char* base = static_cast<char*>(sampling_storage_.data());
  const Device device = backend_.device();
  const int64_t slot = n * 8;
  return {Tensor::view_of(base, DType::F32, {n}, device),
          Tensor::view_of(base + slot, DType::I32, {n}, device),
          Tensor::view_of(base + 2 * slot, DType::F32, {n}, device),
          Tensor::view_of(base + 3 * slot, DType::F32, {n}, device),
          Tensor::view_of(base + 4 * slot, DType::I64, {n}, device),
          Tensor::view_of(base + 5 * slot, DType::I64, {n}, device)};
}

std::vector<int32_t> ModelRunner::step_and_sample(std::span<const SequenceStep> steps,
                                                  std::span<const RowSampling> sampling) {
  const Tensor hidden = forward_hidden(steps);
  HADRON_CHECK(hidden.size(0) <= max_logit_rows_, "{} logits rows exceed the runner's {}",
               hidden.size(0), max_logit_rows_);
  const Tensor logits = arena_.alloc(DType::F32, {hidden.size(0), model_.config().vocab_size});
  model_.compute_logits(hidden, logits);
  HADRON_CHECK(static_cast<int64_t>(sampling.size()) == logits.size(0),
               "{} sampling rows for {} logits rows", sampling.size(), logits.size(0));
  const SamplingBatch batch = upload_sampling(sampling);
  const Tensor tokens = arena_.alloc(DType::I32, {logits.size(0)});
  backend_.sample(logits, batch, tokens);
  std::vector<int32_t> host(tokens.numel());
  backend_.copy(tokens, Tensor::view_of(host.data(), DType::I32, {tokens.numel()}));
  backend_.synchronize();
  return host;
}

}  // namespace hadron
