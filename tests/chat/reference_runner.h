// Renders cases with tests/chat/render_reference.py (Python jinja2 configured as transformers
// configures it) and with hadron, at test time, and compares the bytes.
#pragma once

#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hadron::chat::testing {

struct RenderCase {
  std::string label;  // for messages: template name, conversation, flags
  std::string group;  // mismatches are counted per group (the template's name)
  std::string template_source;
  nlohmann::ordered_json context;
};

struct CaseResult {
  bool ok = false;     // rendered without error
  std::string output;  // the text, or the error message
};

// The date both sides see through strftime_now.
std::tm pinned_now();

// Runs the Python reference over all cases at once; fails the test if Python cannot run.
std::vector<CaseResult> render_with_reference(const std::vector<RenderCase>& cases);
CaseResult render_with_hadron(const RenderCase& c);

// Compares every case; prints a per-group table and the first differences. Returns the
// number of mismatching cases (an error on one side only counts as a mismatch).
int compare_with_reference(const std::vector<RenderCase>& cases);

}  // namespace hadron::chat::testing
