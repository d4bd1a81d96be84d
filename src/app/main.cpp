// hadron: serve, generate, score, bench, tokenize and inspect Hugging Face checkpoints.
#include <cstdio>

#include "app/command.h"
#include "core/error.h"

namespace hadron::app {

std::vector<CommandSetup>& command_registry() {
  static std::vector<CommandSetup> registry;
  return registry;
}

}  // namespace hadron::app

int main(int argc, char** argv) {
  CLI::App app{"hadron: a fast LLM inference engine for Hugging Face checkpoints"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "hadron 0.1.0");
  for (hadron::app::CommandSetup setup : hadron::app::command_registry()) setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const hadron::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
