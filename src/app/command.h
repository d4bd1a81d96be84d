// Subcommands of the `hadron` CLI. Each cmd_<name>.cpp defines one and registers it with
// HADRON_COMMAND; main() adds every registered command to the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace hadron::app {

// Adds a subcommand to `app` and sets its callback.
using CommandSetup = void (*)(CLI::App& app);

std::vector<CommandSetup>& command_registry();

struct CommandRegistrar {
  explicit CommandRegistrar(CommandSetup setup) { command_registry().push_back(setup); }
};

}  // namespace hadron::app

#define HADRON_COMMAND(setup_fn) \
  static const ::hadron::app::CommandRegistrar hadron_command_registrar_##setup_fn(setup_fn)
