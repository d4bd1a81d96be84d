// hadron serve: the OpenAI- and Anthropic-compatible HTTP server.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <thread>

#include "app/command.h"
#include "app/engine_flags.h"
#include "app/prompt_input.h"
#include "chat/chat_template_loader.h"
#include "core/error.h"
#include "engine/tokenizer_detokenizer.h"
#include "grammar/tokenizer_vocabulary.h"
#include "loader/generation_defaults.h"
#include "server/http_server.h"

namespace hadron::app {
namespace {

struct ServeArgs {
  EngineOptions engine;
  std::string load_format = "auto";
  server::HttpOptions http;
  std::string api_key;
  std::string served_model_name;
  std::string chat_template;  // a file or the template text
  bool trust_request_chat_template = false;
  std::string tool_call_parser = "auto";
  std::string reasoning_parser = "auto";
  size_t max_queued_requests = 4096;
  double drain_timeout = 30;
  bool no_prefix_caching = false;
};

std::string read_template_arg(const std::string& arg) {
  if (!std::filesystem::is_regular_file(arg)) return arg;  // the template itself
  std::ifstream in(arg);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The model's template (or --chat-template) with its special tokens; none when it has none.
void load_template(const ServeArgs& args, server::ServedModel& served) {
  std::string source;
  try {
    const chat::ModelChatTemplate found = chat::load_chat_template(args.engine.model_path);
    source = found.source;
    served.bos_token = found.bos_token;
    served.eos_token = found.eos_token;
  } catch (const InputError& e) {
    if (args.chat_template.empty()) std::fprintf(stderr, "no chat template: %s\n", e.what());
  }
  if (!args.chat_template.empty()) source = read_template_arg(args.chat_template);
  if (!source.empty()) served.chat_template = chat::ChatTemplate::parse(source);
  served.output_format = server::detect_output_format(source);
  if (args.tool_call_parser != "auto")
    served.output_format.tools = server::tool_format_from_name(args.tool_call_parser);
  if (args.reasoning_parser != "auto")
    served.output_format.reasoning = args.reasoning_parser != "none";
}

server::ServedModel describe_model(const ServeArgs& args, const Tokenizer* tokenizer,
                                   const GenerationDefaults& defaults) {
  server::ServedModel served;
  served.root = args.engine.model_path;
  // As vLLM: the --model argument as given (the shipped model when none was).
  served.name = !args.served_model_name.empty()                 ? args.served_model_name
                : args.engine.model_path == default_model_dir() ? std::string("models/default")
                                                                : args.engine.model_path;
  served.tokenizer = tokenizer;
  load_template(args, served);
  served.trust_request_chat_template = args.trust_request_chat_template;
  served.defaults = defaults;
  return served;
}

// Blocks until SIGTERM or SIGINT (which the caller has blocked in every thread).
int wait_for_signal() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  int signal = 0;
  sigwait(&signals, &signal);
  return signal;
}

const char* signal_name(int signal) { return signal == SIGTERM ? "SIGTERM" : "SIGINT"; }

// Waits for SIGTERM or SIGINT on a thread of its own from construction. One that arrives while
// `loading` is set ends the process at once (nothing is served yet, and a load can take
// minutes); after that, wait() returns it for draining.
class SignalWatch {
 public:
  SignalWatch() : state_(std::make_shared<State>()) {
    std::thread([state = state_] {
      const int signal = wait_for_signal();
      if (state->loading) {
        std::fprintf(stderr, "serve: %s while loading the model; exiting\n", signal_name(signal));
        std::_Exit(128 + signal);
      }
      state->received.set_value(signal);
    }).detach();  // the process may end (a failed load) while it waits
  }
  void loaded() { state_->loading = false; }
  int wait() { return state_->received.get_future().get(); }

