#include "capi/library_options.h"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "app/engine_flags.h"
#include "core/error.h"

namespace hadron::capi {
namespace {

std::string flag_name(std::string key) {
  key.erase(0, key.find_first_not_of('-'));
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

bool parse_bool(const std::string& key, const std::string& value) {
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  input_error("option {}: '{}' is not a boolean (true, false, 1 or 0)", key, value);
}

size_t parse_count(const std::string& key, const std::string& value) {
  size_t used = 0;
  long long parsed = -1;
  try {
    parsed = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || parsed < 1)
    input_error("option {}: '{}' is not a positive integer", key, value);
  return static_cast<size_t>(parsed);
}

}  // namespace

LibraryOptions parse_library_options(const std::string& model_dir,
                                     const std::vector<std::pair<std::string, std::string>>& kv) {
  LibraryOptions options;
  options.engine.verbose = false;  // a library keeps quiet unless asked
  std::string load_format = "auto";
  CLI::App app("hadron library");
  app::add_engine_flags(app, options.engine, load_format);
  std::vector<std::string> args;
  for (const auto& [key, value] : kv) {
    const std::string name = flag_name(key);
    if (name == "verbose") {
      options.engine.verbose = parse_bool(key, value);
    } else if (name == "max-queued-requests") {
      options.max_queued_requests = parse_count(key, value);
    } else if (name == "model") {
      input_error("option model: give the model folder as hadron_engine_create's model_dir");
    } else {
      args.push_back(fmt::format("--{}={}", name, value));
    }
  }
  if (!model_dir.empty()) args.push_back("--model=" + model_dir);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    input_error("options: {}", e.what());
  }
  app::finish_engine_options(options.engine, load_format);
  return options;
}

}  // namespace hadron::capi
