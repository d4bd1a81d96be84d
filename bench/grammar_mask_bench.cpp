// Time to compute one token mask over a real vocabulary while a grammar-constrained output
// is produced token by token (one core). Usage: grammar_mask_bench [tokenizer dir]
// Wall time and the thread's CPU time are both reported: on a shared machine the first
// includes time the thread was not running.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "grammar/json_schema.h"
#include "grammar/regex.h"
#include "grammar/tokenizer_vocabulary.h"
#include "tokenizer/tokenizer.h"

namespace {

constexpr int kStepMs = 15;  // a decode step of a mid-size model at high concurrency

double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

void print_times(const char* name, const char* what, std::vector<double> us) {
  std::sort(us.begin(), us.end());
  std::printf("%-12s %-10s %4zu tokens  median %9.1f us  p99 %9.1f us  max %9.1f us\n", name, what,
              us.size(), us[us.size() / 2], us[us.size() * 99 / 100], us.back());
}

using hadron::grammar::Grammar;

struct Case {
  const char* name;
  std::shared_ptr<const Grammar> grammar;
  std::string output;  // a string of the grammar, fed back token by token
};

void run_pass(const Case& c, const hadron::Tokenizer& tokenizer,
              const hadron::grammar::TokenVocabulary& vocab,
              const hadron::grammar::TokenMasker& masker, int pass);

void run(const Case& c, const hadron::Tokenizer& tokenizer,
         const std::shared_ptr<const hadron::grammar::TokenVocabulary>& shared_vocab) {
  const hadron::grammar::TokenVocabulary& vocab = *shared_vocab;
  const hadron::grammar::TokenMasker masker(c.grammar, shared_vocab);
  // Pass 0 meets each grammar position for the first time (the masker's cache is cold);
  // pass 1 is a second request with the same grammar.
  for (int pass = 0; pass < 2; ++pass) run_pass(c, tokenizer, vocab, masker, pass);
  // Pass 2: cold again, as the server runs it: the first position computed with the grammar
  // (GrammarCache::get), each next one prefetched on the mask worker while a model step of
  // kStepMs runs; only the engine thread's fill_mask is timed.
  const auto fresh = std::make_shared<const hadron::grammar::TokenMasker>(c.grammar, shared_vocab);
  fresh->warm_start();
  run_pass(c, tokenizer, vocab, *fresh, 2);
}

void run_pass(const Case& c, const hadron::Tokenizer& tokenizer,
              const hadron::grammar::TokenVocabulary& vocab,
              const hadron::grammar::TokenMasker& masker, int pass) {
  hadron::grammar::Matcher matcher(c.grammar);
  std::vector<uint32_t> mask(hadron::grammar::mask_words(vocab.size()));
  std::vector<double> us, cpu_us;
  for (int32_t token : tokenizer.encode(c.output, false)) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_us();
    masker.fill_mask(matcher, mask);
    cpu_us.push_back(thread_cpu_us() - cpu_start);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
    if (!hadron::grammar::mask_allows(mask, token) || !vocab.accept(matcher, token)) {
      std::printf("%s: the output's token %d is refused\n", c.name, token);
      return;
    }
    if (pass == 2) {
      masker.prefetch(matcher);
      std::this_thread::sleep_for(std::chrono::milliseconds(kStepMs));
    }
  }
  const char* names[3][2] = {
      {"cold wall", "cold cpu"}, {"warm wall", "warm cpu"}, {"ahead wall", "ahead cpu"}};
  print_times(c.name, names[pass][0], us);
  print_times(c.name, names[pass][1], cpu_us);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir =
      argc > 1 ? argv[1] : HADRON_SOURCE_DIR "/tests/data/tokenizers/Qwen__Qwen3-0.6B";
  const hadron::Tokenizer tokenizer = hadron::Tokenizer::load(dir);
  const auto vocab = std::make_shared<const hadron::grammar::TokenVocabulary>(
      hadron::grammar::make_token_vocabulary(tokenizer, {}));
  std::printf("%s: %d tokens\n", dir.c_str(), vocab->size());
  auto share = [](Grammar g) { return std::make_shared<const Grammar>(std::move(g)); };
  const std::vector<Case> cases = {
      {"json_schema",
       share(hadron::grammar::compile_json_schema(
           R"({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type":
           "integer", "minimum": 0, "maximum": 150}, "email": {"type": "string", "format":
           "email"}, "tags": {"type": "array", "items": {"type": "string"}}, "address":
           {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type":
           "string", "pattern": "^[0-9]{5}$"}}, "required": ["city", "zip"]}},
           "required": ["name", "age", "email", "tags", "address"]})")),
       R"({"name": "Jane Doe, a long name with words", "age": 42, "email": "jane.doe@example.com", "tags": ["alpha", "beta", "gamma delta epsilon"], "address": {"city": "Springfield", "zip": "12345"}})"},
      {"json_object", share(hadron::grammar::compile_any_json_object()),
       R"({"a": [1, 2.5, true, null, {"b": "some text here"}], "c": {"d": "more text"}})"},
      {"regex", share(hadron::grammar::compile_regex(R"((\d{3}-){2}\d{4} [A-Za-z ]{1,40})")),
       "555-123-4567 Some Words Here"},
  };
  for (const Case& c : cases) run(c, tokenizer, vocab);
}
