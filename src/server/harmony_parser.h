// gpt-oss's harmony output: messages on channels (analysis -> reasoning, final -> content,
// commentary addressed to=functions.NAME -> a tool call), delimited by special tokens that must
// stay in the decoded text (skip_special_tokens off).
#pragma once

#include <memory>

#include "server/output_parser.h"

namespace hadron::server {

std::unique_ptr<OutputParser> make_harmony_parser();

}  // namespace hadron::server
