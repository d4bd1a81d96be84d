#include "server/marker_text.h"

#include <algorithm>

namespace hadron::server {

MarkerMatch find_first_marker(std::string_view text, std::span<const std::string_view> markers) {
  MarkerMatch best;
  for (std::string_view marker : markers) {
    if (marker.empty()) continue;
    const size_t pos = text.find(marker);
    if (pos == std::string_view::npos) continue;
    if (pos < best.pos || (pos == best.pos && marker.size() > best.marker.size()))
      best = {pos, marker};
  }
  return best;
}

std::string take_safe_prefix(std::string& pending, std::span<const std::string_view> markers,
                             bool final) {
  size_t keep = 0;
  if (!final) {
    for (std::string_view marker : markers) {
      const size_t longest = std::min(marker.size() - (marker.empty() ? 0 : 1), pending.size());
      for (size_t k = longest; k > keep; --k) {
        if (std::string_view(pending).substr(pending.size() - k) == marker.substr(0, k)) {
          keep = k;
          break;
        }
      }
    }
  }
  std::string safe = pending.substr(0, pending.size() - keep);
  pending.erase(0, pending.size() - keep);
  return safe;
}

}  // namespace hadron::server
