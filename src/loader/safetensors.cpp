// The safetensors format: an 8-byte little-endian header length N, N bytes of UTF-8 JSON
// {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}},
// then the data section. Validation follows Hugging Face's reference crate (safetensors
// tensor.rs `read_metadata` / `Metadata::validate`), plus duplicate-name detection.
#include "loader/safetensors.h"

#include <fcntl.h>
#include <fmt/ranges.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string_view>
#include <tuple>

#include "core/error.h"
#include "core/utf8.h"
#include "loader/json_text.h"

namespace hadron {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference library's limit
constexpr size_t kLengthBytes = 8;

// A tensor entry before its offsets are known to be consistent.
struct Entry {
  TensorInfo info;
  uint64_t begin = 0;
  uint64_t end = 0;
};

uint64_t read_u64_le(const uint8_t* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = value << 8 | bytes[i];
  return value;
}

// A JSON number usable as Rust's usize: a non-negative integer (serde also takes -0).
bool as_u64(const json& value, uint64_t& out) {
  if (value.is_number_unsigned()) {
    out = value.get<uint64_t>();
    return true;
  }
  if (value.is_number_integer() && value.get<int64_t>() == 0) {
    out = 0;
    return true;
  }
  return false;
}

std::string supported_dtypes() {
  std::string names;
  for (int i = 0; i <= static_cast<int>(DType::BOOL); ++i)
    names += fmt::format("{}{}", i ? ", " : "", dtype_name(static_cast<DType>(i)));
  return names;
}

DType parse_entry_dtype(const json& object, const std::string& name, const std::string& file) {
  const auto it = object.find("dtype");
  if (it == object.end()) input_error("{}: tensor '{}' has no \"dtype\"", file, name);
  if (!it->is_string()) input_error("{}: tensor '{}': \"dtype\" is not a string", file, name);
  const auto& text = it->get_ref<const std::string&>();
  const std::optional<DType> dtype = parse_dtype(text);
  if (!dtype)
    input_error("{}: tensor '{}' has unsupported dtype '{}' (supported: {})", file, name, text,
                supported_dtypes());
  return *dtype;
}

std::vector<int64_t> parse_entry_shape(const json& object, const std::string& name,
                                       const std::string& file) {
  const auto it = object.find("shape");
  if (it == object.end()) input_error("{}: tensor '{}' has no \"shape\"", file, name);
  if (!it->is_array()) input_error("{}: tensor '{}': \"shape\" is not a list", file, name);
  std::vector<int64_t> shape;
  for (const json& dim : *it) {
    uint64_t value = 0;
    if (!as_u64(dim, value))
      input_error("{}: tensor '{}': shape entry {} is not a non-negative integer", file, name,
                  dim.dump());
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      input_error("{}: tensor '{}': shape entry {} overflows int64", file, name, value);
    shape.push_back(static_cast<int64_t>(value));
  }
  return shape;
}

Entry parse_entry(const std::string& name, const json& object, const std::string& file) {
  if (!object.is_object())
    input_error("{}: tensor '{}' is described by {} rather than a JSON object", file, name,
                object.type_name());
  Entry entry;
  entry.info.name = name;
  entry.info.file = file;
  entry.info.dtype = parse_entry_dtype(object, name, file);
  entry.info.shape = parse_entry_shape(object, name, file);
  const auto it = object.find("data_offsets");
  if (it == object.end()) input_error("{}: tensor '{}' has no \"data_offsets\"", file, name);
  if (!it->is_array() || it->size() != 2 || !as_u64((*it)[0], entry.begin) ||
      !as_u64((*it)[1], entry.end))
    input_error(
        "{}: tensor '{}': \"data_offsets\" must be [begin, end] with non-negative "
        "integers, got {}",
        file, name, it->dump());
  return entry;
}

std::map<std::string, std::string> parse_metadata(const json& value, const std::string& file) {
  std::map<std::string, std::string> metadata;
  if (value.is_null()) return metadata;
  if (!value.is_object())
    input_error("{}: \"__metadata__\" must be an object of strings, got {}", file,
                value.type_name());
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string())
      input_error("{}: \"__metadata__\" entry '{}' must be a string, got {}", file, key,
                  item.type_name());
    metadata.emplace(key, item.get<std::string>());
  }
  return metadata;
}

// Element count and byte size with overflow checks (the reference's ValidationOverflow).
// Counts must also fit int64 (numel()), stricter than the reference only for shapes whose
// partial products pass 2^63, which no file can hold unless a later dimension is 0.
uint64_t checked_nbytes(const TensorInfo& info, const std::string& file) {
  int64_t count = 1;
  for (int64_t dim : info.shape)
    if (__builtin_mul_overflow(count, dim, &count))
      input_error("{}: tensor '{}': element count of shape [{}] overflows 64 bits", file, info.name,
                  fmt::join(info.shape, ", "));
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), dtype_size(info.dtype), &bytes))
    input_error("{}: tensor '{}': byte size of {}[{}] overflows 64 bits", file, info.name,
                dtype_name(info.dtype), fmt::join(info.shape, ", "));
  return bytes;
}

