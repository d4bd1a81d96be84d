// libFuzzer: a safetensors header parse of any bytes returns a consistent header or throws
// InputError; anything else (crash, sanitizer report, other exception) is a finding.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "loader/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const hadron::SafetensorsHeader header =
        hadron::parse_safetensors_header({data, size}, "fuzz.safetensors");
    // A validated header tiles the data section exactly.
    size_t end = 0;
    for (const hadron::TensorInfo& info : header.tensors) {
      if (info.offset != end) __builtin_trap();
      if (info.nbytes != static_cast<size_t>(info.numel()) * hadron::dtype_size(info.dtype))
        __builtin_trap();
      end += info.nbytes;
    }
    if (header.data_offset + end != size) __builtin_trap();
  } catch (const hadron::InputError&) {
  }
  return 0;
}
