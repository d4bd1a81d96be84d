// Checkpoint: the tensors of a folder (sharded with model.safetensors.index.json, or plain
// *.safetensors files) or of one file, each tensor found in exactly one file.
#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "loader/json_text.h"
#include "loader/safetensors.h"

namespace hadron {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kMaxIndexBytes = 100'000'000;
constexpr std::string_view kIndexSuffix = ".safetensors.index.json";

struct Contents {
  std::vector<std::shared_ptr<SafetensorsFile>> files;
  std::map<std::string, const TensorInfo*> by_name;
};

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

void add_file(Contents& contents, std::shared_ptr<SafetensorsFile> file) {
  for (const TensorInfo& info : file->tensors()) {
    const auto [it, inserted] = contents.by_name.emplace(info.name, &info);
    if (!inserted)
      input_error("tensor '{}' appears in two files: {} and {}", info.name, it->second->file,
                  info.file);
  }
  contents.files.push_back(std::move(file));
}

// weight_map of an index: tensor name -> shard file name (relative to the index's folder).
std::map<std::string, std::string> read_weight_map(const std::string& index_path) {
  const json index = parse_json_strict(read_text_file(index_path, kMaxIndexBytes), index_path);
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
    input_error("{}: expected an object with a \"weight_map\" object", index_path);
  std::map<std::string, std::string> weight_map;
  for (const auto& [name, shard] : index["weight_map"].items()) {
    if (!shard.is_string())
      input_error("{}: weight_map entry for tensor '{}' must be a file name, got {}", index_path,
                  name, shard.type_name());
    const auto& shard_name = shard.get_ref<const std::string&>();
    const fs::path shard_path(shard_name);
    const bool escapes = std::any_of(shard_path.begin(), shard_path.end(),
                                     [](const fs::path& part) { return part == ".."; });
    if (shard_name.empty() || shard_path.is_absolute() || escapes)
      input_error("{}: tensor '{}' maps to '{}', which is not a file inside the checkpoint folder",
                  index_path, name, shard_name);
    weight_map.emplace(name, shard_name);
  }
  if (weight_map.empty()) input_error("{}: \"weight_map\" lists no tensors", index_path);
  return weight_map;
}

// Every tensor the index lists must be in the shard it names.
void check_weight_map(const Contents& contents, const std::map<std::string, std::string>& map,
                      const std::map<std::string, std::string>& shard_paths,
                      const std::string& index_path) {
  for (const auto& [name, shard] : map) {
    const auto it = contents.by_name.find(name);
    const std::string& path = shard_paths.at(shard);
    if (it == contents.by_name.end())
      input_error("{}: tensor '{}' is listed in shard {} but that file does not contain it",
                  index_path, name, path);
    if (it->second->file != path)
      input_error("{}: tensor '{}' is listed in shard {} but was found in {}", index_path, name,
                  path, it->second->file);
  }
}

Contents open_sharded(const fs::path& index_path) {
  const std::string index = index_path.string();
  const std::map<std::string, std::string> weight_map = read_weight_map(index);
  std::map<std::string, std::string> shard_paths;  // shard name -> path
  for (const auto& [name, shard] : weight_map) {
    if (shard_paths.count(shard)) continue;
    const fs::path path = index_path.parent_path() / shard;
    std::error_code error;
    if (!fs::is_regular_file(path, error))
      input_error("{}: shard {} (holding tensor '{}') is missing", index, path.string(), name);
    shard_paths.emplace(shard, path.string());
  }
  Contents contents;
  for (const auto& [shard, path] : shard_paths) add_file(contents, SafetensorsFile::open(path));
  check_weight_map(contents, weight_map, shard_paths, index);
  return contents;
}

Contents open_files(const std::vector<fs::path>& paths) {
  Contents contents;
  for (const fs::path& path : paths) add_file(contents, SafetensorsFile::open(path.string()));
  return contents;
}

// The index of a folder, or an empty path when it has none.
fs::path find_index(const fs::path& dir) {
  const fs::path preferred = dir / "model.safetensors.index.json";
  std::error_code error;
  if (fs::is_regular_file(preferred, error)) return preferred;
  std::vector<fs::path> indexes;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error))
    if (entry.is_regular_file(error) && ends_with(entry.path().filename().string(), kIndexSuffix))
      indexes.push_back(entry.path());
  if (indexes.size() > 1)
    input_error("{}: several *{} files and no model.safetensors.index.json; pass one of them",
                dir.string(), kIndexSuffix);
  return indexes.empty() ? fs::path() : indexes[0];
}

Contents open_folder(const fs::path& dir) {
  const fs::path index = find_index(dir);
  if (!index.empty()) return open_sharded(index);
  std::error_code error;
  std::vector<fs::path> paths;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error))
    if (entry.is_regular_file(error) && entry.path().extension() == ".safetensors")
      paths.push_back(entry.path());
  if (error) input_error("cannot list {}: {}", dir.string(), error.message());
  if (paths.empty()) input_error("{}: no .safetensors files in this folder", dir.string());
  std::sort(paths.begin(), paths.end());
  return open_files(paths);
}

}  // namespace

Checkpoint Checkpoint::open(const std::string& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  Contents contents;
  if (fs::is_directory(status))
    contents = open_folder(path);
  else if (fs::is_regular_file(status) && ends_with(path, ".index.json"))
    contents = open_sharded(path);
  else if (fs::is_regular_file(status))
    contents = open_files({path});
  else
    input_error("{}: no such checkpoint file or folder", path);
  Checkpoint checkpoint;
  checkpoint.files_ = std::move(contents.files);
  checkpoint.by_name_ = std::move(contents.by_name);
  return checkpoint;
}

const TensorInfo* Checkpoint::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> names;
  names.reserve(by_name_.size());
  for (const auto& [name, info] : by_name_) names.push_back(name);
  return names;
}

}  // namespace hadron
