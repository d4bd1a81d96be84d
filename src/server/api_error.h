// Errors a request gets back: an HTTP status with OpenAI's error shape
// {"error": {"message", "type", "param", "code"}} (Anthropic's shape on /v1/messages).
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace hadron::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string param = {}, std::string code = {})
      : std::runtime_error(std::move(message)),
        status_(status),
        param_(std::move(param)),
        code_(std::move(code)) {}

  int status() const { return status_; }
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }
  // OpenAI's error type for the status (invalid_request_error, authentication_error, ...).
  const char* type() const;

 private:
  int status_;
  std::string param_;
  std::string code_;
};

// 400 naming the offending field.
template <typename... Args>
[[noreturn]] void bad_request(const std::string& param, fmt::format_string<Args...> format,
                              Args&&... args) {
  throw ApiError(400, fmt::format(format, std::forward<Args>(args)...), param, "invalid_value");
}

}  // namespace hadron::server
