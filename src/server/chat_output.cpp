#include "server/chat_output.h"

#include "server/openai_common.h"
#include "tokenizer/tokenizer.h"

namespace hadron::server {

ParsedDelta ChatChoice::add(const RequestOutput& output) {
  ParsedDelta delta = parser->push(output.text);
  if (output.finished) delta.append(parser->finish());
  n_tokens += static_cast<int64_t>(output.token_ids.size());
  logprobs.insert(logprobs.end(), output.logprobs.begin(), output.logprobs.end());
  if (output.finished) {
    finish = output.finish_reason;
    stop_string = output.stop_string;
  }
  for (size_t i = 0; i < delta.tool_calls.size(); ++i) tool_call_ids.push_back(random_id("call_"));
  message.reasoning += delta.reasoning;
  message.content += delta.content;
  message.tool_calls.insert(message.tool_calls.end(), delta.tool_calls.begin(),
                            delta.tool_calls.end());
  return delta;
}

ChatChoice make_chat_choice(OutputFormat format, bool tools_offered, bool starts_in_reasoning) {
  if (!tools_offered && format.tools != ToolFormat::kHarmony) format.tools = ToolFormat::kNone;
  ChatChoice choice;
  choice.parser = make_output_parser(format, starts_in_reasoning);
  return choice;
}

void adapt_sampling(const ServedModel& served, const ChatPrompt& prompt, SamplingParams& params) {
  const OutputFormat& format = served.output_format;
  if (format.tools == ToolFormat::kHarmony) params.skip_special_tokens = false;
  if (params.constraint && format.reasoning && !prompt.reasoning_closed &&
      served.tokenizer != nullptr)
    if (std::optional<int32_t> end = served.tokenizer->token_to_id("</think>"))
      params.constraint_after_token = *end;
}

}  // namespace hadron::server
