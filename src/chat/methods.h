// Python's str, dict and list methods as bound functions. Methods that mutate a list or dict
// come back as the sandbox's unsafe Undefined, as in jinja2's ImmutableSandboxedEnvironment.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chat/value.h"

namespace hadron::chat {

// The method `name` of `receiver` bound to it; nullopt when its type has no such method.
std::optional<Value> find_method(const Value& receiver, const std::string& name);

// str methods shared with filters.
std::string py_strip(const std::string& s, const Value* chars, bool left, bool right);
std::vector<Value> py_split(const std::string& s, const Value* sep, int64_t max_split,
                            bool from_right);
std::string py_replace(const std::string& s, const std::string& old_s, const std::string& new_s,
                       int64_t count);
std::string py_upper(const std::string& s);
std::string py_lower(const std::string& s);
std::string py_title(const std::string& s);
std::string py_capitalize(const std::string& s);

}  // namespace hadron::chat
