#include "grammar/grammar_cache.h"

#include <nlohmann/json.hpp>

#include "grammar/gbnf.h"
#include "grammar/grammar_error.h"
#include "grammar/json_schema.h"
#include "grammar/regex.h"

namespace hadron::grammar {
namespace {

using Json = nlohmann::ordered_json;

Grammar compile_choice(const std::string& source, const GrammarLimits& limits) {
  nlohmann::json list = nlohmann::json::parse(source, nullptr, false);
  if (!list.is_array() || list.empty())
    grammar_error("choice", "must be a non-empty array of strings");
  std::vector<ExprPtr> options;
  for (const auto& item : list) {
    if (!item.is_string()) grammar_error("choice", "must be a non-empty array of strings");
    options.push_back(literal(item.get<std::string>()));
  }
  GrammarBuilder builder(limits);
  const int32_t root = builder.declare("root");
  builder.define(root, alt(std::move(options)));
  return builder.build(root);
}

Grammar compile_wrapped_json(const std::string& source, const GrammarLimits& limits) {
  const auto spec = nlohmann::ordered_json::parse(source, nullptr, false);
  if (!spec.is_object() || !spec.contains("schema") || !spec.value("prefix", Json()).is_string() ||
      !spec.value("suffix", Json()).is_string())
    grammar_error("", "a wrapped JSON grammar needs prefix, schema and suffix");
  return compile_json_schema(spec["schema"].dump(), limits, spec["prefix"].get<std::string>(),
                             spec["suffix"].get<std::string>());
}

}  // namespace

Grammar compile(GrammarKind kind, const std::string& source, const GrammarLimits& limits) {
  switch (kind) {
    case GrammarKind::kJsonSchema:
      return compile_json_schema(source, limits);
    case GrammarKind::kJsonObject:
      return compile_any_json_object(limits);
    case GrammarKind::kRegex:
      return compile_regex(source, limits);
    case GrammarKind::kChoice:
      return compile_choice(source, limits);
    case GrammarKind::kGbnf:
      return compile_gbnf(source, limits);
    case GrammarKind::kWrappedJson:
      return compile_wrapped_json(source, limits);
  }
  grammar_error("", "unknown grammar kind");
}

std::shared_ptr<const TokenMasker> GrammarCache::get(GrammarKind kind, const std::string& source) {
  Key key{kind, source};
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      recent_.splice(recent_.begin(), recent_, it->second.second);
      return it->second.first;
    }
  }
  // Compiled outside the lock: one slow grammar does not hold up the others.
  auto grammar = std::make_shared<const TokenMasker>(
      std::make_shared<const Grammar>(compile(kind, source, limits_)), vocabulary_);
  grammar->warm_start();
  std::lock_guard lock(mutex_);
  ++n_compiled_;
  if (entries_.contains(key)) return entries_.at(key).first;
  recent_.push_front(key);
  entries_.emplace(std::move(key), std::make_pair(grammar, recent_.begin()));
  while (entries_.size() > capacity_) {
    entries_.erase(recent_.back());
    recent_.pop_back();
  }
  return grammar;
}

}  // namespace hadron::grammar
