// A chat choice's output as it streams: text through the model's output parser, tokens,
// logprobs and how it finished. Shared by /v1/chat/completions and /v1/messages.
#pragma once

#include <memory>
#include <vector>

#include "engine/engine.h"
#include "engine/sampling_params.h"
#include "server/chat_prompt.h"
#include "server/output_parser.h"

namespace hadron::server {

struct ChatChoice {
  std::unique_ptr<OutputParser> parser;
  ParsedDelta message;  // everything so far
  std::vector<std::string> tool_call_ids;
  std::vector<Logprobs> logprobs;
  FinishReason finish = FinishReason::kNone;
  std::string stop_string;  // the stop string that ended it, if one did
  int64_t n_tokens = 0;

  // Feeds one engine output; returns the new part of the message it completes.
  ParsedDelta add(const RequestOutput& output);
};

// A choice with its parser: tool calls parsed only when the request offered tools.
ChatChoice make_chat_choice(OutputFormat format, bool tools_offered, bool starts_in_reasoning);

// What the output format needs of sampling: harmony's channel markers are special tokens,
// so they must stay in the decoded text; a reasoning model's constraint (structured output,
// tool_choice) applies after its </think>, unless the prompt ended the thinking already.
void adapt_sampling(const ServedModel& served, const ChatPrompt& prompt, SamplingParams& params);

}  // namespace hadron::server
