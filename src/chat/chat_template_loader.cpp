#include "chat/chat_template_loader.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"

namespace hadron::chat {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error("cannot read {}", path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ordered_json read_json(const fs::path& path) {
  try {
    return ordered_json::parse(read_file(path));
  } catch (const ordered_json::exception& e) {
    input_error("{}: invalid JSON: {}", path.string(), e.what());
  }
}

// A template field: a string, or a list of {"name", "template"} entries.
std::string select_template(const ordered_json& field, std::string_view name,
                            const fs::path& file) {
  if (field.is_string()) {
    if (!name.empty() && name != "default")
      input_error("{} has a single chat template, not one named '{}'", file.string(), name);
    return field.get<std::string>();
  }
  if (!field.is_array()) input_error("{}: chat_template must be a string or a list", file.string());
  std::string wanted = name.empty() ? "default" : std::string(name);
  std::string names;
  for (const auto& entry : field) {
    if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
        !entry["name"].is_string() || !entry["template"].is_string())
      input_error("{}: chat_template entries must be {{name, template}} strings", file.string());
    if (entry["name"] == wanted) return entry["template"].get<std::string>();
    names += (names.empty() ? "" : ", ") + entry["name"].get<std::string>();
  }
  input_error("{} has no chat template named '{}' (it has: {})", file.string(), wanted, names);
}

// A special token given as "text" or as an AddedToken {"content": "text", ...}.
std::string token_string(const ordered_json& config, const char* key) {
  if (!config.contains(key)) return "";
  const ordered_json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  return "";
}

}  // namespace

ModelChatTemplate load_chat_template(const fs::path& model_dir, std::string_view name) {
  ModelChatTemplate result;
  fs::path config_path = model_dir / "tokenizer_config.json";
  ordered_json config = fs::exists(config_path) ? read_json(config_path) : ordered_json::object();
  if (fs::path jinja = model_dir / "chat_template.jinja"; fs::exists(jinja)) {
    result.source = read_file(jinja);
    result.origin = jinja.string();
  } else if (fs::path json = model_dir / "chat_template.json"; fs::exists(json)) {
    ordered_json j = read_json(json);
    if (!j.is_object() || !j.contains("chat_template"))
      input_error("{} has no chat_template field", json.string());
    result.source = select_template(j["chat_template"], name, json);
    result.origin = json.string();
  } else if (config.is_object() && config.contains("chat_template") &&
             !config["chat_template"].is_null()) {
    result.source = select_template(config["chat_template"], name, config_path);
    result.origin = config_path.string();
  } else {
    input_error(
        "{} has no chat template (looked for chat_template.jinja, chat_template.json and "
        "tokenizer_config.json's chat_template)",
        model_dir.string());
  }
  ordered_json special = ordered_json::object();
  if (fs::path map = model_dir / "special_tokens_map.json"; fs::exists(map))
    special = read_json(map);
  for (const auto& [key, out] :
       {std::pair{"bos_token", &result.bos_token}, std::pair{"eos_token", &result.eos_token}}) {
    *out = config.is_object() ? token_string(config, key) : "";
    if (out->empty() && special.is_object()) *out = token_string(special, key);
  }
  return result;
}

}  // namespace hadron::chat
