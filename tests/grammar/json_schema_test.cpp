#include "grammar/json_schema.h"

#include <gtest/gtest.h>

#include <chrono>

#include "grammar/grammar_error.h"
#include "test_util.h"

namespace hadron::grammar {
namespace {

std::shared_ptr<const Grammar> schema(const char* text) { return share(compile_json_schema(text)); }

std::string error_of(const char* text) {
  try {
    compile_json_schema(text);
  } catch (const GrammarError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JsonSchema, ObjectPropertiesInOrder) {
  auto g = schema(R"({"type": "object", "properties": {
      "name": {"type": "string"}, "age": {"type": "integer"}, "tags": {"type": "array",
      "items": {"type": "string"}}}, "required": ["name", "age"]})");
  EXPECT_TRUE(matches(g, R"({"name": "Ann", "age": 31})"));
  EXPECT_TRUE(matches(g, R"({"name":"A\"n\u00e9","age":-3,"tags":["x", "y"]})"));
  EXPECT_TRUE(matches(g, "{\n  \"name\": \"B\",\n  \"age\": 0,\n  \"tags\": []\n}"));
  EXPECT_FALSE(matches(g, R"({"name": "Ann"})"));               // age is required
  EXPECT_FALSE(matches(g, R"({"age": 31, "name": "Ann"})"));    // declared order
  EXPECT_FALSE(matches(g, R"({"name": "Ann", "age": 31.5})"));  // integer
  EXPECT_FALSE(matches(g, R"({"name": "Ann", "age": 01})"));
  EXPECT_FALSE(matches(g, R"({"name": "Ann", "age": 1, "x": 1})"));  // no additional
  EXPECT_FALSE(matches(g, R"({"name": "A)"
                          "\n"
                          R"(", "age": 1})"));  // raw control char
}

TEST(JsonSchema, OptionalPropertiesAndAdditional) {
  auto g = schema(R"({"properties": {"a": {"type": "boolean"}, "b": {"type": "null"},
      "c": {"const": 3}}, "additionalProperties": {"type": "number"}})");
  EXPECT_TRUE(matches(g, "{}"));
  EXPECT_TRUE(matches(g, R"({"c": 3})"));
  EXPECT_TRUE(matches(g, R"({"a": true, "c": 3, "zz": 1.5e3})"));
  EXPECT_TRUE(matches(g, R"({"b": null, "q": 2})"));
  EXPECT_FALSE(
      matches(g, R"({"c": "x"})"));  // additional keys are not told apart from declared ones
  EXPECT_FALSE(matches(g, R"({"a": true,})"));
  EXPECT_FALSE(matches(g, R"({"q": "s"})"));
}

TEST(JsonSchema, RefsEnumsAnyOf) {
  auto g = schema(R"({"$defs": {"node": {"type": "object", "properties": {
      "v": {"enum": ["x", 1, null]}, "next": {"anyOf": [{"$ref": "#/$defs/node"},
      {"type": "null"}]}}, "required": ["v", "next"]}}, "$ref": "#/$defs/node"})");
  EXPECT_TRUE(matches(g, R"({"v": "x", "next": null})"));
  EXPECT_TRUE(matches(g, R"({"v": 1, "next": {"v": null, "next": {"v": "x", "next": null}}})"));
  EXPECT_FALSE(matches(g, R"({"v": "y", "next": null})"));
  EXPECT_FALSE(matches(g, R"({"v": 1, "next": {"v": 1}})"));
}

TEST(JsonSchema, StringsFormatsAndPatterns) {
  auto g = schema(R"({"type": "array", "prefixItems": [{"type": "string", "format": "date-time"},
      {"type": "string", "format": "uuid"}, {"type": "string", "pattern": "^[A-Z]{2}\\d+$"},
      {"type": "string", "minLength": 2, "maxLength": 3}, {"type": "string", "pattern": "ab"}],
      "items": false, "minItems": 5})");
  EXPECT_TRUE(matches(g, R"(["2024-02-29T12:30:00Z", "123e4567-e89b-12d3-a456-426614174000",)"
                         R"( "AB12", "é\n", "xxabyy"])"));
  EXPECT_FALSE(matches(g, R"(["2024-13-01T12:30:00Z", "123e4567-e89b-12d3-a456-426614174000",)"
                          R"( "AB12", "xy", "ab"])"));
  EXPECT_FALSE(matches(g, R"(["2024-02-29T12:30:00Z", "123e4567-e89b-12d3-a456-426614174000",)"
                          R"( "A12", "xy", "ab"])"));
  EXPECT_FALSE(matches(g, R"(["2024-02-29T12:30:00Z", "123e4567-e89b-12d3-a456-426614174000",)"
                          R"( "AB12", "xyzw", "ab"])"));
  EXPECT_FALSE(matches(g, R"(["2024-02-29T12:30:00Z", "123e4567-e89b-12d3-a456-426614174000",)"
                          R"( "AB12", "xy", "a"])"));
  EXPECT_FALSE(matches(g, R"(["2024-02-29T12:30:00Z", "123e4567-e89b-12d3-a456-426614174000",)"
                          R"( "AB12", "xy", "ab", "more"])"));
  // A pattern inside a string never lets a raw quote through.
  auto any = schema(R"({"type": "string", "pattern": ".*"})");
  EXPECT_TRUE(matches(any, R"("free text")"));
  EXPECT_FALSE(matches(any, R"("a"b")"));
}

