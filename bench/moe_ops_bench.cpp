// Kernel micro-benchmark of one MoE layer's CUDA ops (route, then the expert kernels) at the
// shapes of Qwen3-30B-A3B (128 experts, top-8, hidden 2048, intermediate 768, bf16) and
// gpt-oss-20b (32 experts, top-4, hidden 2880, intermediate 2880, MXFP4 and bf16), for 1 to 128
// tokens (batch-1 decode up to the decode steps of offline throughput). All
// experts' weights are resident (well above the 50 MB L2) and each launch routes to other
// random experts; times are CUDA-event medians per launch after warm-up. GB/s counts the
// weights of the distinct experts a launch routes to (each is read once per launch).
//
//   moe_ops_bench [--markdown FILE] [--mxfp4-only]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/moe_kernels.h"
#include "median_timing.h"

namespace hadron::cuda {
namespace {

constexpr int kIdSets = 64;  // random routings cycled over by successive launches

// Device memory freed at exit.
class Memory {
 public:
  ~Memory() {
    for (void* p : buffers_) cudaFree(p);
  }
  template <typename T>
  T* upload(const std::vector<T>& values) {
    void* p;
    CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(values.size() * sizeof(T), 16)));
    CUDA_CHECK(cudaMemcpy(p, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice));
    buffers_.push_back(p);
    return static_cast<T*>(p);
  }

 private:
  std::vector<void*> buffers_;
};

struct Shape {
  const char* model;
  int n_experts, top_k;
  int64_t hidden, inter;
  bool mxfp4, gpt_oss;  // gpt_oss: biases and the clamped interleaved activation
};

struct Row {
  std::string model, op, format;
  int64_t n_tokens;
  double us, bytes;
};

uint64_t next_random(uint64_t& state) {
  state ^= state << 13, state ^= state >> 7, state ^= state << 17;
  return state;
}

// Random bf16 of magnitude 2^-7..2^-5 and random sign.
std::vector<uint16_t> random_bf16(int64_t n, uint64_t& state) {
  std::vector<uint16_t> values(n);
  for (auto& v : values) v = static_cast<uint16_t>(0x3c00 | (next_random(state) & 0x80ff));
  return values;
}

