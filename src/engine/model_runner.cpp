#include "engine/model_runner.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace hadron {
namespace {

// Activation bytes of a step, generously: per token the widest intermediate tensors of one
// layer plus the residual stream in fp32, and fp32 logits for up to max_logit_rows rows.
size_t arena_bytes(const ModelConfig& config, int64_t max_tokens, int64_t max_logit_rows) {
  const int64_t qkv = (config.n_heads + 2 * config.n_kv_heads) * config.head_dim;
  const LinearAttentionConfig& linear = config.linear_attention;
  // Gated DeltaNet: the input projection's parts, the convolution's output, the rule's output
  // and its gated norm.
  const int64_t linear_width =
      2 * (2 * linear.n_key_heads * linear.key_head_dim +
           3 * linear.n_value_heads * linear.value_head_dim + 2 * linear.n_value_heads);
  const int64_t widest =
      std::max({3 * config.intermediate_size, qkv + 4 * config.n_heads * config.head_dim,
                linear_width, 3 * config.moe.shared_expert_intermediate_size + config.hidden_size});
  const int64_t per_token = widest + 5 * config.hidden_size;
  return sizeof(float) * (static_cast<size_t>(max_tokens) * per_token +
                          static_cast<size_t>(max_logit_rows) * config.vocab_size) +
         (1 << 20);
}

constexpr int kSamplingColumns = 6;  // temperature, top_k, top_p, min_p, seed, step: 8 B each

// Bytes of the inputs buffer: the index arrays of the largest step (T tokens, S sequences,
// every token a logits row), then the sampling columns of S rows.
size_t inputs_bytes(const RunnerLimits& limits) {
  const int64_t t = limits.max_tokens, s = limits.max_logit_rows;
  const int64_t ints = 4 * t + 3 * s + 1 + s * limits.max_blocks_per_seq;
  return static_cast<size_t>(ints) * sizeof(int32_t) + 8 + kSamplingColumns * 8 * s;
}

}  // namespace

ModelRunner::ModelRunner(Backend& backend, Model& model, KvCache& kv, const RunnerLimits& limits)
    : backend_(backend), model_(model), kv_(kv), limits_(limits) {
  limits_.max_logit_rows = std::min(limits.max_tokens, limits.max_logit_rows);
  limits_.max_blocks_per_seq = std::max<int64_t>(1, limits.max_blocks_per_seq);
  arena_ = Arena(
      backend.allocate(arena_bytes(model.config(), limits_.max_tokens, limits_.max_logit_rows)));
  const size_t bytes = inputs_bytes(limits_);
  inputs_ = backend.allocate(bytes);
  const int64_t image_bytes = StepStaging::kHeaderBytes + static_cast<int64_t>(bytes);
  for (int turn = 0; turn < 2; ++turn) {
    images_[turn] = backend.allocate_host(image_bytes);
    tokens_[turn] = backend.allocate_host(limits_.max_logit_rows * sizeof(int32_t));
    staging_.images[turn] = images_[turn].view(DType::U8, {image_bytes});
    staging_.tokens[turn] = tokens_[turn].view(DType::I32, {limits_.max_logit_rows});
  }
  counter_ = backend.allocate(2 * sizeof(int32_t));
  staging_.counter = counter_.view(DType::I32, {2});
  const int32_t zero[2] = {0, 0};
  backend.copy(Tensor::view_of(const_cast<int32_t*>(zero), DType::I32, {2}), staging_.counter);
  sampled_ = backend.allocate(limits_.max_logit_rows * sizeof(int32_t));
}

ModelRunner::~ModelRunner() {
  for (InFlight& f : in_flight_) f.done->wait();
}

namespace {

// Where a step's index arrays lie, in this order, in the int32 prefix of the inputs image.
struct IndexArrays {
  int32_t *ids, *positions, *cu_seqlens, *kv_lens, *slots, *tables, *logits_rows, *state_slots,
      *end;

