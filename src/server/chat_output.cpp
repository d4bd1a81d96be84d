#include "server/chat_output.h"

#include "server/openai_common.h"

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

void adapt_sampling(OutputFormat format, SamplingParams& params) {
  if (format.tools == ToolFormat::kHarmony) params.skip_special_tokens = false;
}

}  // namespace hadron::server
