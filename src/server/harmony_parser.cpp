#include "server/harmony_parser.h"

#include <nlohmann/json.hpp>

#include "server/marker_text.h"

namespace hadron::server {
namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kEnd = "<|end|>";
constexpr std::string_view kCall = "<|call|>";
constexpr std::string_view kReturn = "<|return|>";
constexpr std::string_view kFunctionsPrefix = "to=functions.";

class HarmonyParser final : public StateMachineParser {
 private:
  // kOutside: between messages (text here is content); kHeader: role, channel and recipient up
  // to <|message|>; kBody: the message up to <|end|>, <|call|> or <|return|>.
  enum class State { kOutside, kHeader, kBody };

  bool advance(ParsedDelta& out, bool final) override {
    switch (state_) {
      case State::kOutside:
        return outside(out, final);
      case State::kHeader:
        return in_header(final);
      case State::kBody:
        return in_body(out, final);
    }
    return false;
  }

  bool outside(ParsedDelta& out, bool final) {
    static constexpr std::string_view kOpeners[] = {kStart, kChannel};
    const MarkerMatch match = find_first_marker(pending_, kOpeners);
    if (match.marker.empty()) {
      out.content += take_safe_prefix(pending_, kOpeners, final);
      return false;
    }
    out.content += pending_.substr(0, match.pos);
    pending_.erase(0, match.pos + match.marker.size());
    header_ = match.marker == kChannel ? std::string(kChannel) : std::string();
    state_ = State::kHeader;
    return true;
  }

  bool in_header(bool final) {
    const size_t message = pending_.find(kMessage);
    if (message == std::string::npos) {
      if (final) pending_.clear();  // a header with no message: nothing to show
      return false;
    }
    header_ += pending_.substr(0, message);
    pending_.erase(0, message + kMessage.size());
    recipient_.clear();
    if (const size_t to = header_.find(kFunctionsPrefix); to != std::string::npos) {
      const size_t name = to + kFunctionsPrefix.size();
      recipient_ = header_.substr(name, header_.find_first_of(" <", name) - name);
    }
    const size_t channel = header_.find(kChannel);
    const std::string after =
        channel == std::string::npos ? std::string() : header_.substr(channel + kChannel.size());
    is_analysis_ = after.starts_with("analysis");
    state_ = State::kBody;
    return true;
  }

  bool in_body(ParsedDelta& out, bool final) {
    static constexpr std::string_view kEnders[] = {kEnd, kCall, kReturn};
    const MarkerMatch match = find_first_marker(pending_, kEnders);
    if (!recipient_.empty()) {  // a tool call comes out whole
      if (match.marker.empty() && !final) return false;
      const size_t end = match.marker.empty() ? pending_.size() : match.pos;
      emit_call(out, pending_.substr(0, end));
      pending_.erase(0, match.marker.empty() ? end : end + match.marker.size());
      state_ = State::kOutside;
      return true;
    }
    std::string& target = is_analysis_ ? out.reasoning : out.content;
    if (match.marker.empty()) {
      target += take_safe_prefix(pending_, kEnders, final);
      return false;
    }
    target += pending_.substr(0, match.pos);
    pending_.erase(0, match.pos + match.marker.size());
    state_ = State::kOutside;
    return true;
  }

  void emit_call(ParsedDelta& out, const std::string& body) {
    auto arguments = nlohmann::ordered_json::parse(body, nullptr, false);
    if (arguments.is_object()) {
      out.tool_calls.push_back({recipient_, arguments.dump()});
    } else {  // not JSON arguments: show what the model wrote
      out.content += body;
    }
  }

  State state_ = State::kOutside;
  std::string header_;
  std::string recipient_;  // the function a commentary message calls
  bool is_analysis_ = false;
};

}  // namespace

std::unique_ptr<OutputParser> make_harmony_parser() { return std::make_unique<HarmonyParser>(); }

}  // namespace hadron::server
