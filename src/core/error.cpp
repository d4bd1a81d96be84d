#include "core/error.h"

namespace hadron {

void fail_check(const char* expr, const std::string& message, SourceLocation where) {
  throw Error(fmt::format("check failed: {} ({}) at {}:{} in {}", expr, message, where.file_name(),
                          where.line(), where.function_name()));
}

}  // namespace hadron
