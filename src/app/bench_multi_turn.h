// hadron bench multi-turn (cmd_bench_multi_turn.cpp): prefix-cache hit rate and time to first
// token of chat conversations whose turns share a growing prefix.
#pragma once

#include <CLI/CLI.hpp>

namespace hadron::app {

void add_bench_multi_turn(CLI::App& bench);

}  // namespace hadron::app
