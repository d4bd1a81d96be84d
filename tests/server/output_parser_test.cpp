// Output parsers: each family's syntax parsed, and the streaming property - any split of the
// same text gives deltas whose concatenation equals the one-piece parse, tool calls included.
#include "server/output_parser.h"

#include <gtest/gtest.h>

#include <random>

namespace hadron::server {
namespace {

ParsedDelta parse_whole(OutputFormat format, std::string_view text, bool in_reasoning = false) {
  auto parser = make_output_parser(format, in_reasoning);
  ParsedDelta out = parser->push(text);
  out.append(parser->finish());
  return out;
}

// Splits `text` at random byte offsets (also inside markers and UTF-8 characters).
ParsedDelta parse_chunked(OutputFormat format, std::string_view text, std::mt19937& rng,
                          bool in_reasoning = false) {
  auto parser = make_output_parser(format, in_reasoning);
  ParsedDelta out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t n = std::uniform_int_distribution<size_t>(0, 7)(rng);
    out.append(parser->push(text.substr(pos, n)));
    pos += n;
  }
  out.append(parser->finish());
  return out;
}

void expect_same(const ParsedDelta& a, const ParsedDelta& b) {
  EXPECT_EQ(a.reasoning, b.reasoning);
  EXPECT_EQ(a.content, b.content);
  ASSERT_EQ(a.tool_calls.size(), b.tool_calls.size());
  for (size_t i = 0; i < a.tool_calls.size(); ++i) {
    EXPECT_EQ(a.tool_calls[i].name, b.tool_calls[i].name);
    EXPECT_EQ(a.tool_calls[i].arguments, b.tool_calls[i].arguments);
  }
}

struct Case {
  const char* name;
  OutputFormat format;
  std::string text;
  std::string reasoning, content;
  std::vector<ToolCall> calls;
  bool in_reasoning = false;
};

std::vector<Case> cases() {
  const OutputFormat hermes{ToolFormat::kHermes, true};
  return {
      {"hermes",
       hermes,
       "<think>\nweather?\n</think>\n\nLet me check.<tool_call>\n{\"name\": \"get_weather\", "
       "\"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call>\n<tool_call>\n{\"name\": "
       "\"get_time\", \"arguments\": {}}\n</tool_call>",
       "\nweather?\n",
       "\n\nLet me check.\n",
       {{"get_weather", R"({"city":"Paris","days":2})"}, {"get_time", "{}"}}},
      {"hermes-bad-json",
       hermes,
       "x <tool_call>{not json}</tool_call> y",
       "",
       "x <tool_call>{not json}</tool_call> y",
       {}},
      {"hermes-unterminated",
       hermes,
       "a<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}",
       "",
       "a",
       {{"f", R"({"a":1})"}}},
      {"think-open-in-prompt",
       hermes,
       "plan</think>answer <thin",
       "plan",
       "answer <thin",
       {},
       true},
      {"qwen3-coder",
       {ToolFormat::kQwen3Coder, false},
       "Sure.\n<tool_call>\n<function=search>\n<parameter=query>\nhadron engine\n</parameter>\n"
       "<parameter=limit>\n5\n</parameter>\n</function>\n</tool_call>",
       "",
       "Sure.\n",
       {{"search", R"({"query":"hadron engine","limit":5})"}}},
      {"glm45",
       {ToolFormat::kGlm45, true},
       "<think>hmm</think>ok<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing"
       "</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
       "hmm",
       "ok",
       {{"get_weather", R"({"city":"Beijing","days":3})"}}},
      // Model bytes that are not UTF-8 (a key, a loose value) become U+FFFD in the arguments.
      {"glm45-invalid-utf8",
       {ToolFormat::kGlm45, false},
       "<tool_call>f<arg_key>k\xff</arg_key><arg_value>a\xc3</arg_value></tool_call>",
       "",
       "",
       {{"f", "{\"k\xef\xbf\xbd\":\"a\xef\xbf\xbd\"}"}}},
      {"qwen3-coder-invalid-utf8",
       {ToolFormat::kQwen3Coder, false},
       "<tool_call>\n<function=f>\n<parameter=q>\n\x80x\n</parameter>\n</function>\n</tool_call>",
       "",
       "",
       {{"f", "{\"q\":\"\xef\xbf\xbdx\"}"}}},
      {"deepseek-v3",
       {ToolFormat::kDeepSeekV3, false},
       "Calling.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
       "```json\n{\"city\": \"Tokyo\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
       "",
       "Calling.",
       {{"get_weather", R"({"city":"Tokyo"})"}}},
      {"deepseek-v31",
       {ToolFormat::kDeepSeekV3, true},
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{\"x\": 1}<｜tool▁call▁end｜>"
       "<｜tool▁call▁begin｜>b<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
       "",
       "",
       {{"a", R"({"x":1})"}, {"b", "{}"}}},
      {"llama3-json",
       {ToolFormat::kLlama3Json, false},
       "  {\"name\": \"f\", \"parameters\": {\"q\": \"a;b}\"}}; {\"name\": \"g\", \"parameters\": "
       "{}}",
       "",
       "",
       {{"f", R"({"q":"a;b}"})"}, {"g", "{}"}}},
      {"llama3-text",
       {ToolFormat::kLlama3Json, false},
       "  Hello {world}",
       "",
       "  Hello {world}",
       {}},
      {"llama3-python-tag",
       {ToolFormat::kLlama3Json, false},
       "x<|python_tag|>{\"name\": \"f\", \"arguments\": {\"a\": [1, 2]}}",
       "",
       "x",
       {{"f", R"({"a":[1,2]})"}}},
      {"harmony",
       {ToolFormat::kHarmony, false},
       "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
       "to=functions.get_weather <|constrain|>json<|message|>{\"location\": \"SF\"}<|call|>",
       "Need weather.",
       "",
       {{"get_weather", R"({"location":"SF"})"}}},
      {"harmony-final",
       {ToolFormat::kHarmony, false},
       "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>"
       "Hi <|there|><|return|>",
       "Think.",
       "Hi <|there|>",
       {}},
      {"plain",
       {ToolFormat::kNone, false},
       "a <think> b </think> <tool_call>",
       "",
       "a <think> b </think> <tool_call>",
       {}},
      {"utf8",
       hermes,
       "<think>é漢</think>😀<tool_call>{\"name\": \"é\", \"arguments\": {\"k\": "
       "\"漢\"}}</tool_call>",
       "é漢",
       "😀",
       {{"é", R"({"k":"漢"})"}}},
  };
}

TEST(OutputParser, ParsesEachFamily) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    ParsedDelta expected{c.reasoning, c.content, c.calls};
    expect_same(parse_whole(c.format, c.text, c.in_reasoning), expected);
  }
}