TEST(JsonSchema, ArrayBounds) {
  auto g = schema(R"({"type": "array", "items": {"type": "integer"}, "minItems": 2,
      "maxItems": 3})");
  EXPECT_FALSE(matches(g, "[1]"));
  EXPECT_TRUE(matches(g, "[1, 2]"));
  EXPECT_TRUE(matches(g, "[1,2,3]"));
  EXPECT_FALSE(matches(g, "[1,2,3,4]"));
  EXPECT_FALSE(matches(g, "[]"));
}

TEST(JsonSchema, IntegerBoundsExhaustive) {
  struct Case {
    const char* schema;
    int lo, hi;
  };
  for (const Case& c :
       {Case{R"({"type": "integer", "minimum": -17, "maximum": 245})", -17, 245},
        Case{R"({"type": "integer", "exclusiveMinimum": 3})", 4, 1 << 30},
        Case{R"({"type": "integer", "maximum": -5})", -(1 << 30), -5},
        Case{R"({"type": "integer", "minimum": 0, "exclusiveMaximum": 100})", 0, 99}}) {
    auto g = schema(c.schema);
    for (int i = -400; i <= 1200; ++i)
      EXPECT_EQ(matches(g, std::to_string(i)), i >= c.lo && i <= c.hi) << c.schema << " " << i;
    EXPECT_FALSE(matches(g, "-0"));
    EXPECT_FALSE(matches(g, "007"));
  }
}

TEST(JsonSchema, AnyJsonObject) {
  auto g = share(compile_any_json_object());
  EXPECT_TRUE(matches(g, R"({"a": [1, {"b": null}, "c", true, -2.5e-3], "d": {}})"));
  EXPECT_FALSE(matches(g, "[1]"));
  EXPECT_FALSE(matches(g, R"({"a": [1,]})"));
  EXPECT_FALSE(matches(g, R"({"a" 1})"));
}

TEST(JsonSchema, NumberBounds) {
  auto g =
      share(compile_json_schema(R"({"type": "number", "minimum": -1.5, "exclusiveMaximum": 2})"));
  for (const char* ok : {"-1", "0", "1", "-0.5", "0.25", "1.999"})
    EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char* bad : {"2", "2.5", "-2", "-1.6", "1e3", "3"})
    EXPECT_FALSE(matches(g, bad)) << bad;
  g = share(compile_json_schema(R"({"type": "number", "exclusiveMinimum": 0})"));
  for (const char* ok : {"1", "0.5", "12.75"}) EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char* bad : {"0", "-0.5", "0.0", "-3"}) EXPECT_FALSE(matches(g, bad)) << bad;
}

TEST(JsonSchema, TuplesContainsAndFreeObjects) {
  auto g = share(compile_json_schema(
      R"({"items": [{"type": "integer"}, {"type": "string"}], "additionalItems": false})"));
  EXPECT_TRUE(matches(g, R"([1, "a"])"));
  EXPECT_TRUE(matches(g, "[1]"));
  EXPECT_FALSE(matches(g, R"([1, "a", 2])"));
  EXPECT_FALSE(matches(g, R"(["a"])"));
  g = share(compile_json_schema(R"({"contains": {"const": 5}})"));
  EXPECT_TRUE(matches(g, "[1, 5, 2]"));
  EXPECT_TRUE(matches(g, "[5]"));
  EXPECT_FALSE(matches(g, "[1, 2]"));
  EXPECT_FALSE(matches(g, "[]"));
  g = share(compile_json_schema(R"({"propertyNames": {"maxLength": 2}, "maxProperties": 2})"));
  EXPECT_TRUE(matches(g, R"({"ab": 1, "c": [true]})"));
  EXPECT_TRUE(matches(g, "{}"));
  EXPECT_FALSE(matches(g, R"({"abc": 1})"));
  EXPECT_FALSE(matches(g, R"({"a": 1, "b": 2, "c": 3})"));
}

TEST(JsonSchema, MultiplesAndPatternProperties) {
  auto g = share(compile_json_schema(R"({"type": "integer", "multipleOf": 7})"));
  for (const char* ok : {"0", "7", "-14", "700", "9999997"}) EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char* bad : {"1", "-8", "701", "7.0", "07"}) EXPECT_FALSE(matches(g, bad)) << bad;
  g = share(compile_json_schema(R"({"multipleOf": 1.5})"));  // integers only: multiples of 3
  EXPECT_TRUE(matches(g, "9"));
  EXPECT_FALSE(matches(g, "4"));
  EXPECT_NE(error_of(R"({"multipleOf": 1.01})").find("/multipleOf"), std::string::npos);
  g = share(compile_json_schema(R"({"patternProperties": {"^x_": {"type": "integer"}}})"));
  EXPECT_TRUE(matches(g, R"({"x_a": 1, "x_": 2})"));
  EXPECT_FALSE(matches(g, R"({"x_a": "s"})"));
  EXPECT_FALSE(matches(g, R"({"y": 1})"));
  EXPECT_NE(error_of(R"({"patternProperties": {"a": {}, "b": {}}})").find("/patternProperties"),
            std::string::npos);
}

