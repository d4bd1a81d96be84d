// Compiled grammars by content, each with its masker over the server's vocabulary: the same
// schema, regex or grammar text compiles once, and its mask positions are shared.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "grammar/grammar.h"
#include "grammar/token_mask.h"

namespace hadron::grammar {

enum class GrammarKind : uint8_t {
  kJsonSchema,   // source: the schema as JSON text
  kJsonObject,   // any JSON object; source ignored
  kRegex,        // source: the pattern
  kChoice,       // source: a JSON array of strings, one of which is the output
  kGbnf,         // source: the grammar text
  kWrappedJson,  // source: {"prefix", "schema", "suffix"}: JSON between two literals
};

// Compiles `source` as `kind`; throws GrammarError for bad or unsupported input.
Grammar compile(GrammarKind kind, const std::string& source, const GrammarLimits& limits = {});

class GrammarCache {
 public:
  explicit GrammarCache(std::shared_ptr<const TokenVocabulary> vocabulary, size_t capacity = 32,
                        GrammarLimits limits = {})
      : vocabulary_(std::move(vocabulary)), capacity_(capacity), limits_(limits) {}

  // Throws GrammarError for bad or unsupported input.
  std::shared_ptr<const TokenMasker> get(GrammarKind kind, const std::string& source);
  size_t n_compiled() const { return n_compiled_; }

 private:
  using Key = std::pair<GrammarKind, std::string>;
  std::shared_ptr<const TokenVocabulary> vocabulary_;
  size_t capacity_;
  GrammarLimits limits_;
  std::mutex mutex_;
  std::list<Key> recent_;  // most recent first
  std::map<Key, std::pair<std::shared_ptr<const TokenMasker>, std::list<Key>::iterator>> entries_;
  size_t n_compiled_ = 0;
};

}  // namespace hadron::grammar
