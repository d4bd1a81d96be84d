#include "grammar/json_schema.h"

#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "grammar/grammar_error.h"
#include "grammar/json_number_range.h"
#include "grammar/json_schema_merge.h"
#include "grammar/regex.h"

namespace hadron::grammar {
namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string> kHandled = {"type",
                                        "properties",
                                        "required",
                                        "additionalProperties",
                                        "items",
                                        "prefixItems",
                                        "minItems",
                                        "maxItems",
                                        "enum",
                                        "const",
                                        "$ref",
                                        "anyOf",
                                        "oneOf",
                                        "allOf",
                                        "minLength",
                                        "maxLength",
                                        "pattern",
                                        "format",
                                        "minimum",
                                        "maximum",
                                        "exclusiveMinimum",
                                        "exclusiveMaximum",
                                        "additionalItems",
                                        "contains",
                                        "propertyNames",
                                        "minProperties",
                                        "maxProperties",
                                        "not",
                                        "if",
                                        "then",
                                        "else",
                                        "dependencies",
                                        "multipleOf",
                                        "patternProperties"};

// Regexes of the supported string formats (RFC 3339 dates and times, RFC 4122 UUIDs, a
// practical subset of email addresses, dotted-quad IPv4).
const std::map<std::string, std::string> kFormats = {
    {"date", R"(\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]))"},
    {"time", R"(([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))"},
    {"date-time",
     R"(\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))"},
    {"uuid", R"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"},
    {"email", R"([A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63}){1,8})"},
    {"ipv4", R"(((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))"},
};

class SchemaCompiler {
 public:
  SchemaCompiler(const Json& root, GrammarBuilder& builder) : root_(root), builder_(builder) {}

  Grammar compile(std::string_view prefix, std::string_view suffix) {
    const int32_t top = builder_.declare("root");
    builder_.define(top,
                    seq({literal(prefix), ws(), schema_rule(root_, "", 0), ws(), literal(suffix)}));
    return builder_.build(top);
  }

 private:
  // A shared rule made once (whitespace, strings, numbers, any value).
  ExprPtr common(const std::string& name, const std::function<ExprPtr()>& body) {
    auto it = common_.find(name);
    if (it != common_.end()) return ref(it->second);
    const int32_t id = builder_.declare(name);
    common_.emplace(name, id);
    builder_.define(id, body());
    return ref(id);
  }

  // Bounded so a model cannot spend its whole budget on whitespace. Inline, not a rule of
  // its own: a rule completing under a mask position makes tokens context-dependent.
  static ExprPtr ws() {
    return repeat(byte_ranges({{'\t', '\n'}, {'\r', '\r'}, {' ', ' '}}), 0, 8);
  }
  ExprPtr comma() { return seq({ws(), literal(","), ws()}); }
  ExprPtr colon() { return seq({ws(), literal(":"), ws()}); }

  ExprPtr string_char() {
    return common("char", [] {
      return alt(
          {code_points({{0, 0x1F}, {U'"', U'"'}, {U'\\', U'\\'}}, true),
           seq({literal("\\"),
                alt({byte_ranges({{'"', '"'},
                                  {'\\', '\\'},
                                  {'/', '/'},
                                  {'b', 'b'},
                                  {'f', 'f'},
                                  {'n', 'n'},
                                  {'r', 'r'},
                                  {'t', 't'}}),
                     seq({literal("u"),
                          repeat(byte_ranges({{'0', '9'}, {'A', 'F'}, {'a', 'f'}}), 4, 4)})})})});
    });
  }
  ExprPtr any_string() {
    return common("string", [&] {
      return seq({literal("\""), repeat(string_char(), 0, -1), literal("\"")});
    });
  }
  ExprPtr any_number() {
    return common("number", [&] {
      return parse_regex(R"(-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?)", "number", builder_.limits());
    });
  }
  ExprPtr any_value() {
    return common("value", [&] {
      const int32_t self = common_.at("value");
      ExprPtr elements = seq({ref(self), repeat(seq({comma(), ref(self)}), 0, -1)});
      ExprPtr members_item = seq({any_string(), colon(), ref(self)});
      ExprPtr members = seq({members_item, repeat(seq({comma(), members_item}), 0, -1)});
      return alt({seq({literal("{"), ws(), repeat(members, 0, 1), ws(), literal("}")}),
                  seq({literal("["), ws(), repeat(elements, 0, 1), ws(), literal("]")}),
                  any_string(), any_number(), literal("true"), literal("false"), literal("null")});
    });
  }

