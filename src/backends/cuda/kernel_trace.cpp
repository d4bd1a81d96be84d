#include "backends/cuda/kernel_trace.h"

#include "core/error.h"

#if HADRON_HAVE_CUPTI
#include <cuda_runtime.h>
#include <cupti.h>
#include <cxxabi.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "backends/cuda/cuda_check.h"
#endif

namespace hadron::cuda {

#if HADRON_HAVE_CUPTI
namespace {

// One kernel, copy or memset as CUPTI reported it: a kernel's name is CUPTI's (shared by every
// record of the kernel, kept for the process's lifetime), demangled only for the spans
// returned; a copy's or memset's is a literal.
struct RawSpan {
  const char* name;
  uint64_t start, end;
};

constexpr CUpti_ActivityKind kTracedKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

std::mutex records_mutex;
std::vector<RawSpan> records;

// Names of the copies in the timeline, bracketed apart from kernels'.
const char* copy_name(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "[memcpy HtoD]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "[memcpy DtoH]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "[memcpy DtoD]";
    default:
      return "[memcpy]";
  }
}

// Records of ~100-200 bytes: 64 MiB holds ~300k, a few hundred decode steps of a large MoE model.
// With 8 MiB buffers a traced MoE decode stalled ~5 ms at each buffer hand-over.
constexpr size_t kBufferBytes = size_t{64} << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard lock(records_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      // start, end and name sit at the same offsets in every kernel record version since 4.
      const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      records.push_back({kernel->name, kernel->start, kernel->end});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      records.push_back({copy_name(copy->copyKind), copy->start, copy->end});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* set = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      records.push_back({"[memset]", set->start, set->end});
    }
  }
  std::free(buffer);
}

const char* cupti_message(CUptiResult result) {
  const char* message = nullptr;
  cuptiGetResultString(result, &message);
  return message != nullptr ? message : "?";
}

void check_cupti(CUptiResult result, const char* what) {
  HADRON_CHECK(result == CUPTI_SUCCESS, "CUPTI {} failed: {}", what, cupti_message(result));
}

std::string demangled(const char* name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> plain(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return short_kernel_name(status == 0 && plain ? plain.get() : name);
}

}  // namespace

bool kernel_trace_available() { return true; }

void kernel_trace_start() {
  {
    std::lock_guard lock(records_mutex);
    records.clear();
  }
  CUptiResult result = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  for (CUpti_ActivityKind kind : kTracedKinds)
    if (result == CUPTI_SUCCESS) result = cuptiActivityEnable(kind);
  if (result != CUPTI_SUCCESS)
    input_error("--kernel-trace: CUPTI cannot trace kernels here ({}); it needs an NVIDIA GPU",
                cupti_message(result));
}

std::vector<KernelSpan> kernel_trace_stop(uint64_t from_ns, uint64_t to_ns) {
  CUDA_CHECK(cudaDeviceSynchronize());
  check_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "flush");
  for (CUpti_ActivityKind kind : kTracedKinds) check_cupti(cuptiActivityDisable(kind), "disable");
  std::vector<KernelSpan> spans;
  std::map<const char*, std::string> names;  // CUPTI shares one name string per kernel
  std::lock_guard lock(records_mutex);
  for (const RawSpan& r : records) {
    if (r.start < from_ns || r.start > to_ns) continue;
    auto [it, fresh] = names.try_emplace(r.name);
    if (fresh) it->second = demangled(r.name);
    spans.push_back({it->second, r.start, r.end});
  }
  records.clear();
  return spans;
}

uint64_t kernel_trace_now_ns() {
  uint64_t now = 0;
  check_cupti(cuptiGetTimestamp(&now), "timestamp");
  return now;
}

#else

bool kernel_trace_available() { return false; }
void kernel_trace_start() { HADRON_CHECK(false, "this build has no CUPTI: no kernel trace"); }
std::vector<KernelSpan> kernel_trace_stop(uint64_t, uint64_t) {
  HADRON_CHECK(false, "this build has no CUPTI: no kernel trace");
  return {};
}
uint64_t kernel_trace_now_ns() { return 0; }

#endif

}  // namespace hadron::cuda