// Offsets must tile [0, end) in order, each span matching its dtype and shape.
// Returns the end of the last tensor.
uint64_t validate_layout(std::vector<Entry>& entries, const std::string& file) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end, a.info.name) < std::tie(b.begin, b.end, b.info.name);
  });
  uint64_t start = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& entry = entries[i];
    const std::string& name = entry.info.name;
    if (entry.end < entry.begin)
      input_error("{}: tensor '{}': data_offsets [{}, {}] end before they begin", file, name,
                  entry.begin, entry.end);
    if (entry.begin > start)
      input_error(
          "{}: tensor '{}' starts at byte {} but the previous tensor ends at {}: a "
          "hole of {} bytes in the data section",
          file, name, entry.begin, start, entry.begin - start);
    if (entry.begin < start)
      input_error(
          "{}: tensor '{}' (data_offsets [{}, {}]) overlaps tensor '{}' which ends at "
          "byte {}",
          file, name, entry.begin, entry.end, entries[i - 1].info.name, start);
    start = entry.end;
    const uint64_t expected = checked_nbytes(entry.info, file);
    if (entry.end - entry.begin != expected)
      input_error("{}: tensor '{}': {}[{}] needs {} bytes but data_offsets [{}, {}] span {}", file,
                  name, dtype_name(entry.info.dtype), fmt::join(entry.info.shape, ", "), expected,
                  entry.begin, entry.end, entry.end - entry.begin);
  }
  return start;
}

// Length prefix and JSON text of the header; throws on the reference's early errors.
std::string_view header_text(std::span<const uint8_t> bytes, const std::string& file) {
  if (bytes.size() < kLengthBytes)
    input_error("{}: {} bytes is too small for a safetensors file (8-byte header length)", file,
                bytes.size());
  const uint64_t header_bytes = read_u64_le(bytes.data());
  if (header_bytes > kMaxHeaderBytes)
    input_error("{}: header length {} exceeds the limit of {} bytes", file, header_bytes,
                kMaxHeaderBytes);
  if (header_bytes > bytes.size() - kLengthBytes)
    input_error("{}: header length {} runs past the end of the file ({} bytes): truncated?", file,
                header_bytes, bytes.size());
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + kLengthBytes,
                              header_bytes);
  if (!is_valid_utf8(text)) input_error("{}: header is not valid UTF-8", file);
  return text;
}

}  // namespace

int64_t TensorInfo::numel() const {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

SafetensorsHeader parse_safetensors_header(std::span<const uint8_t> bytes,
                                           const std::string& file) {
  const std::string_view text = header_text(bytes, file);
  const json root = parse_json_strict(text, file + " (header)");
  if (!root.is_object())
    input_error("{}: header must be a JSON object, got {}", file, root.type_name());
  SafetensorsHeader header;
  std::vector<Entry> entries;
  for (const auto& [key, value] : root.items()) {
    if (key == "__metadata__")
      header.metadata = parse_metadata(value, file);
    else
      entries.push_back(parse_entry(key, value, file));
  }
  const uint64_t data_end = validate_layout(entries, file);
  header.data_offset = kLengthBytes + text.size();
  const uint64_t data_bytes = bytes.size() - header.data_offset;
  if (data_end != data_bytes) {
    const std::string last = entries.empty() ? "(none)" : entries.back().info.name;
    input_error(
        "{}: tensors end at byte {} of the data section (last tensor '{}') but the "
        "data section has {} bytes: {}",
        file, data_end, last, data_bytes,
        data_end > data_bytes ? "truncated file or offsets out of bounds"
                              : "trailing bytes no tensor covers");
  }
  for (Entry& entry : entries) {
    entry.info.offset = entry.begin;
    entry.info.nbytes = entry.end - entry.begin;
    entry.info.data = reinterpret_cast<const void*>(static_cast<uintptr_t>(entry.begin));
    header.tensors.push_back(std::move(entry.info));
  }
  return header;
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO must not block
  if (fd < 0) input_error("cannot open {}: {}", path, std::strerror(errno));
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    input_error("{}: not a regular file", path);
  }
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = path;
  const auto size = static_cast<size_t>(status.st_size);
  if (size > 0) {
    void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int mmap_errno = errno;
    ::close(fd);
    if (mapping == MAP_FAILED) input_error("cannot map {}: {}", path, std::strerror(mmap_errno));
    file->mapping_ = mapping;
    file->mapping_bytes_ = size;
  } else {
    ::close(fd);
  }
  const auto* base = static_cast<const uint8_t*>(file->mapping_);
  file->header_ = parse_safetensors_header({base, size}, path);
  for (TensorInfo& info : file->header_.tensors)
    info.data = base + file->header_.data_offset + info.offset;
  return file;
}

SafetensorsFile::~SafetensorsFile() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_bytes_);
}

}  // namespace hadron