  // Every subschema gets a rule, so repetitions copy a reference and not its automaton.
  ExprPtr schema_rule(const Json& s, const std::string& loc, int depth) {
    const int32_t id = builder_.declare(loc.empty() ? "schema" : loc);
    builder_.define(id, schema(s, loc, depth));
    return ref(id);
  }

  ExprPtr schema(const Json& s, const std::string& loc, int depth) {
    builder_.check_time();
    if (depth > builder_.limits().max_depth)
      grammar_error(loc, "schemas are nested deeper than {}", builder_.limits().max_depth);
    if (s.is_boolean()) return s.get<bool>() ? any_value() : alt({});
    if (!s.is_object()) grammar_error(loc, "a schema must be an object or a boolean");
    for (const auto& [key, value] : s.items())
      if (!is_annotation(key) && !kHandled.contains(key))
        grammar_error(loc + "/" + key, "unsupported JSON Schema keyword '{}'", key);
    if (s.contains("$ref")) return reference(s, loc, depth);
    if (s.contains("not")) return negation(s, loc);
    refuse_conditionals(s, loc);
    if (s.contains("allOf")) return schema(merge_all_of(s, loc), loc, depth + 1);
    if (s.contains("const") || s.contains("enum")) return enumeration(s, loc);
    for (const char* combinator : {"anyOf", "oneOf"})
      if (s.contains(combinator)) return combination(s, combinator, loc, depth);
    return typed(s, loc, depth);
  }

  void refuse_siblings(const Json& s, const std::string& loc, const std::string& keyword) {
    for (const auto& [key, value] : s.items())
      if (key != keyword && !is_annotation(key))
        grammar_error(loc + "/" + key, "'{}' beside '{}' is not supported", key, keyword);
  }

  // not: only of the schemas that accept everything or nothing.
  ExprPtr negation(const Json& s, const std::string& loc) {
    refuse_siblings(s, loc, "not");
    const Json& inner = s["not"];
    if (inner == Json(false)) return any_value();
    bool accepts_all = inner == Json(true) || inner.is_object();
    if (inner.is_object())
      for (const auto& [key, value] : inner.items()) accepts_all &= is_annotation(key);
    if (!accepts_all)
      grammar_error(loc + "/not",
                    "'not' of a schema other than true, false or {{}} is not supported");
    return alt({});
  }

  // if alone, then or else without if, and dependencies that require nothing have no effect.
  static void refuse_conditionals(const Json& s, const std::string& loc) {
    if (s.contains("if") && (s.contains("then") || s.contains("else")))
      grammar_error(loc + "/if", "'if' with 'then' or 'else' is not supported");
    if (const auto it = s.find("dependencies"); it != s.end()) {
      bool none = it->is_object();
      if (none)
        for (const auto& [key, value] : it->items())
          none &= value == Json(true) || (value.is_array() && value.empty());
      if (!none)
        grammar_error(loc + "/dependencies",
                      "'dependencies' that require something are not supported");
    }
  }

  // A $ref with siblings is compiled as their allOf: what draft 2019+ means, and a subset of
  // draft 7's meaning (which ignores the siblings).
  ExprPtr reference(const Json& s, const std::string& loc, int depth) {
    const Json& target = s["$ref"];
    if (!target.is_string() || !target.get<std::string>().starts_with("#"))
      grammar_error(loc + "/$ref", "only references into the same document ('#...') are supported");
    const std::string pointer = target.get<std::string>().substr(1);
    bool alone = true;
    for (const auto& [key, value] : s.items()) alone &= key == "$ref" || is_annotation(key);
    if (!alone) {
      Json resolved;
      try {
        resolved = root_.at(Json::json_pointer(pointer));
      } catch (const Json::exception&) {
        grammar_error(loc + "/$ref", "'{}' does not resolve in this schema",
                      target.get<std::string>());
      }
      return schema(with_siblings(s, "$ref", resolved, loc), loc, depth + 1);
    }
    auto it = refs_.find(pointer);
    if (it != refs_.end()) return ref(it->second);
    const Json* resolved = nullptr;
    try {
      resolved = &root_.at(Json::json_pointer(pointer));
    } catch (const Json::exception&) {
      grammar_error(loc + "/$ref", "'{}' does not resolve in this schema",
                    target.get<std::string>());
    }
    const int32_t id = builder_.declare("#" + pointer);
    refs_.emplace(pointer, id);
    builder_.define(id, schema(*resolved, pointer, depth + 1));
    return ref(id);
  }