TEST(JsonSchema, AllOfNotAndIgnoredConditionals) {
  auto g = share(compile_json_schema(R"({"properties": {"a": {"type": "integer"}},
      "required": ["a"], "allOf": [{"properties": {"b": {"type": "string"}},
      "required": ["b"]}]})"));
  EXPECT_TRUE(matches(g, R"({"a": 1, "b": "x"})"));
  EXPECT_FALSE(matches(g, R"({"a": 1})"));
  EXPECT_FALSE(matches(g, R"({"b": "x"})"));
  g = share(compile_json_schema(R"({"properties": {"a": {"not": {}}, "b": {"not": false}}})"));
  EXPECT_TRUE(matches(g, R"({"b": [1]})"));
  EXPECT_FALSE(matches(g, R"({"a": 1})"));
  g = share(compile_json_schema(R"({"type": "integer", "if": {"const": 1}})"));
  EXPECT_TRUE(matches(g, "7"));
  g = share(compile_json_schema(R"({"type": "string", "enum": ["a", 1, "b"]})"));
  EXPECT_TRUE(matches(g, R"("b")"));
  EXPECT_FALSE(matches(g, "1"));
}

TEST(JsonSchema, RefusedFeaturesNameLocationAndKeyword) {
  std::string e = error_of(R"({"properties": {"a": {"type": "array", "uniqueItems": true}}})");
  EXPECT_NE(e.find("/properties/a/uniqueItems"), std::string::npos) << e;
  EXPECT_NE(e.find("unsupported JSON Schema keyword 'uniqueItems'"), std::string::npos) << e;
  e = error_of(R"({"type": "string", "format": "hostname-ish"})");
  EXPECT_NE(e.find("/format"), std::string::npos) << e;
  e = error_of(R"({"allOf": [{"type": "string"}, {"type": "string", "minLength": 1}]})");
  EXPECT_NE(e.find("/allOf"), std::string::npos) << e;
  EXPECT_NE(e.find("'type' in more than one"), std::string::npos) << e;
  e = error_of(R"({"$ref": "http://example.com/s.json"})");
  EXPECT_NE(e.find("same document"), std::string::npos) << e;
  e = error_of(R"({"$ref": "#/$defs/missing"})");
  EXPECT_NE(e.find("does not resolve"), std::string::npos) << e;
  e = error_of(R"({"properties": {"a": {"not": {"type": "integer"}}}})");
  EXPECT_NE(e.find("/properties/a/not"), std::string::npos) << e;
  e = error_of(R"({"if": {"const": 1}, "then": {"const": 2}})");
  EXPECT_NE(e.find("/if"), std::string::npos) << e;
  e = error_of(R"({"type": "object", "minProperties": 2})");
  EXPECT_NE(e.find("/minProperties"), std::string::npos) << e;
  e = error_of("{not json");
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
}

TEST(JsonSchema, UnsatisfiableSchemasAreRefused) {
  EXPECT_NE(error_of("false").find("unsatisfiable"), std::string::npos);
  EXPECT_NE(error_of(R"({"type": "string", "minLength": 5, "maxLength": 2})").find("no string"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type": "object", "properties": {"a": false}, "required": ["a"]})")
                .find("unsatisfiable"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type": "object", "required": ["x"]})").find("unsatisfiable"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"enum": []})").find("unsatisfiable"), std::string::npos);
  EXPECT_NE(error_of(R"({"$defs": {"a": {"type": "object", "properties": {"n": {"$ref":
      "#/$defs/a"}}, "required": ["n"]}}, "$ref": "#/$defs/a"})")
                .find("unsatisfiable"),
            std::string::npos);
}

TEST(JsonSchema, DeepNestingIsALimitNotACrash) {
  std::string deep;
  for (int i = 0; i < 500; ++i) deep += R"({"type": "array", "items": )";
  deep += "{}";
  for (int i = 0; i < 500; ++i) deep += "}";
  EXPECT_THROW(compile_json_schema(deep), GrammarError);
}

TEST(JsonSchema, TypicalToolSchemaCompilesFast) {
  const char* tool = R"({"type": "object", "properties": {
      "location": {"type": "string", "description": "City and country"},
      "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
      "days": {"type": "integer", "minimum": 1, "maximum": 14},
      "include": {"type": "array", "items": {"type": "string", "enum": ["wind", "rain",
          "humidity"]}, "maxItems": 3},
      "when": {"type": "string", "format": "date-time"}},
      "required": ["location", "unit"], "additionalProperties": false})";
  const auto start = std::chrono::steady_clock::now();
  Grammar g = compile_json_schema(tool);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("typical tool schema: %.2f ms, %zu states\n", ms, g.states().size());
  EXPECT_LT(ms, 100.0);
}

}  // namespace
}  // namespace hadron::grammar