void bench_shape(const Shape& s, cudaStream_t stream, std::vector<Row>& rows) {
  Memory memory;
  uint64_t state = 0x2545f4914f6cdd1dull;
  const int64_t E = s.n_experts, H = s.hidden, I = s.inter;
  const void *gate_up, *down;
  const uint8_t *gate_up_scales = nullptr, *down_scales = nullptr;
  double expert_bytes = 3.0 * H * I * 2;
  if (s.mxfp4) {  // codes 0x77 (6.0) under scale 2^-8, as the dummy loader writes
    gate_up = memory.upload(std::vector<uint8_t>(E * 2 * I * H / 2, 0x77));
    gate_up_scales = memory.upload(std::vector<uint8_t>(E * 2 * I * H / 32, 119));
    down = memory.upload(std::vector<uint8_t>(E * H * I / 2, 0x77));
    down_scales = memory.upload(std::vector<uint8_t>(E * H * I / 32, 119));
    expert_bytes = 3.0 * H * I * (0.5 + 1.0 / 32);
  } else {
    gate_up = memory.upload(random_bf16(E * 2 * I * H, state));
    down = memory.upload(random_bf16(E * H * I, state));
  }
  const void* gate_up_bias = s.gpt_oss ? memory.upload(random_bf16(E * 2 * I, state)) : nullptr;
  const void* down_bias = s.gpt_oss ? memory.upload(random_bf16(E * H, state)) : nullptr;
  for (const int64_t n_tokens : {1, 2, 4, 8, 16, 32, 64, 128}) {
    const int64_t n_pairs = n_tokens * s.top_k;
    std::vector<float*> logits(kIdSets);
    std::vector<int32_t*> ids(kIdSets);
    double distinct_experts = 0;  // summed over the id sets
    for (int c = 0; c < kIdSets; ++c) {
      std::vector<float> values(n_tokens * E);
      for (float& v : values) v = static_cast<float>(next_random(state) % 1000) / 100.0f;
      logits[c] = memory.upload(values);
      std::vector<int32_t> picks(n_pairs);
      for (int64_t p = 0; p < n_pairs; ++p) {  // distinct experts per token
        const int64_t first = p / s.top_k * s.top_k;
        do {
          picks[p] = static_cast<int32_t>(next_random(state) % E);
        } while (std::find(&picks[first], &picks[p], picks[p]) != &picks[p]);
      }
      ids[c] = memory.upload(picks);
      std::sort(picks.begin(), picks.end());
      distinct_experts +=
          static_cast<double>(std::unique(picks.begin(), picks.end()) - picks.begin());
    }
    const float* weights = memory.upload(std::vector<float>(n_pairs, 1.0f / s.top_k));
    const void* x = memory.upload(random_bf16(n_tokens * H, state));
    void* out = memory.upload(std::vector<uint16_t>(n_tokens * H));
    int32_t* route_ids = memory.upload(std::vector<int32_t>(n_pairs));
    float* route_weights = memory.upload(std::vector<float>(n_pairs));
    const size_t workspace_bytes = moe_workspace_layout(nullptr, n_pairs, E, H, I, nullptr);
    MoeWorkspace workspace;
    moe_workspace_layout(memory.upload(std::vector<uint8_t>(workspace_bytes)), n_pairs, E, H, I,
                         &workspace);
    const char* format = s.mxfp4 ? "mxfp4" : "bf16";
    const double route_us = median_us(stream, kIdSets, [&](int c) {
      const MoeRouteArgs args{logits[c], nullptr,     false,   route_ids, route_weights,
                              n_tokens,  s.n_experts, s.top_k, false,     true,
                              1,         1,           1.0f};
      launch_moe_route(args, stream);
    });
    rows.push_back({s.model, "route", "f32", n_tokens, route_us, n_tokens * E * 4.0});
    const double experts_us = median_us(stream, kIdSets, [&](int c) {
      const MoeExpertsArgs args{
          x,         ids[c],         weights,     gate_up,   gate_up_bias, down,
          down_bias, gate_up_scales, down_scales, out,       n_tokens,     H,
          I,         s.n_experts,    s.top_k,     s.gpt_oss, 7.0f,         1.702f,
          false};
      launch_moe_experts(args, workspace, stream);
    });
    rows.push_back({s.model, "experts", format, n_tokens, experts_us,
                    distinct_experts / kIdSets * expert_bytes});
    std::fprintf(stderr, "%-14s %-6s T %-3lld route %7.1f us  experts %7.1f us\n", s.model, format,
                 static_cast<long long>(n_tokens), route_us, experts_us);
  }
}

void print(FILE* out, const std::vector<Row>& rows) {
  std::fprintf(out, "| model | op | weights | tokens | us | GB/s | %% of 3.0 TB/s |\n");
  std::fprintf(out, "|---|---|---|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const double gbs = r.bytes / (r.us * 1e-6) / 1e9;
    std::fprintf(out, "| %s | %s | %s | %lld | %.1f | %.0f | %.0f%% |\n", r.model.c_str(),
                 r.op.c_str(), r.format.c_str(), static_cast<long long>(r.n_tokens), r.us, gbs,
                 gbs / 30.0);
  }
}

}  // namespace
}  // namespace hadron::cuda

int main(int argc, char** argv) {
  using namespace hadron::cuda;
  const char* markdown_path = nullptr;
  bool mxfp4_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--markdown") == 0 && i + 1 < argc) markdown_path = argv[++i];
    if (std::strcmp(argv[i], "--mxfp4-only") == 0) mxfp4_only = true;
  }
  try {
    cudaDeviceProp props;
    CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
    std::printf("device: %s, %d SMs, L2 %d MB\n", props.name, props.multiProcessorCount,
                props.l2CacheSize >> 20);
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const Shape shapes[] = {{"qwen3-30b-a3b", 128, 8, 2048, 768, false, false},
                            {"gpt-oss-20b", 32, 4, 2880, 2880, true, true},
                            {"gpt-oss-20b", 32, 4, 2880, 2880, false, true}};
    std::vector<Row> rows;
    for (const Shape& s : shapes)
      if (s.mxfp4 || !mxfp4_only) bench_shape(s, stream, rows);
    print(stdout, rows);
    if (markdown_path != nullptr) {
      FILE* file = std::fopen(markdown_path, "w");
      if (file == nullptr) return 1;
      print(file, rows);
      std::fclose(file);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "moe_ops_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