  static bool has_type(const Json& value, const std::string& type) {
    if (type == "integer") return value.is_number_integer() || value.is_number_unsigned();
    if (type == "number") return value.is_number();
    if (type == "string") return value.is_string();
    if (type == "boolean") return value.is_boolean();
    if (type == "null") return value.is_null();
    if (type == "array") return value.is_array();
    return type == "object" && value.is_object();
  }

  // const or enum, beside at most 'type' (which drops the values of other types).
  ExprPtr enumeration(const Json& s, const std::string& loc) {
    const char* keyword = s.contains("const") ? "const" : "enum";
    for (const auto& [key, value] : s.items())
      if (key != keyword && key != "type" && !is_annotation(key))
        grammar_error(loc + "/" + key, "'{}' beside '{}' is not supported", key, keyword);
    const Json values = s.contains("const") ? Json::array({s["const"]}) : s["enum"];
    if (!values.is_array()) grammar_error(loc + "/enum", "'enum' must be an array");
    std::vector<std::string> types;
    if (const auto it = s.find("type"); it != s.end()) {
      if (!it->is_string() && !it->is_array())
        grammar_error(loc + "/type", "'type' must be a string or an array of strings");
      for (const Json& t : it->is_string() ? Json::array({*it}) : *it)
        types.push_back(t.is_string() ? t.get<std::string>() : "");
    }
    std::vector<ExprPtr> options;
    for (const Json& v : values) {
      bool typed_ok = types.empty();
      for (const std::string& t : types) typed_ok |= has_type(v, t);
      if (typed_ok) options.push_back(literal(v.dump()));
    }
    return alt(std::move(options));
  }

  // anyOf (and oneOf, as anyOf) of the members, each joined with the siblings.
  ExprPtr combination(const Json& s, const std::string& keyword, const std::string& loc,
                      int depth) {
    const Json& list = s[keyword];
    const std::string at = loc + "/" + keyword;
    if (!list.is_array() || list.empty())
      grammar_error(at, "'{}' must be a non-empty array", keyword);
    std::vector<ExprPtr> options;
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string member_at = at + "/" + std::to_string(i);
      options.push_back(
          schema_rule(with_siblings(s, keyword, list[i], member_at), member_at, depth + 1));
    }
    return alt(std::move(options));
  }

