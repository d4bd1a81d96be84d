// Checkpoint::open over sharded folders (index + shards), plain folders and single files, and
// the errors of inconsistent shards.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "loader/safetensors.h"
#include "test_files.h"

namespace hadron {
namespace {

using testing::bytes_of;
using testing::ScratchDir;

std::string u8_tensor_file(const std::vector<std::string>& names) {
  std::vector<testing::TensorBytes> tensors;
  for (const std::string& name : names) tensors.push_back({name, "U8", {1}, name.substr(0, 1)});
  return testing::safetensors_bytes(tensors);
}

// An index mapping each tensor to its shard.
std::string index_json(const std::map<std::string, std::string>& weight_map) {
  nlohmann::json index = {{"metadata", {{"total_size", 3}}}, {"weight_map", weight_map}};
  return index.dump();
}

void expect_mentions(const std::string& message, const std::vector<std::string>& parts) {
  ASSERT_FALSE(message.empty()) << "no error";
  for (const std::string& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
}

struct Sharded {
  ScratchDir dir;
  explicit Sharded(const std::map<std::string, std::string>& weight_map) {
    dir.write("model-00001-of-00002.safetensors", u8_tensor_file({"a.weight", "b.weight"}));
    dir.write("model-00002-of-00002.safetensors", u8_tensor_file({"c.weight"}));
    dir.write("model.safetensors.index.json", index_json(weight_map));
  }
};

const std::map<std::string, std::string> kGoodMap = {
    {"a.weight", "model-00001-of-00002.safetensors"},
    {"b.weight", "model-00001-of-00002.safetensors"},
    {"c.weight", "model-00002-of-00002.safetensors"}};

TEST(Checkpoint, OpensAShardedFolder) {
  Sharded sharded(kGoodMap);
  const Checkpoint checkpoint = Checkpoint::open(sharded.dir.path().string());
  EXPECT_EQ(checkpoint.size(), 3u);
  EXPECT_EQ(checkpoint.names(), (std::vector<std::string>{"a.weight", "b.weight", "c.weight"}));
  const TensorInfo* c = checkpoint.find("c.weight");
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->file.find("model-00002-of-00002"), std::string::npos);
  EXPECT_EQ(*static_cast<const char*>(c->data), 'c');
  EXPECT_EQ(checkpoint.find("d.weight"), nullptr);
  const Checkpoint by_index =
      Checkpoint::open((sharded.dir.path() / "model.safetensors.index.json").string());
  EXPECT_EQ(by_index.size(), 3u);
}

TEST(Checkpoint, OpensSingleFilesAndPlainFolders) {
  ScratchDir dir;
  const std::string single = dir.write("one/model.safetensors", u8_tensor_file({"x"}));
  EXPECT_EQ(Checkpoint::open((dir.path() / "one").string()).size(), 1u);
  EXPECT_EQ(Checkpoint::open(single).size(), 1u);
  dir.write("two/part-a.safetensors", u8_tensor_file({"p", "q"}));
  dir.write("two/part-b.safetensors", u8_tensor_file({"r"}));
  dir.write("two/config.json", "{}");
  const Checkpoint two = Checkpoint::open((dir.path() / "two").string());
  EXPECT_EQ(two.names(), (std::vector<std::string>{"p", "q", "r"}));
  EXPECT_EQ(*static_cast<const char*>(two.find("r")->data), 'r');
}

TEST(Checkpoint, OpensTheProjectFixture) {
  const Checkpoint checkpoint =
      Checkpoint::open(std::string(HADRON_SOURCE_DIR) + "/tests/fixtures/qwen3-tied");
  EXPECT_NE(checkpoint.find("model.embed_tokens.weight"), nullptr);
  EXPECT_EQ(checkpoint.find("lm_head.weight"), nullptr);  // tied
}

TEST(Checkpoint, MissingShard) {
  Sharded sharded(kGoodMap);
  std::filesystem::remove(sharded.dir.path() / "model-00002-of-00002.safetensors");
  expect_mentions(testing::input_error_of([&] { Checkpoint::open(sharded.dir.path().string()); }),
                  {"model.safetensors.index.json", "model-00002-of-00002.safetensors", "'c.weight'",
                   "missing"});
}

TEST(Checkpoint, TensorListedButAbsentFromItsShard) {
  std::map<std::string, std::string> map = kGoodMap;
  map["ghost.weight"] = "model-00002-of-00002.safetensors";
  Sharded sharded(map);
  expect_mentions(testing::input_error_of([&] { Checkpoint::open(sharded.dir.path().string()); }),
                  {"'ghost.weight'", "model-00002-of-00002.safetensors", "does not contain"});
}

TEST(Checkpoint, TensorListedForTheWrongShard) {
  std::map<std::string, std::string> map = kGoodMap;
  map["c.weight"] = "model-00001-of-00002.safetensors";
  map["a.weight"] = "model-00002-of-00002.safetensors";
  Sharded sharded(map);
  expect_mentions(testing::input_error_of([&] { Checkpoint::open(sharded.dir.path().string()); }),
                  {"'a.weight'", "listed in shard", "found in"});
}

TEST(Checkpoint, TensorInTwoShards) {
  Sharded sharded(kGoodMap);
  sharded.dir.write("model-00002-of-00002.safetensors", u8_tensor_file({"c.weight", "b.weight"}));
  expect_mentions(testing::input_error_of([&] { Checkpoint::open(sharded.dir.path().string()); }),
                  {"'b.weight'", "two files", "model-00001-of-00002", "model-00002-of-00002"});
}

TEST(Checkpoint, TensorInTwoUnindexedFiles) {
  ScratchDir dir;
  dir.write("a.safetensors", u8_tensor_file({"x", "y"}));
  dir.write("b.safetensors", u8_tensor_file({"y"}));
  expect_mentions(testing::input_error_of([&] { Checkpoint::open(dir.path().string()); }),
                  {"'y'", "a.safetensors", "b.safetensors"});
}

TEST(Checkpoint, MalformedIndex) {
  ScratchDir dir;
  dir.write("model.safetensors.index.json", R"({"metadata": {}})");
  expect_mentions(testing::input_error_of([&] { Checkpoint::open(dir.path().string()); }),
                  {"model.safetensors.index.json", "weight_map"});
  dir.write("model.safetensors.index.json", R"({"weight_map": {}})");
  expect_mentions(testing::input_error_of([&] { Checkpoint::open(dir.path().string()); }),
                  {"model.safetensors.index.json", "no tensors"});
  dir.write("model.safetensors.index.json", R"({"weight_map": {"a": "x.safetensors", "a": "y"}})");
  expect_mentions(testing::input_error_of([&] { Checkpoint::open(dir.path().string()); }),
                  {"'a'", "twice"});
  dir.write("model.safetensors.index.json", R"({"weight_map": {"a": "../../etc/passwd"}})");
  expect_mentions(testing::input_error_of([&] { Checkpoint::open(dir.path().string()); }),
                  {"'a'", "not a file inside"});
  dir.write("model.safetensors.index.json", R"({"weight_map": {"a": 3}})");
  expect_mentions(testing::input_error_of([&] { Checkpoint::open(dir.path().string()); }),
                  {"'a'", "file name"});
}

TEST(Checkpoint, BadShardNamesTheShard) {
  Sharded sharded(kGoodMap);
  sharded.dir.write("model-00002-of-00002.safetensors", "garbage!garbage!");
  expect_mentions(testing::input_error_of([&] { Checkpoint::open(sharded.dir.path().string()); }),
                  {"model-00002-of-00002.safetensors"});
}

TEST(Checkpoint, NothingToOpen) {
  ScratchDir dir;
  expect_mentions(testing::input_error_of([&] { Checkpoint::open(dir.path().string()); }),
                  {dir.path().string(), "no .safetensors"});
  expect_mentions(testing::input_error_of([] { Checkpoint::open("/nonexistent/model"); }),
                  {"/nonexistent/model"});
}

}  // namespace
}  // namespace hadron
