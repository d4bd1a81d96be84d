#include "reference_runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "chat/template.h"
#include "core/error.h"

namespace hadron::chat::testing {

namespace fs = std::filesystem;

std::tm pinned_now() {
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 0;
  tm.tm_mday = 15;
  tm.tm_hour = 9;
  tm.tm_min = 30;
  std::time_t t = timegm(&tm);  // fills tm_wday and tm_yday
  gmtime_r(&t, &tm);
  return tm;
}

static std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<CaseResult> render_with_reference(const std::vector<RenderCase>& cases) {
  fs::path dir =
      fs::temp_directory_path() / ("hadron-chat-ref-" + std::to_string(::getpid()) + "-" +
                                   std::to_string(reinterpret_cast<uintptr_t>(&cases)));
  fs::create_directories(dir);
  nlohmann::ordered_json input = nlohmann::ordered_json::array();
  for (const RenderCase& c : cases)
    input.push_back(
        {{"template", c.template_source}, {"context", c.context}, {"now", "2026-01-15T09:30:00"}});
  std::ofstream(dir / "cases.json", std::ios::binary) << input.dump();
  std::string script = std::string(HADRON_SOURCE_DIR) + "/tests/chat/render_reference.py";
  std::string cmd = "python3 '" + script + "' '" + (dir / "cases.json").string() + "' '" +
                    (dir / "results.json").string() + "'";
  int rc = std::system(cmd.c_str());
  std::vector<CaseResult> results;
  if (rc != 0) {
    ADD_FAILURE() << "reference renderer failed (python3 with jinja2 is required): " << cmd;
    fs::remove_all(dir);
    return results;
  }
  auto parsed = nlohmann::json::parse(slurp(dir / "results.json"));
  for (const auto& r : parsed) {
    bool ok = r["ok"].get<bool>();
    results.push_back({ok, r[ok ? "output" : "error"].get<std::string>()});
  }
  fs::remove_all(dir);
  return results;
}

CaseResult render_with_hadron(const RenderCase& c) {
  RenderOptions options;
  options.now = pinned_now();
  try {
    return {true, ChatTemplate::parse(c.template_source).render(c.context, options)};
  } catch (const InputError& e) {
    return {false, e.what()};
  }
}

static std::string first_difference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  size_t from = i > 40 ? i - 40 : 0;
  return "at byte " + std::to_string(i) + "\n    hadron:    " +
         nlohmann::json(a.substr(from, 120))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n    reference: " +
         nlohmann::json(b.substr(from, 120))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

int compare_with_reference(const std::vector<RenderCase>& cases) {
  std::vector<CaseResult> expected = render_with_reference(cases);
  if (expected.size() != cases.size()) return static_cast<int>(cases.size());
  std::map<std::string, std::pair<int, int>> per_group;  // group -> (cases, mismatches)
  int n_mismatch = 0, n_reported = 0, n_raised = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    CaseResult got = render_with_hadron(cases[i]);
    n_raised += !expected[i].ok;
    auto& [n_cases, n_bad] = per_group[cases[i].group];
    ++n_cases;
    bool same = got.ok == expected[i].ok && (!got.ok || got.output == expected[i].output);
    if (same) continue;
    ++n_bad;
    ++n_mismatch;
    if (n_reported++ >= 12) continue;
    std::cout << "MISMATCH " << cases[i].label << "\n";
    if (got.ok != expected[i].ok)
      std::cout << "  hadron " << (got.ok ? "rendered" : "raised: " + got.output)
                << "\n  reference "
                << (expected[i].ok ? "rendered" : "raised: " + expected[i].output) << "\n";
    else
      std::cout << "  " << first_difference(got.output, expected[i].output) << "\n";
  }
  std::cout << cases.size() - static_cast<size_t>(n_raised) << " cases rendered and " << n_raised
            << " raised in the reference\n";
  std::cout << "template                                               cases  mismatches\n";
  for (const auto& [group, counts] : per_group)
    std::cout << fmt::format("{:<55}{:>5}{:>12}\n", group, counts.first, counts.second);
  return n_mismatch;
}

}  // namespace hadron::chat::testing