  IndexArrays(int32_t* base, int64_t n_tokens, int64_t n_seqs, int64_t table_width, int64_t n_rows)
      : ids(base),
        positions(ids + n_tokens),
        cu_seqlens(positions + n_tokens),
        kv_lens(cu_seqlens + n_seqs + 1),
        slots(kv_lens + n_seqs),
        tables(slots + n_tokens),
        logits_rows(tables + n_seqs * table_width),
        state_slots(logits_rows + n_rows),
        end(state_slots + n_seqs) {}
};

// Fills the arrays for `steps` then padding rows up to meta.n_seqs (one token 0 writing no
// KV, slot -1, empty context), and meta's sizes.
void fill_index_arrays(std::span<const SequenceStep> steps, int64_t block_size, int64_t table_width,
                       const IndexArrays& a, BatchMeta& meta) {
  std::fill(a.tables, a.logits_rows, 0);
  meta.decode_only = true;
  int64_t token = 0, row = 0;
  a.cu_seqlens[0] = 0;
  for (int64_t i = 0; i < meta.n_seqs; ++i) {
    const bool real = i < static_cast<int64_t>(steps.size());
    const SequenceStep pad{};
    const SequenceStep& s = real ? steps[i] : pad;
    const int64_t n_new = real ? static_cast<int64_t>(s.tokens.size()) : 1;
    const int64_t kv_len = real ? s.n_cached + n_new : 0;
    HADRON_CHECK(
        !real || (n_new > 0 && kv_len <= static_cast<int64_t>(s.blocks.size()) * block_size),
        "sequence {}: {} tokens need more than its {} blocks", i, kv_len, s.blocks.size());
    for (int64_t j = 0; j < n_new; ++j, ++token) {
      if (s.all_logits || j + 1 == n_new) a.logits_rows[row++] = static_cast<int32_t>(token);
      const int64_t pos = s.n_cached + j;
      a.ids[token] = real ? s.tokens[j] : 0;
      a.positions[token] = static_cast<int32_t>(pos);
      a.slots[token] =
          real ? static_cast<int32_t>(s.blocks[pos / block_size] * block_size + pos % block_size)
               : -1;
    }
    std::copy(s.blocks.begin(), s.blocks.end(), a.tables + i * table_width);
    a.cu_seqlens[i + 1] = static_cast<int32_t>(token);
    a.kv_lens[i] = static_cast<int32_t>(kv_len);
    a.state_slots[i] = real ? s.state_slot : -1;
    meta.max_q_len = std::max(meta.max_q_len, static_cast<int>(n_new));
    meta.max_kv_len = std::max(meta.max_kv_len, static_cast<int>(kv_len));
    meta.decode_only = meta.decode_only && n_new == 1;
  }
}

// Sampling columns of n_rows 8-byte slots each (temperature, top_k, top_p, min_p, seed,
// step); rows past `sampling` (padding) are zero: greedy.
void fill_sampling_columns(std::span<const RowSampling> sampling, int64_t n_rows, char* columns) {
  const int64_t column_bytes = n_rows * 8;
  std::memset(columns, 0, kSamplingColumns * column_bytes);
  for (int64_t r = 0; r < static_cast<int64_t>(sampling.size()); ++r) {
    const SampleRowParams& p = sampling[r].params;
    reinterpret_cast<float*>(columns)[r] = p.temperature;
    reinterpret_cast<int32_t*>(columns + column_bytes)[r] = p.top_k;
    reinterpret_cast<float*>(columns + 2 * column_bytes)[r] = p.top_p;
    reinterpret_cast<float*>(columns + 3 * column_bytes)[r] = p.min_p;
    reinterpret_cast<uint64_t*>(columns + 4 * column_bytes)[r] = sampling[r].seed;
    reinterpret_cast<uint64_t*>(columns + 5 * column_bytes)[r] = sampling[r].step;
  }
}

}  // namespace