TEST(OutputParser, AnyChunkingGivesTheSameMessage) {
  std::mt19937 rng(std::random_device{}());
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const ParsedDelta whole = parse_whole(c.format, c.text, c.in_reasoning);
    for (int trial = 0; trial < 200; ++trial)
      expect_same(parse_chunked(c.format, c.text, rng, c.in_reasoning), whole);
  }
}

TEST(OutputParser, RandomTextWithMarkerFragmentsStreamsLikeWhole) {
  // Random mixes of marker pieces and text: the streaming property must hold for any input.
  const std::vector<std::string> pieces = {"<think>",
                                           "</think>",
                                           "<tool_call>",
                                           "</tool_call>",
                                           "{\"name\": \"f\", \"arguments\": {}}",
                                           "<",
                                           "</",
                                           "<tool",
                                           "a",
                                           " ",
                                           "\n",
                                           "{",
                                           "}",
                                           "<|channel|>",
                                           "<|message|>",
                                           "<|end|>",
                                           "final",
                                           "analysis",
                                           "<|call|>",
                                           "to=functions.f"};
  std::mt19937 rng(std::random_device{}());
  for (ToolFormat tools :
       {ToolFormat::kHermes, ToolFormat::kLlama3Json, ToolFormat::kHarmony, ToolFormat::kGlm45}) {
    for (int trial = 0; trial < 300; ++trial) {
      std::string text;
      const int n = std::uniform_int_distribution<int>(0, 30)(rng);
      for (int i = 0; i < n; ++i) text += pieces[rng() % pieces.size()];
      SCOPED_TRACE(text);
      const OutputFormat format{tools, true};
      expect_same(parse_chunked(format, text, rng), parse_whole(format, text));
    }
  }
}

TEST(OutputParser, DetectsFormatFromTemplate) {
  EXPECT_EQ(detect_output_format("{{'<tool_call>'}} <think>").tools, ToolFormat::kHermes);
  EXPECT_TRUE(detect_output_format("<think>").reasoning);
  EXPECT_EQ(detect_output_format("<tool_call><function=").tools, ToolFormat::kQwen3Coder);
  EXPECT_EQ(detect_output_format("<tool_call><arg_key>").tools, ToolFormat::kGlm45);
  EXPECT_EQ(detect_output_format("<|channel|>").tools, ToolFormat::kHarmony);
  EXPECT_EQ(detect_output_format("<｜tool▁calls▁begin｜>").tools, ToolFormat::kDeepSeekV3);
  EXPECT_EQ(detect_output_format("<|python_tag|>").tools, ToolFormat::kLlama3Json);
  EXPECT_EQ(detect_output_format("{{ messages }}").tools, ToolFormat::kNone);
  EXPECT_EQ(tool_format_from_name("hermes"), ToolFormat::kHermes);
  EXPECT_ANY_THROW(tool_format_from_name("nope"));
}

}  // namespace
}  // namespace hadron::server