  ExprPtr typed(const Json& s, const std::string& loc, int depth) {
    std::vector<std::string> types;
    if (const auto it = s.find("type"); it != s.end()) {
      if (it->is_string())
        types.push_back(it->get<std::string>());
      else if (it->is_array())
        for (const Json& t : *it) types.push_back(t.is_string() ? t.get<std::string>() : "");
      else
        grammar_error(loc + "/type", "'type' must be a string or an array of strings");
    } else {
      for (const char* key : {"properties", "required", "additionalProperties", "propertyNames",
                              "patternProperties", "minProperties", "maxProperties"})
        if (s.contains(key)) types = {"object"};
      for (const char* key : {"items", "prefixItems", "minItems", "maxItems", "contains"})
        if (s.contains(key)) types = {"array"};
      for (const char* key : {"minLength", "maxLength", "pattern", "format"})
        if (s.contains(key)) types = {"string"};
      for (const char* key :
           {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
        if (s.contains(key)) types = {"number"};
      if (types.empty()) return any_value();
    }
    std::vector<ExprPtr> options;
    for (const std::string& type : types) options.push_back(one_type(s, type, loc, depth));
    return alt(std::move(options));
  }

  ExprPtr one_type(const Json& s, const std::string& type, const std::string& loc, int depth) {
    if (type == "null") return literal("null");
    if (type == "boolean") return alt({literal("true"), literal("false")});
    if (type == "string") return string_schema(s, loc);
    if (type == "integer") return integer_schema(s, loc);
    if (type == "number") return number_schema(s, loc);
    if (type == "array") return array_schema(s, loc, depth);
    if (type == "object") return object_schema(s, loc, depth);
    grammar_error(loc + "/type", "unknown type '{}'", type);
  }

  static std::optional<int64_t> bound(const Json& s, const char* key, const std::string& loc) {
    if (!s.contains(key)) return std::nullopt;
    if (!s[key].is_number_integer() && !s[key].is_number_unsigned())
      grammar_error(loc + "/" + key, "'{}' must be a non-negative integer", key);
    const int64_t v = s[key].get<int64_t>();
    if (v < 0) grammar_error(loc + "/" + key, "'{}' must be a non-negative integer", key);
    return v;
  }

  ExprPtr string_schema(const Json& s, const std::string& loc) {
    const std::optional<int64_t> min = bound(s, "minLength", loc);
    const std::optional<int64_t> max = bound(s, "maxLength", loc);
    const int32_t limit = builder_.limits().max_repeat;
    if (min.value_or(0) > limit || max.value_or(0) > limit)
      grammar_error(loc, "string length bounds over {} are not supported", limit);
    if (min && max && *min > *max)
      grammar_error(loc, "minLength {} > maxLength {}: no string fits", *min, *max);
    const bool has_length = min || max;
    if (s.contains("pattern") || s.contains("format")) {
      if (has_length)
        grammar_error(loc, "minLength/maxLength beside 'pattern' or 'format' are not supported");
      if (s.contains("pattern") && s.contains("format"))
        grammar_error(loc, "'pattern' beside 'format' is not supported");
      return seq({literal("\""), string_pattern(s, loc), literal("\"")});
    }
    if (!has_length) return any_string();
    return seq({literal("\""),
                repeat(string_char(), static_cast<int32_t>(min.value_or(0)),
                       max ? static_cast<int32_t>(*max) : -1),
                literal("\"")});
  }

  ExprPtr string_pattern(const Json& s, const std::string& loc) {
    if (s.contains("format")) {
      const Json& f = s["format"];
      const auto it = f.is_string() ? kFormats.find(f.get<std::string>()) : kFormats.end();
      if (it == kFormats.end())
        grammar_error(loc + "/format", "unsupported string format {}", f.dump());
      return parse_regex(it->second, loc + "/format", builder_.limits());
    }
    const Json& p = s["pattern"];
    if (!p.is_string()) grammar_error(loc + "/pattern", "'pattern' must be a string");
    std::string pattern = p.get<std::string>();
    // JSON Schema patterns search: unanchored ends match anything.
    const bool head = pattern.starts_with("^");
    const bool tail = pattern.ends_with("$") && !pattern.ends_with("\\$");
    ExprPtr body = parse_regex(pattern, loc + "/pattern", builder_.limits(), {true});
    ExprPtr any = repeat(code_points({{0, 0x1F}, {U'"', U'"'}, {U'\\', U'\\'}}, true), 0, -1);
    return seq({head ? empty() : any, body, tail ? empty() : any});
  }

  // multipleOf, alone: integers only (a subset for fractional multiples).
  ExprPtr multiples(const Json& s, const std::string& loc) {
    for (const char* key : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
      if (s.contains(key))
        grammar_error(loc + "/" + key, "'{}' beside 'multipleOf' is not supported", key);
    const Json& k = s["multipleOf"];
    if (!k.is_number() || k.get<double>() <= 0)
      grammar_error(loc + "/multipleOf", "'multipleOf' must be a number > 0");
    ExprPtr out = integer_multiples(builder_, k.get<double>(), loc.empty() ? "root" : loc);
    if (out == nullptr)
      grammar_error(loc + "/multipleOf",
                    "'multipleOf' {} is supported only when its smallest integer multiple is at "
                    "most 100",
                    k.dump());
    return out;
  }

  ExprPtr number_schema(const Json& s, const std::string& loc) {
    if (s.contains("multipleOf")) return multiples(s, loc);
    std::optional<NumberBound> lo, hi;
    auto read = [&](const char* key, std::optional<NumberBound>& bound, bool lower,
                    bool exclusive) {
      if (!s.contains(key)) return;
      const Json& v = s[key];
      if (!v.is_number() || std::abs(v.get<double>()) > 1e15)
        grammar_error(loc + "/" + key, "'{}' must be a number within +-1e15", key);
      const NumberBound b{v.get<double>(), exclusive};
      const bool tighter = !bound || (lower ? b.value > bound->value : b.value < bound->value) ||
                           (b.value == bound->value && exclusive);
      if (tighter) bound = b;
    };
    read("minimum", lo, true, false);
    read("exclusiveMinimum", lo, true, true);
    read("maximum", hi, false, false);
    read("exclusiveMaximum", hi, false, true);
    if (!lo && !hi) return any_number();
    ExprPtr range = number_range(lo, hi);
    if (range == nullptr) grammar_error(loc, "no number lies within the bounds (unsatisfiable)");
    return range;
  }

  ExprPtr integer_schema(const Json& s, const std::string& loc) {
    if (s.contains("multipleOf")) return multiples(s, loc);
    std::optional<int64_t> lo, hi;
    auto read = [&](const char* key, bool lower, bool exclusive) {
      if (!s.contains(key)) return;
      const Json& v = s[key];
      if (!v.is_number() || std::abs(v.get<double>()) > 1e18)
        grammar_error(loc + "/" + key, "'{}' must be a number within +-1e18", key);
      const double d = v.get<double>();
      int64_t b = static_cast<int64_t>(lower ? std::ceil(d) : std::floor(d));
      if (exclusive && static_cast<double>(b) == d) b += lower ? 1 : -1;
      if (lower)
        lo = lo ? std::max(*lo, b) : b;
      else
        hi = hi ? std::min(*hi, b) : b;
    };
    read("minimum", true, false);
    read("exclusiveMinimum", true, true);
    read("maximum", false, false);
    read("exclusiveMaximum", false, true);
    if (lo && hi && *lo > *hi) grammar_error(loc, "no integer lies in [{}, {}]", *lo, *hi);
    return integer_range(lo, hi);
  }

  // contains, alone: any elements around one that matches.
  ExprPtr array_containing(const Json& s, const std::string& loc, int depth) {
    for (const char* key : {"items", "prefixItems", "minItems", "maxItems"})
      if (s.contains(key))
        grammar_error(loc + "/" + key, "'{}' beside 'contains' is not supported", key);
    ExprPtr match = schema_rule(s["contains"], loc + "/contains", depth + 1);
    ExprPtr before = repeat(seq({any_value(), comma()}), 0, -1);
    ExprPtr after = repeat(seq({comma(), any_value()}), 0, -1);
    return seq({literal("["), ws(), before, match, after, ws(), literal("]")});
  }

  ExprPtr array_schema(const Json& s, const std::string& loc, int depth) {
    if (s.contains("contains")) return array_containing(s, loc, depth);
    const std::optional<int64_t> min = bound(s, "minItems", loc);
    const std::optional<int64_t> max = bound(s, "maxItems", loc);
    if (min && max && *min > *max)
      grammar_error(loc, "minItems {} > maxItems {}: no array fits", *min, *max);
    if (min.value_or(0) > 1000 || max.value_or(0) > 1000)
      grammar_error(loc, "item bounds over 1000 are not supported");
    // Draft 7 writes prefixItems as an 'items' array, and the rest as 'additionalItems'.
    const bool tuple = s.contains("items") && s["items"].is_array();
    const char* prefix_key = tuple ? "items" : "prefixItems";
    if (tuple && s.contains("prefixItems"))
      grammar_error(loc + "/prefixItems", "'prefixItems' beside an 'items' array");
    std::vector<ExprPtr> prefix;
    if (s.contains(prefix_key)) {
      const Json& items = s[prefix_key];
      const std::string at = loc + "/" + prefix_key;
      if (!items.is_array()) grammar_error(at, "'{}' must be an array", prefix_key);
      for (size_t i = 0; i < items.size(); ++i)
        prefix.push_back(schema_rule(items[i], at + "/" + std::to_string(i), depth + 1));
    }
    const char* rest_key = tuple ? "additionalItems" : "items";
    const Json rest_schema = s.contains(rest_key) ? s[rest_key] : Json(true);
    const bool rest_allowed = !(rest_schema.is_boolean() && !rest_schema.get<bool>());
    const auto n_prefix = static_cast<int32_t>(prefix.size());
    const auto lo = static_cast<int32_t>(min.value_or(0));
    const int32_t hi = max ? static_cast<int32_t>(*max) : -1;
    auto allowed = [&](int32_t k) { return k >= lo && (hi < 0 || k <= hi); };
    // Element i is prefix[i] while there is one, then `items`.
    std::vector<ExprPtr> options, items;
    if (allowed(0)) options.push_back(empty());
    for (int32_t k = 1; k <= n_prefix; ++k) {
      if (k > 1) items.push_back(comma());
      items.push_back(prefix[k - 1]);
      if (allowed(k)) options.push_back(seq(items));
    }
    if (rest_allowed && (hi < 0 || hi > n_prefix)) {
      ExprPtr rest = schema_rule(rest_schema, loc + "/" + rest_key, depth + 1);
      int32_t more_lo = std::max(1, lo - n_prefix);  // elements after the prefix
      int32_t more_hi = hi < 0 ? -1 : hi - n_prefix;
      if (n_prefix == 0) {
        items.push_back(rest);
        more_lo -= 1;
        more_hi = more_hi < 0 ? -1 : more_hi - 1;
      }
      items.push_back(repeat(seq({comma(), rest}), more_lo, more_hi));
      options.push_back(seq(std::move(items)));
    }
    if (options.empty()) grammar_error(loc, "no array length fits the item bounds (unsatisfiable)");
    return seq({literal("["), ws(), alt(std::move(options)), ws(), literal("]")});
  }

  // Unlisted properties are refused unless 'additionalProperties' allows them, or the schema
  // constrains them (propertyNames, min/maxProperties), where JSON Schema's default applies.
  ExprPtr object_schema(const Json& s, const std::string& loc, int depth) {
    const Json& props = s.contains("properties") ? s["properties"] : Json::object();
    const Json& required = s.contains("required") ? s["required"] : Json::array();
    const bool free = s.contains("propertyNames") || s.contains("minProperties") ||
                      s.contains("maxProperties") || s.contains("patternProperties");
    const Json& extra = s.contains("additionalProperties") ? s["additionalProperties"] : Json(free);
    if (!free) return object_of(props, required, extra, loc, depth);
    if (!props.empty() || !required.empty())
      grammar_error(loc,
                    "'propertyNames', 'patternProperties', 'minProperties' or 'maxProperties' "
                    "beside 'properties' or 'required' is not supported");
    return free_object(s, extra, loc, depth);
  }

  // An object of additional properties only: names following propertyNames, as many as
  // min/maxProperties allow. Duplicate names count once in a parsed object, so minProperties
  // over 1 is refused (the grammar cannot tell names apart).
  ExprPtr free_object(const Json& s, const Json& extra, const std::string& loc, int depth) {
    const std::optional<int64_t> min = bound(s, "minProperties", loc);
    std::optional<int64_t> max = bound(s, "maxProperties", loc);
    if (min.value_or(0) > 1)
      grammar_error(loc + "/minProperties", "'minProperties' over 1 is not supported");
    if (max.value_or(0) > 1000)
      grammar_error(loc + "/maxProperties", "'maxProperties' over 1000 is not supported");
    ExprPtr name = any_string();
    if (const auto it = s.find("propertyNames"); it != s.end()) {
      if (*it == Json(false)) max = 0;
      if (it->is_object()) {
        for (const auto& [key, value] : it->items())
          if (key != "minLength" && key != "maxLength" && key != "pattern" && key != "format" &&
              !(key == "type" && value == "string") && !is_annotation(key))
            grammar_error(loc + "/propertyNames/" + key, "'{}' in 'propertyNames' is not supported",
                          key);
        name = string_schema(*it, loc + "/propertyNames");
      } else if (!it->is_boolean()) {
        grammar_error(loc + "/propertyNames", "a schema must be an object or a boolean");
      }
    }
    ExprPtr value;
    if (const auto it = s.find("patternProperties"); it != s.end()) {
      // One pattern: every name matches it (so no property is additional).
      if (!it->is_object() || it->size() != 1 || s.contains("propertyNames"))
        grammar_error(loc + "/patternProperties",
                      "'patternProperties' other than one pattern alone is not supported");
      const std::string at = loc + "/patternProperties/" + it->begin().key();
      name = string_schema(Json{{"pattern", it->begin().key()}}, at);
      value = schema_rule(it->begin().value(), at, depth + 1);
    } else {
      if (extra == Json(false)) max = 0;
      value = schema_rule(extra, loc + "/additionalProperties", depth + 1);
    }
    if (max && min.value_or(0) > *max)
      grammar_error(loc, "no object has between {} and {} properties (unsatisfiable)",
                    min.value_or(0), *max);
    if (max == 0) return seq({literal("{"), ws(), literal("}")});
    ExprPtr kv = seq({name, colon(), value});
    ExprPtr members =
        seq({kv, repeat(seq({comma(), kv}), 0, max ? static_cast<int32_t>(*max) - 1 : -1)});
    if (min.value_or(0) == 0) members = repeat(members, 0, 1);
    return seq({literal("{"), ws(), members, ws(), literal("}")});
  }

  // Properties in declared order; each suffix of the list is a rule (after something was
  // written, a property needs a leading comma) so optional properties cost no blow-up.
  ExprPtr object_of(const Json& props, const Json& required, const Json& extra,
                    const std::string& loc, int depth) {
    if (!props.is_object()) grammar_error(loc + "/properties", "'properties' must be an object");
    if (!required.is_array()) grammar_error(loc + "/required", "'required' must be an array");
    struct Property {
      ExprPtr kv;
      bool required;
    };
    std::vector<Property> list;
    std::set<std::string> required_names;
    for (const Json& r : required) {
      if (!r.is_string()) grammar_error(loc + "/required", "'required' must list strings");
      required_names.insert(r.get<std::string>());
    }
    for (const auto& [name, sub] : props.items()) {
      ExprPtr value = schema_rule(sub, loc + "/properties/" + name, depth + 1);
      list.push_back(
          {seq({literal(Json(name).dump()), colon(), value}), required_names.contains(name)});
    }
    const bool extra_allowed = !(extra.is_boolean() && !extra.get<bool>());
    for (const std::string& name : required_names) {
      if (props.contains(name)) continue;
      if (!extra_allowed)
        grammar_error(loc + "/required",
                      "required property '{}' is not allowed by "
                      "'additionalProperties' (unsatisfiable)",
                      name);
      ExprPtr value = schema_rule(extra, loc + "/additionalProperties", depth + 1);
      list.push_back({seq({literal(Json(name).dump()), colon(), value}), true});
    }
    ExprPtr extra_kv;
    if (extra_allowed)
      extra_kv = seq(
          {any_string(), colon(), schema_rule(extra, loc + "/additionalProperties", depth + 1)});
    // after[i]: properties i.. once something was written; first[i]: when nothing was.
    ExprPtr after = extra_kv ? repeat(seq({comma(), extra_kv}), 0, -1) : empty();
    ExprPtr first = extra_kv ? repeat(seq({extra_kv, after}), 0, 1) : empty();
    for (size_t i = list.size(); i-- > 0;) {
      const int32_t after_id = builder_.declare(loc + "/after" + std::to_string(i));
      const int32_t first_id = builder_.declare(loc + "/first" + std::to_string(i));
      ExprPtr with = seq({comma(), list[i].kv, after});
      builder_.define(after_id, list[i].required ? with : alt({with, after}));
      ExprPtr start = seq({list[i].kv, after});
      builder_.define(first_id, list[i].required ? start : alt({start, first}));
      after = ref(after_id);
      first = ref(first_id);
    }
    return seq({literal("{"), ws(), first, ws(), literal("}")});
  }

  const Json& root_;
  GrammarBuilder& builder_;
  std::map<std::string, int32_t> common_;
  std::map<std::string, int32_t> refs_;
};

}  // namespace

Grammar compile_json_schema(std::string_view schema_text, const GrammarLimits& limits,
                            std::string_view prefix, std::string_view suffix) {
  Json schema;
  try {
    schema = Json::parse(schema_text, nullptr, true, false);
  } catch (const Json::exception& e) {
    grammar_error("schema", "not valid JSON: {}", e.what());
  }
  GrammarBuilder builder(limits);
  return SchemaCompiler(schema, builder).compile(prefix, suffix);
}

Grammar compile_any_json_object(const GrammarLimits& limits) {
  return compile_json_schema(R"({"type": "object", "additionalProperties": true})", limits);
}

}  // namespace hadron::grammar
