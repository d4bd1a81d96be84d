// Request parsing under limits: malformed and hostile bodies are 4xx with the field named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "grammar/regex.h"
#include "server/api_error.h"
#include "server/chat_output.h"
#include "server/chat_prompt.h"
#include "server/sampling_request.h"
#include "tokenizer/tokenizer.h"

namespace hadron::server {
namespace {

int status_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ApiError& e) {
    return e.status();
  }
  return 200;
}

TEST(RequestBody, LimitsAndShapes) {
  RequestLimits limits;
  limits.max_body_bytes = 100;
  limits.max_json_depth = 4;
  EXPECT_EQ(status_of([&] { parse_body(std::string(101, ' '), limits); }), 413);
  EXPECT_EQ(status_of([&] { parse_body("{\"a\": [[[[[1]]]]]}", limits); }), 400);
  EXPECT_EQ(status_of([&] { parse_body("{\"a\": \"\xff\"}", limits); }), 400);
  EXPECT_EQ(status_of([&] { parse_body("{\"a\": ", limits); }), 400);
  EXPECT_EQ(status_of([&] { parse_body("[1]", limits); }), 422);
  // A number too large for a double is nlohmann's out_of_range, not parse_error.
  EXPECT_EQ(status_of([&] { parse_body("{\"a\": 1E400}", limits); }), 400);
  EXPECT_EQ(status_of([&] { parse_body("{\"a\": [[1]]}", limits); }), 200);
}

SamplingParams sampling(const std::string& body) {
  static const RequestLimits limits;
  static const GenerationDefaults defaults{0.7f, 0.9f, 20, {}};
  const Json json = Json::parse(body);
  return parse_sampling(Fields(json), {limits, defaults, 1000});
}

TEST(SamplingRequest, ReadsFieldsAndDefaults) {
  const SamplingParams d = sampling("{}");
  EXPECT_FLOAT_EQ(d.temperature, 0.7f);
  EXPECT_FLOAT_EQ(d.top_p, 0.9f);
  EXPECT_EQ(d.top_k, 20);
  const SamplingParams p = sampling(
      R"({"temperature": 0, "top_k": -1, "n": 3, "seed": 5, "stop": "END", "logit_bias": {"12": -100},
          "stop_token_ids": [7], "presence_penalty": 0.5, "min_tokens": 2, "ignore_eos": true})");
  EXPECT_EQ(p.temperature, 0);
  EXPECT_EQ(p.top_k, 0);
  EXPECT_EQ(p.n, 3);
  EXPECT_EQ(p.seed, 5u);
  EXPECT_EQ(p.stop, std::vector<std::string>{"END"});
  ASSERT_EQ(p.logit_bias.size(), 1u);
  EXPECT_EQ(p.logit_bias[0].first, 12);
  EXPECT_EQ(p.stop_token_ids, std::vector<int32_t>{7});
  EXPECT_TRUE(p.ignore_eos);
}

TEST(SamplingRequest, BadValuesAre4xx) {
  const std::vector<std::pair<std::string, int>> cases = {
      {R"({"temperature": "hot"})", 422},
      {R"({"temperature": 3})", 400},
      {R"({"top_p": 0})", 400},
      {R"({"n": 0})", 400},
      {R"({"n": 1000})", 400},
      {R"({"stop": [1]})", 422},
      {R"({"stop": ""})", 400},
      {R"({"logit_bias": {"x": 1}})", 400},
      {R"({"logit_bias": {"5000": 1}})", 400},
      {R"({"logit_bias": {"5": 1000}})", 400},
      {R"({"seed": 1.5})", 422},
      {R"({"response_format": {"type": "xml"}})", 400},
      {R"({"response_format": {"type": "json_object"}})", 400},  // no tokenizer here
      {R"({"stop_token_ids": [-1]})", 400},
      {R"({"best_of": 3})", 400},
      {R"({"frequency_penalty": 9})", 400},
      {R"({"min_p": 2})", 400},
  };
  for (const auto& [body, status] : cases) {
    const std::string& request = body;  // clang 14 cannot capture a structured binding
    EXPECT_EQ(status_of([&] { sampling(request); }), status) << body;
  }
  std::string many_stops = R"({"stop": [)";
  for (int i = 0; i < 17; ++i) many_stops += (i ? ",\"" : "\"") + std::to_string(i) + "\"";
  EXPECT_EQ(status_of([&] { sampling(many_stops + "]}"); }), 400);
}

TEST(SamplingRequest, MaxTokensAgainstContext) {
  EXPECT_EQ(resolve_max_tokens(std::nullopt, 10, 100, {"max_tokens", "prompt"}), 90);
  EXPECT_EQ(resolve_max_tokens(5, 10, 100, {"max_tokens", "prompt"}), 5);
  EXPECT_EQ(status_of([] { resolve_max_tokens(95, 10, 100, {"max_tokens", "prompt"}); }), 400);
  EXPECT_EQ(status_of([] { resolve_max_tokens(0, 10, 100, {"max_tokens", "prompt"}); }), 400);
  EXPECT_EQ(status_of([] { resolve_max_tokens(1, 100, 100, {"max_tokens", "prompt"}); }), 400);
}

