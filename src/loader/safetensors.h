// safetensors checkpoints: one file or a sharded folder (model.safetensors.index.json),
// memory-mapped and validated as the format's reference library does.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace hadron {

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void* data = nullptr;  // into the mapping; valid while the file is open
  size_t nbytes = 0;
  size_t offset = 0;  // of its bytes from the start of the file's data section
  std::string file;   // path of the file holding it, for messages

  int64_t numel() const;
};

// The parsed, validated header of one file: tensors sorted by data offset.
struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;  // data holds the offset from the data section's start
  std::map<std::string, std::string> metadata;
  size_t data_offset = 0;  // 8 + header length
};

// Parses and validates the first bytes of a safetensors file (all of it for validation of
// offsets against file_bytes). Throws InputError naming `file` and the tensor at fault.
SafetensorsHeader parse_safetensors_header(std::span<const uint8_t> bytes, const std::string& file);

// One memory-mapped .safetensors file.
class SafetensorsFile {
 public:
  static std::unique_ptr<SafetensorsFile> open(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::vector<TensorInfo>& tensors() const { return header_.tensors; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  const std::string& path() const { return path_; }

 private:
  SafetensorsFile() = default;
  std::string path_;
  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  SafetensorsHeader header_;
};

// All tensors of a checkpoint folder (or of a single .safetensors path).
class Checkpoint {
 public:
  // DIR with model.safetensors.index.json (sharded), or with *.safetensors files, or a file.
  static Checkpoint open(const std::string& path);

  const TensorInfo* find(const std::string& name) const;  // nullptr when absent
  std::vector<std::string> names() const;                 // sorted
  size_t size() const { return by_name_.size(); }

 private:
  std::vector<std::shared_ptr<SafetensorsFile>> files_;
  std::map<std::string, const TensorInfo*> by_name_;
};

}  // namespace hadron
