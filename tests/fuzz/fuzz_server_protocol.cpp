// libFuzzer over the server's pure protocol code. The first byte picks the mode:
//  - even: the bytes are a request body; parse_body and the OpenAI field readers either
//    accept it or throw ApiError (any other exception or crash is a finding);
//  - odd: the bytes are model output for an OutputParser (format from the first byte); split
//    at points drawn from the input, the streamed deltas must concatenate to the one-piece
//    parse (the streaming promise of /v1/chat/completions) - a difference is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "server/api_error.h"
#include "server/chat_prompt.h"
#include "server/output_parser.h"
#include "server/sampling_request.h"

namespace {

using hadron::server::ParsedDelta;

void check_request(std::string_view body) {
  using namespace hadron::server;
  static const RequestLimits limits;
  static const hadron::GenerationDefaults defaults{0.7f, 0.9f, 20, {}};
  try {
    const Json json = parse_body(body, limits);
    const Fields fields(json);
    parse_sampling(fields, {limits, defaults, 50000});
    if (fields.get("messages")) openai_messages(fields, limits);
    openai_tools(fields);
    resolve_max_tokens(fields.integer("max_tokens"), 10, 4096, {"max_tokens", "prompt"});
  } catch (const ApiError& e) {
    if (e.status() < 400 || e.status() > 499) __builtin_trap();
  }
}

ParsedDelta parse(hadron::server::OutputFormat format, bool in_reasoning, std::string_view text,
                  uint64_t split_seed) {
  auto parser = hadron::server::make_output_parser(format, in_reasoning);
  ParsedDelta out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t n = split_seed == 0 ? text.size() : 1 + (split_seed % 7);
    split_seed = split_seed * 6364136223846793005ULL + 1442695040888963407ULL;
    out.append(parser->push(text.substr(pos, n)));
    pos += n;
  }
  out.append(parser->finish());
  return out;
}

void check_parser(uint8_t mode, std::string_view text) {
  using hadron::server::ToolFormat;
  constexpr ToolFormat kFormats[] = {
      ToolFormat::kNone,       ToolFormat::kHermes,     ToolFormat::kQwen3Coder, ToolFormat::kGlm45,
      ToolFormat::kDeepSeekV3, ToolFormat::kLlama3Json, ToolFormat::kHarmony};
  const hadron::server::OutputFormat format{kFormats[(mode >> 1) % 7], (mode & 0x40) != 0};
  const bool in_reasoning = (mode & 0x80) != 0;
  const ParsedDelta whole = parse(format, in_reasoning, text, 0);
  const ParsedDelta streamed = parse(format, in_reasoning, text, text.size() * 2654435761u + mode);
  if (whole.reasoning != streamed.reasoning || whole.content != streamed.content ||
      whole.tool_calls.size() != streamed.tool_calls.size())
    __builtin_trap();
  for (size_t i = 0; i < whole.tool_calls.size(); ++i)
    if (whole.tool_calls[i].name != streamed.tool_calls[i].name ||
        whole.tool_calls[i].arguments != streamed.tool_calls[i].arguments)
      __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0)
    check_request(rest);
  else
    check_parser(data[0], rest);
  return 0;
}