ModelRunner::StepInputs ModelRunner::stage_inputs(std::span<const SequenceStep> steps,
                                                  std::span<const RowSampling> sampling,
                                                  int64_t pad_to, int64_t table_width) {
  const auto n_real = static_cast<int64_t>(steps.size());
  const int64_t n_seqs = std::max(n_real, pad_to);
  int64_t n_tokens = n_seqs - n_real, n_rows = n_seqs - n_real;
  for (const SequenceStep& s : steps) {
    n_tokens += static_cast<int64_t>(s.tokens.size());
    n_rows += s.all_logits ? static_cast<int64_t>(s.tokens.size()) : 1;
    table_width = std::max(table_width, static_cast<int64_t>(s.blocks.size()));
  }
  HADRON_CHECK(n_tokens <= limits_.max_tokens && n_seqs <= limits_.max_logit_rows &&
                   table_width <= limits_.max_blocks_per_seq,
               "step of {} tokens, {} sequences, {} blocks per sequence exceeds the runner's "
               "{}, {}, {}",
               n_tokens, n_seqs, table_width, limits_.max_tokens, limits_.max_logit_rows,
               limits_.max_blocks_per_seq);
  table_width = std::max<int64_t>(table_width, 1);
  // Turn n's image is written again at turn n + 2, when step n is done: launch() allows one
  // step in flight and take_tokens() waits for the oldest first; step() and the capture
  // warm-ups synchronize. (A device still reading it would see turn n + 2's header and trap.)
  const uint32_t turn = n_turns_;
  auto* image = static_cast<char*>(images_[turn & 1].data());
  std::memset(image, 0, StepStaging::kHeaderBytes);
  std::memcpy(image, &turn, sizeof(turn));
  auto* host = reinterpret_cast<int32_t*>(image + StepStaging::kHeaderBytes);
  const IndexArrays arrays(host, n_tokens, n_seqs, table_width, n_rows);
  StepInputs inputs;
  BatchMeta& meta = inputs.meta;
  meta.n_seqs = static_cast<int>(n_seqs);
  meta.n_tokens = static_cast<int>(n_tokens);
  meta.block_size = static_cast<int>(kv_.block_size());
  fill_index_arrays(steps, kv_.block_size(), table_width, arrays, meta);
  const size_t sampling_offset = ((arrays.end - host) * sizeof(int32_t) + 7) / 8 * 8;
  fill_sampling_columns(sampling, n_seqs, reinterpret_cast<char*>(host) + sampling_offset);

  // The same layout in the device buffer.
  const Device device = backend_.device();
  char* base = static_cast<char*>(inputs_.data());
  auto device_ints = [&](const int32_t* at, int64_t n) {
    return Tensor::view_of(base + (at - host) * sizeof(int32_t), DType::I32, {n}, device);
  };
  meta.token_ids = device_ints(arrays.ids, n_tokens);
  meta.positions = device_ints(arrays.positions, n_tokens);
  meta.cu_seqlens_q = device_ints(arrays.cu_seqlens, n_seqs + 1);
  meta.seq_lens_kv = device_ints(arrays.kv_lens, n_seqs);
  meta.slot_mapping = device_ints(arrays.slots, n_tokens);
  meta.block_tables =
      device_ints(arrays.tables, n_seqs * table_width).reshape({n_seqs, table_width});
  meta.logits_rows = device_ints(arrays.logits_rows, n_rows);
  meta.state_slots = device_ints(arrays.state_slots, n_seqs);
  const int64_t column_bytes = n_seqs * 8;
  auto column = [&](int c, DType dtype) {
    return Tensor::view_of(base + sampling_offset + c * column_bytes, dtype, {n_seqs}, device);
  };
  inputs.sampling = {column(0, DType::F32), column(1, DType::I32), column(2, DType::F32),
                     column(3, DType::F32), column(4, DType::I64), column(5, DType::I64)};
  const auto n_bytes = static_cast<int64_t>(sampling_offset + kSamplingColumns * column_bytes);
  inputs.device = inputs_.view(DType::U8, {n_bytes});
  inputs.n_ids = n_tokens;
  inputs.parity = static_cast<int>(turn & 1);
  ++n_turns_;  // only now: a step refused above leaves host and device turns in step
  return inputs;
}

void ModelRunner::run_sampled(const StepInputs& inputs) {
  arena_.reset();
  const Tensor sampled = sampled_.view(DType::I32, {limits_.max_logit_rows});
  backend_.begin_step(staging_, inputs.device, inputs.n_ids, sampled);
  const Tensor hidden = model_.forward(inputs.meta, kv_, arena_);
  const int64_t n_rows = hidden.size(0);
  const Tensor logits = arena_.alloc(DType::F32, {n_rows, model_.config().vocab_size});
  model_.compute_logits(hidden, logits);
  backend_.sample(logits, inputs.sampling, sampled.slice_rows(0, n_rows));
  backend_.end_step(staging_, sampled.slice_rows(0, n_rows));
}

std::vector<int64_t> ModelRunner::graph_batch_sizes(int64_t max_batch) {
  std::vector<int64_t> sizes;
  // Every size up to 16: a padding row costs a dense model little, but the MoE layers route
  // and compute it like a real token (docs/performance-notes.md, "CUDA graphs").
  for (int64_t b = 1; b <= std::min<int64_t>(max_batch, 16); ++b) sizes.push_back(b);
  // Then as vLLM: multiples of 8 up to 256, of 16 up to 512.
  for (int64_t b = 24; b <= std::min<int64_t>(max_batch, 512); b += b < 256 ? 8 : 16)
    sizes.push_back(b);
  return sizes;
}

