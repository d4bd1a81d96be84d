// hadron bench serve: load an OpenAI-compatible server the way vLLM's serving benchmark does.
#pragma once

#include <CLI/CLI.hpp>

namespace hadron::app {

// Adds the `serve` subcommand to `hadron bench`.
void add_bench_serve(CLI::App& bench);

}  // namespace hadron::app
