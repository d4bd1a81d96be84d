#include "server/api_error.h"

namespace hadron::server {

const char* ApiError::type() const {
  switch (status_) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
      return "overloaded_error";
    default:
      return status_ >= 500 ? "server_error" : "invalid_request_error";
  }
}

}  // namespace hadron::server