TEST(ChatMessages, NormalisedForTemplates) {
  const Json body = Json::parse(R"({"messages": [
      {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "f", "arguments": "{\"x\": 1}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "42"}]})");
  const Json messages = openai_messages(Fields(body), RequestLimits{});
  EXPECT_EQ(messages[0]["content"], "ab");
  EXPECT_EQ(messages[1]["content"], "");
  EXPECT_EQ(messages[1]["tool_calls"][0]["function"]["arguments"]["x"], 1);
  const auto status = [](const char* text) {
    const Json b = Json::parse(text);
    return status_of([&] { openai_messages(Fields(b), RequestLimits{}); });
  };
  EXPECT_EQ(status(R"({"messages": []})"), 400);
  EXPECT_EQ(status(R"({"messages": "hi"})"), 422);
  EXPECT_EQ(status(R"({"messages": [{"role": "wizard", "content": "x"}]})"), 400);
  EXPECT_EQ(status(R"({"messages": [{"role": "user"}]})"), 400);
  EXPECT_EQ(status(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})"), 400);
  EXPECT_EQ(status(R"({"messages": [{"role": "assistant", "content": "", "tool_calls": [
      {"function": {"name": "f", "arguments": "not json"}}]}]})"),
            400);
}

// vLLM's per-request `chat_template`: refused (400) unless the server trusts request templates;
// when trusted it is what gets rendered, and a broken one is a 400, not a crash.
TEST(ChatTemplateField, RefusedUnlessTrustedThenRendered) {
  const Tokenizer tokenizer =
      Tokenizer::load(std::string(HADRON_SOURCE_DIR) + "/models/default/tokenizer.json");
  ServedModel served;
  served.tokenizer = &tokenizer;
  served.chat_template = chat::ChatTemplate::parse("model:{{ messages[0].content }}");
  const Json body = Json::parse(R"({"messages": [{"role": "user", "content": "hi"}],
                                    "chat_template": "request:{{ messages[0].content }}"})");
  const auto inputs = [&] { return openai_chat_inputs(Fields(body), served, RequestLimits{}); };
  EXPECT_EQ(status_of([&] { inputs(); }), 400);

  served.trust_request_chat_template = true;
  EXPECT_EQ(render_chat(served, inputs()).ids, tokenizer.encode("request:hi", false));
  Json plain = body;
  plain.erase("chat_template");
  EXPECT_EQ(render_chat(served, openai_chat_inputs(Fields(plain), served, RequestLimits{})).ids,
            tokenizer.encode("model:hi", false));

  const auto status = [&](const Json& chat_template) {
    Json b = body;
    b["chat_template"] = chat_template;
    return status_of([&] { render_chat(served, openai_chat_inputs(Fields(b), served, {})); });
  };
  EXPECT_EQ(status("{% if %}"), 400);                     // does not parse
  EXPECT_EQ(status("{{ raise_exception('no') }}"), 400);  // fails when rendered
  EXPECT_EQ(
      status("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"),
      400);  // past the render limits
  EXPECT_EQ(status(5), 422);
}

// A reasoning model's constraint waits for its </think> unless the prompt closed the thinking.
TEST(AdaptSampling, ConstraintAfterTheEndOfThinking) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "hadron_think_tokenizer.json";
  std::ofstream(path) << R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},
      "added_tokens": [{"id": 2, "content": "<think>", "special": true},
                       {"id": 3, "content": "</think>", "special": true}]})";
  const Tokenizer tokenizer = Tokenizer::load(path.string());
  ASSERT_EQ(tokenizer.token_to_id("</think>"), 3);
  auto vocab = std::make_shared<const grammar::TokenVocabulary>(
      std::vector<std::string>{"a", "b", "", ""}, std::vector<int32_t>{});
  auto masker = std::make_shared<const grammar::TokenMasker>(
      std::make_shared<const grammar::Grammar>(grammar::compile_regex("a+")), vocab);
  ServedModel served;
  served.tokenizer = &tokenizer;
  served.output_format.reasoning = true;
  const auto after = [&](bool constrained, bool closed) {
    SamplingParams params;
    if (constrained) params.constraint = masker;
    ChatPrompt prompt;
    prompt.reasoning_closed = closed;
    adapt_sampling(served, prompt, params);
    return params.constraint_after_token;
  };
  EXPECT_EQ(after(true, false), 3);
  EXPECT_EQ(after(true, true), -1);  // e.g. enable_thinking false: <think></think> in the prompt
  EXPECT_EQ(after(false, false), -1);
  served.output_format.reasoning = false;
  EXPECT_EQ(after(true, false), -1);
  // The prompt's last marker decides whether thinking is over.
  const Json body = Json::parse(R"({"messages": [{"role": "user", "content": "a"}]})");
  const auto closed = [&](const char* chat_template) {
    served.chat_template = chat::ChatTemplate::parse(chat_template);
    return render_chat(served, openai_chat_inputs(Fields(body), served, {})).reasoning_closed;
  };
  EXPECT_TRUE(closed("{{ messages[0].content }}<think></think>"));
  EXPECT_FALSE(closed("{{ messages[0].content }}<think>"));
  EXPECT_FALSE(closed("{{ messages[0].content }}"));
  EXPECT_FALSE(closed("</think>{{ messages[0].content }}<think>"));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace hadron::server
