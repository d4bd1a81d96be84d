// StopChecker: finds stop strings in streamed text, across token boundaries.
//
// Text is pushed as it is detokenized. What can be emitted is returned at once, except a
// suffix that could still grow into a stop string, which is held back. When a stop string
// completes, the text before it is returned and the rest (the stop string included) dropped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hadron {

class StopChecker {
 public:
  explicit StopChecker(std::vector<std::string> stops);

  // Adds newly decoded text; returns the text that is now safe to emit.
  std::string push(std::string_view text);
  // At the end of generation without a stop: the held-back text.
  std::string flush();
  bool stopped() const { return stopped_; }
  // The stop string that stopped the text (empty until one has).
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;  // text not yet emitted
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace hadron
