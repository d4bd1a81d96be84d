// Safety properties: hostile templates end in InputError naming a line and column, within the
// configured limits, never in a crash or a hang.
#include <gtest/gtest.h>

#include <string>

#include "chat/template.h"
#include "core/error.h"

namespace hadron::chat {
namespace {

nlohmann::ordered_json small_context() {
  return nlohmann::ordered_json{{"messages", {{{"role", "user"}, {"content", "hi"}}}}};
}

// Parses and renders; returns the InputError message, or "" when it rendered.
std::string error_of(const std::string& source, const RenderOptions& options = {}) {
  try {
    ChatTemplate::parse(source).render(small_context(), options);
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(ChatTemplateLimits, LoopIterationsAreBounded) {
  RenderOptions options;
  options.limits.max_loop_iterations = 1000;
  std::string err = error_of(
      "{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}", options);
  EXPECT_NE(err.find("1000 iterations"), std::string::npos) << err;
  EXPECT_EQ(
      error_of("{% for i in range(10) %}{% for j in range(10) %}{% endfor %}{% endfor %}", options),
      "");
}

TEST(ChatTemplateLimits, RecursionIsBounded) {
  std::string err = error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  EXPECT_NE(err.find("nested deeper than 64"), std::string::npos) << err;
  RenderOptions options;
  options.limits.max_macro_calls = 500;
  err = error_of(
      "{% macro f(n) %}{% if n < 12 %}{{ f(n + 1) }}{{ f(n + 1) }}{% endif %}{% endmacro %}{{ f(0) "
      "}}",
      options);
  EXPECT_NE(err.find("more than 500 macro calls"), std::string::npos) << err;
}

TEST(ChatTemplateLimits, OutputAndValuesAreBounded) {
  RenderOptions options;
  options.limits.max_output_bytes = 1000;
  EXPECT_NE(error_of("{% for i in range(200) %}0123456789{% endfor %}", options)
                .find("exceeds the limit"),
            std::string::npos);
  EXPECT_NE(error_of("{{ 'x' * 100000 }}", options).find("MemoryError"), std::string::npos);
  EXPECT_NE(error_of("{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + "
                     "ns.l %}{% endfor %}",
                     options)
                .find("MemoryError"),
            std::string::npos);
  EXPECT_NE(error_of("{{ 2 ** 64 }}").find("OverflowError"), std::string::npos);
  EXPECT_NE(error_of("{{ range(1000000) | length }}").find("Range too big"), std::string::npos);
}

TEST(ChatTemplateLimits, ErrorsNameLineAndColumn) {
  EXPECT_NE(error_of("line one\n{{ 1 + }}").find("template:2:"), std::string::npos);
  EXPECT_NE(error_of("a\nb\n  {{ messages[0].content.nope.deeper }}").find("template:3:"),
            std::string::npos);
  EXPECT_NE(
      error_of("{% if true %}\n{{ raise_exception('bad input') }}{% endif %}").find("template:2:"),
      std::string::npos);
  EXPECT_NE(error_of("{{ raise_exception('bad input') }}").find("bad input"), std::string::npos);
}

TEST(ChatTemplateLimits, DeepNestingIsAnErrorNotACrash) {
  std::string deep_expr = "{{ ";
  deep_expr.append(5000, '(').append("1").append(5000, ')').append(" }}");
  EXPECT_NE(error_of(deep_expr).find("nested too deeply"), std::string::npos);
  std::string deep_not = "{{ " + std::string(0, ' ');
  for (int i = 0; i < 5000; ++i) deep_not += "not ";
  EXPECT_NE(error_of(deep_not + "1 }}").find("nested too deeply"), std::string::npos);
  std::string deep_if;
  for (int i = 0; i < 5000; ++i) deep_if += "{% if true %}";
  EXPECT_NE(error_of(deep_if).find("nested too deeply"), std::string::npos);
  EXPECT_NE(error_of(std::string("{{ x").append(5000, '|').append(" }}")).find("template:1:"),
            std::string::npos);
}

TEST(ChatTemplateLimits, SandboxBlocksMutationAndInternals) {
  EXPECT_NE(error_of("{% set l = [] %}{{ l.append(1) }}").find("unsafe"), std::string::npos);
  EXPECT_NE(error_of("{{ messages[0].update({'role': 'system'}) }}").find("unsafe"),
            std::string::npos);
  EXPECT_NE(error_of("{{ messages.pop() }}").find("unsafe"), std::string::npos);
  EXPECT_EQ(error_of("{{ messages.__class__ }}{{ ''.__class__ }}"),
            "");  // undefined: prints nothing
  EXPECT_NE(error_of("{{ ''.__class__.__subclasses__() }}").find("template:1:"), std::string::npos);
}

TEST(ChatTemplateLimits, ParseOnceRenderMany) {
  ChatTemplate t = ChatTemplate::parse(
      "{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}{{ strftime_now('%Y') | "
      "length }}");
  std::string first = t.render(small_context());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(t.render(small_context()), first);
  EXPECT_EQ(first, "user:hi;4");
}

}  // namespace
}  // namespace hadron::chat
