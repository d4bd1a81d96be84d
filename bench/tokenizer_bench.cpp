// Single-thread encode and decode throughput of hadron's tokenizer on the tokenizer test corpus
// (tests/tokenizer/corpus/*.txt, samples joined by "\n", the whole repeated kRepeats times into
// one document of about 256 KB, so per-call overheads of the reference's Node binding do not
// dominate), for comparison with bench/tokenizer_bench.mjs (Hugging Face tokenizers, same
// document).
//
// usage: tokenizer_bench TOKENIZER_JSON_OR_DIR [SECONDS_PER_MEASUREMENT]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr int kRepeats = 32;

std::string corpus_document() {
  const fs::path dir = fs::path(HADRON_SOURCE_DIR) / "tests/tokenizer/corpus";
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  const std::string separator = "\n<|hadron-sample-break|>\n";
  std::string document;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string content = text.str();
    size_t start = 0;  // each separator becomes one newline
    for (size_t pos; (pos = content.find(separator, start)) != std::string::npos;
         start = pos + separator.size())
      document.append(content, start, pos - start).append("\n");
    document.append(content, start).append("\n");
  }
  std::string repeated;
  for (int i = 0; i < kRepeats; ++i) repeated += document;
  return repeated;
}

// Runs `body` until `seconds` have passed; returns calls per second.
template <typename F>
double calls_per_second(double seconds, F&& body) {
  body();  // warm-up (fills the BPE word cache, as the reference's)
  size_t n_calls = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    body();
    ++n_calls;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return static_cast<double>(n_calls) / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TOKENIZER_JSON_OR_DIR [SECONDS]\n", argv[0]);
    return 2;
  }
  const double seconds = argc > 2 ? std::stod(argv[2]) : 3.0;
  const hadron::Tokenizer tokenizer = hadron::Tokenizer::load(argv[1]);
  const std::string document = corpus_document();
  const std::vector<int32_t> ids = tokenizer.encode(document, false);
  const std::string text = tokenizer.decode(ids, false);
  size_t sink = 0;
  const double encodes =
      calls_per_second(seconds, [&] { sink += tokenizer.encode(document, false).size(); });
  const double decodes =
      calls_per_second(seconds, [&] { sink += tokenizer.decode(ids, false).size(); });
  std::printf(
      "{\"document_bytes\": %zu, \"ids\": %zu, \"encode_mb_s\": %.2f, \"decode_mb_s\": %.2f, "
      "\"sink\": %zu}\n",
      document.size(), ids.size(), encodes * static_cast<double>(document.size()) / 1e6,
      decodes * static_cast<double>(text.size()) / 1e6, sink % 10);
  return 0;
}
