#include "loader/json_text.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <unordered_set>
#include <vector>

#include "core/error.h"

namespace hadron {

nlohmann::json parse_json_strict(std::string_view text, const std::string& source) {
  using Event = nlohmann::json::parse_event_t;
  std::vector<std::unordered_set<std::string>> open_objects;  // keys seen, innermost last
  int depth = 0;
  auto callback = [&](int /*depth*/, Event event, nlohmann::json& parsed) {
    if (event == Event::object_start || event == Event::array_start) {
      if (++depth > kMaxJsonDepth)
        input_error("{}: JSON nested deeper than {} levels", source, kMaxJsonDepth);
      if (event == Event::object_start) open_objects.emplace_back();
    } else if (event == Event::object_end || event == Event::array_end) {
      --depth;
      if (event == Event::object_end) open_objects.pop_back();
    } else if (event == Event::key) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (!open_objects.back().insert(key).second)
        input_error("{}: key '{}' appears twice in one JSON object", source, key);
    }
    return true;
  };
  // nlohmann stops at a NUL byte as if the input ended there; JSON allows none anywhere.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    input_error("{}: not valid JSON: NUL byte at offset {}", source, nul);
  try {
    return nlohmann::json::parse(text.begin(), text.end(), callback);
  } catch (const nlohmann::json::exception& e) {
    input_error("{}: not valid JSON: {}", source, e.what());
  }
}

std::string read_text_file(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error("cannot open {}: {}", path, std::strerror(errno));
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes)
      input_error("{}: larger than the {} bytes allowed for this file", path, max_bytes);
  }
  if (in.bad()) input_error("cannot read {}: {}", path, std::strerror(errno));
  return text;
}

}  // namespace hadron