 private:
  struct State {
    std::atomic<bool> loading = true;
    std::promise<int> received;
  };
  std::shared_ptr<State> state_;
};

void drain(server::ServerContext& context, AsyncEngine& engine, double timeout_s) {
  context.draining = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (engine.n_unfinished() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (engine.n_unfinished() > 0)
    std::fprintf(stderr, "serve: %zu requests still running after %.0f s; stopping anyway\n",
                 engine.n_unfinished(), timeout_s);
}

void run_serve(ServeArgs& args) {
  EngineOptions options = args.engine;
  finish_engine_options(options, args.load_format);
  options.enable_prefix_caching = !args.no_prefix_caching;
  // Signals go to the waiting thread only, never to a connection thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  SignalWatch signal_watch;

  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer_if_any(options.model_path);
  server::ServerContext context;
  const GenerationDefaults defaults = read_generation_defaults(options.model_path);
  context.model = describe_model(args, tokenizer.get(), defaults);
  context.api_key = args.api_key;
  server::HttpServer http(context, args.http);
  http.start();  // /health answers 503 while the model loads
  std::fprintf(stderr, "serve: listening on http://%s:%d (model '%s', tools: %s)\n",
               args.http.host.c_str(), http.port(), context.model.name.c_str(),
               server::tool_format_name(context.model.output_format.tools));

  std::unique_ptr<LoadedModel> model = load_model(options);
  context.model.max_model_len = model->max_model_len();
  context.model.vocab_size = static_cast<int32_t>(model->config().vocab_size);
  const std::unique_ptr<TokenizerDetokenizer> detokenizer =
      tokenizer ? std::make_unique<TokenizerDetokenizer>(*tokenizer) : nullptr;
  Engine engine(*model, detokenizer.get(), defaults.eos_token_ids);
  AsyncEngine async_engine(engine, {args.max_queued_requests});
  if (tokenizer)
    context.grammars =
        std::make_shared<grammar::GrammarCache>(std::make_shared<const grammar::TokenVocabulary>(
            grammar::make_token_vocabulary(*tokenizer, engine.eos_token_ids())));
  context.engine = &async_engine;
  signal_watch.loaded();
  std::fprintf(stderr, "serve: ready\n");

  const int signal = signal_watch.wait();
  std::fprintf(stderr, "serve: %s, draining\n", signal_name(signal));
  drain(context, async_engine, args.drain_timeout);
  http.stop();
  context.engine = nullptr;
  std::fprintf(stderr, "serve: stopped\n");
}

void setup_serve(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* command = app.add_subcommand("serve", "OpenAI- and Anthropic-compatible HTTP server");
  add_engine_flags(*command, args->engine, args->load_format);
  add_speculative_flag(*command, args->engine);
  command->add_option("--host", args->http.host, "address to listen on");
  command->add_option("--port", args->http.port, "port (0: any free port)");
  command->add_option("--api-key", args->api_key, "require this key (Authorization: Bearer)");
  command->add_option("--served-model-name", args->served_model_name,
                      "the model name clients use (default: --model)");
  command->add_option("--chat-template", args->chat_template, "a Jinja file or template text");
  command->add_flag("--trust-request-chat-template", args->trust_request_chat_template,
                    "render a request's own chat_template field (else it is a 400)");
  command->add_option("--tool-call-parser", args->tool_call_parser,
                      "auto (from the template), none, hermes, qwen3_coder, glm45, deepseek_v3, "
                      "llama3_json, openai");
  command->add_option("--reasoning-parser", args->reasoning_parser,
                      "auto (from the template), none, or any name to split <think> blocks");
  command->add_option("--num-gpu-blocks-override,--num-kv-blocks", args->engine.num_kv_blocks,
                      "KV-cache blocks (default: sized from memory)");
  command->add_option("--max-queued-requests", args->max_queued_requests,
                      "unfinished requests beyond which new ones get 429");
  command->add_option("--drain-timeout", args->drain_timeout,
                      "seconds SIGTERM waits for running requests");
  command->add_flag_function(
      "--enable-prefix-caching,!--no-enable-prefix-caching",
      [args](int64_t count) { args->no_prefix_caching = count < 0; },
      "reuse the KV of shared prompt prefixes (on by default)");
  command->callback([args] { run_serve(*args); });
}

}  // namespace

HADRON_COMMAND(setup_serve);

}  // namespace hadron::app
