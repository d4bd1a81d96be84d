#include "server/request_fields.h"

#include "server/api_error.h"

namespace hadron::server {

Json parse_body(std::string_view body, const RequestLimits& limits) {
  if (body.size() > limits.max_body_bytes)
    throw ApiError(413, fmt::format("the request body has {} bytes; the limit is {}", body.size(),
                                    limits.max_body_bytes));
  bool too_deep = false;
  const Json::parser_callback_t bound_depth = [&](int depth, Json::parse_event_t, Json&) {
    if (depth > limits.max_json_depth) too_deep = true;
    return !too_deep;
  };
  Json json;
  try {
    json = Json::parse(body, bound_depth);
  } catch (const Json::exception& e) {  // parse_error, or out_of_range for a number overflow
    if (too_deep) bad_request("", "JSON nesting is deeper than {} levels", limits.max_json_depth);
    throw ApiError(400, fmt::format("the body is not valid JSON: {}", e.what()), "",
                   "invalid_json");
  }
  if (too_deep) bad_request("", "JSON nesting is deeper than {} levels", limits.max_json_depth);
  if (!json.is_object()) throw ApiError(422, "the body must be a JSON object", "", "invalid_type");
  return json;
}

Fields::Fields(const Json& object, std::string path) : object_(object), path_(std::move(path)) {
  if (!object_.is_object())
    throw ApiError(422, path_ + " must be an object", path_, "invalid_type");
}

std::string Fields::param(std::string_view name) const {
  return path_.empty() ? std::string(name) : path_ + "." + std::string(name);
}

void Fields::wrong_type(std::string_view name, std::string_view expected) const {
  throw ApiError(422, fmt::format("'{}' must be {}", param(name), expected), param(name),
                 "invalid_type");
}

const Json* Fields::get(std::string_view name) const {
  auto it = object_.find(name);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

const Json& Fields::required(std::string_view name) const {
  const Json* value = get(name);
  if (value == nullptr)
    throw ApiError(422, fmt::format("'{}' is required", param(name)), param(name), "missing");
  return *value;
}

std::optional<double> Fields::number(std::string_view name) const {
  const Json* value = get(name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) wrong_type(name, "a number");
  return value->get<double>();
}

std::optional<int64_t> Fields::integer(std::string_view name) const {
  const Json* value = get(name);
  if (value == nullptr) return std::nullopt;
  if (value->is_number_integer()) {
    if (value->is_number_unsigned() && value->get<uint64_t>() > INT64_MAX)
      bad_request(param(name), "'{}' is too large", param(name));
    return value->get<int64_t>();
  }
  if (value->is_number_float()) {  // 5.0 is an integer to Python clients
    const double d = value->get<double>();
    if (d > -9e18 && d < 9e18 && d == static_cast<double>(static_cast<int64_t>(d)))
      return static_cast<int64_t>(d);
  }
  wrong_type(name, "an integer");
}

std::optional<bool> Fields::boolean(std::string_view name) const {
  const Json* value = get(name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) wrong_type(name, "a boolean");
  return value->get<bool>();
}

std::optional<std::string> Fields::string(std::string_view name) const {
  const Json* value = get(name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) wrong_type(name, "a string");
  return value->get<std::string>();
}

void check_range(const std::string& param, double value, double lo, double hi) {
  if (!(value >= lo && value <= hi))
    bad_request(param, "'{}' must be in [{}, {}]; got {}", param, lo, hi, value);
}

std::string dump_json(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace hadron::server