int ModelRunner::capture_decode_graphs(int64_t max_batch) {
  if (backend_.device() == Device::CPU) return 0;
  max_batch = std::min(max_batch, limits_.max_logit_rows);
  HADRON_CHECK(in_flight_.empty(), "graphs are captured before any step runs");
  for (int64_t batch : graph_batch_sizes(max_batch)) {
    // Every row padding: no KV is written, attention sees empty contexts. The eager run
    // chooses and caches the GEMM algorithms and takes the turn its inputs were staged for;
    // the capture runs nothing.
    const StepInputs inputs = stage_inputs({}, {}, batch, limits_.max_blocks_per_seq);
    run_sampled(inputs);
    backend_.synchronize();
    auto graph = backend_.capture_graph([&] { run_sampled(inputs); });
    if (!graph) return 0;
    graphs_[batch] = std::move(graph);
  }
  return static_cast<int>(graphs_.size());
}

DeviceGraph* ModelRunner::graph_for(std::span<const SequenceStep> steps, int64_t& padded) {
  if (graphs_.empty() || !graphs_enabled_) return nullptr;
  for (const SequenceStep& s : steps)
    if (s.tokens.size() != 1 || s.all_logits) return nullptr;
  const auto it = graphs_.lower_bound(static_cast<int64_t>(steps.size()));
  if (it == graphs_.end()) return nullptr;
  padded = it->first;
  return it->second.get();
}

void ModelRunner::launch(std::span<const SequenceStep> steps,
                         std::span<const RowSampling> sampling) {
  HADRON_CHECK(in_flight_.size() < 2, "at most two launched steps may be in flight");
  HADRON_CHECK(sampling.size() == steps.size(), "{} sampling rows for {} sequences",
               sampling.size(), steps.size());
  for (const SequenceStep& s : steps)
    HADRON_CHECK(!s.all_logits, "device sampling takes one logits row per sequence");
  int64_t padded = 0;
  DeviceGraph* graph = graph_for(steps, padded);
  const StepInputs inputs =
      stage_inputs(steps, sampling, padded, graph ? limits_.max_blocks_per_seq : 0);
  if (graph) {
    graph->replay();
    ++n_graph_replays_;
  } else {
    run_sampled(inputs);
  }
  in_flight_.push_back(
      {backend_.record_event(), inputs.parity, static_cast<int64_t>(steps.size())});
}

std::vector<int32_t> ModelRunner::take_tokens() {
  HADRON_CHECK(!in_flight_.empty(), "take_tokens without a launched step");
  InFlight f = std::move(in_flight_.front());
  in_flight_.pop_front();
  f.done->wait();
  const auto* tokens = static_cast<const int32_t*>(tokens_[f.parity].data());
  return std::vector<int32_t>(tokens, tokens + f.n_rows);
}

std::vector<int32_t> ModelRunner::step_and_sample(std::span<const SequenceStep> steps,
                                                  std::span<const RowSampling> sampling) {
  launch(steps, sampling);
  return take_tokens();
}

std::vector<float> ModelRunner::step(std::span<const SequenceStep> steps) {
  HADRON_CHECK(in_flight_.empty(), "a logits step while {} launches are in flight",
               in_flight_.size());
  const StepInputs inputs = stage_inputs(steps, {}, 0, 0);
  arena_.reset();
  backend_.begin_step(staging_, inputs.device, inputs.n_ids,
                      sampled_.view(DType::I32, {limits_.max_logit_rows}));
  const Tensor hidden = model_.forward(inputs.meta, kv_, arena_);
  const int64_t n_rows = hidden.size(0), vocab = model_.config().vocab_size;
  std::vector<float> host(n_rows * vocab);
  // The LM head runs on at most max_logit_rows rows at a time (scoring asks for every row).
  const size_t mark = arena_.used();
  for (int64_t begin = 0; begin < n_rows; begin += limits_.max_logit_rows) {
    const int64_t end = std::min(n_rows, begin + limits_.max_logit_rows);
    const Tensor logits = arena_.alloc(DType::F32, {end - begin, vocab});
    model_.compute_logits(hidden.slice_rows(begin, end), logits);
    backend_.copy(logits,
                  Tensor::view_of(host.data() + begin * vocab, DType::F32, {end - begin, vocab}));
    arena_.rewind(mark);
  }
  backend_.synchronize();
  return host;
}

}  // namespace hadron
