// The C API (include/hadron/hadron.h) over LibraryEngine: every entry point catches every
// exception and turns it into a status and a thread-local message.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>

#include "capi/library_engine.h"
#include "core/error.h"
#include "hadron/hadron.h"
#include "server/api_error.h"

struct hadron_engine {
  std::unique_ptr<hadron::capi::LibraryEngine> impl;
};

namespace hadron::capi {
namespace {

thread_local std::string last_error;

// hadron_poll found no output within its timeout.
struct TimeoutSignal {};

hadron_status fail(hadron_status status, const char* message) {
  last_error = message;
  return status;
}

// Runs body, mapping each kind of exception to its status.
template <typename Body>
hadron_status guarded(Body&& body) {
  try {
    body();
    return HADRON_OK;
  } catch (const TimeoutSignal&) {
    return fail(HADRON_ERR_TIMEOUT, "no output within the timeout");
  } catch (const NotFoundError& e) {
    return fail(HADRON_ERR_NOT_FOUND, e.what());
  } catch (const QueueFullError& e) {
    return fail(HADRON_ERR_QUEUE_FULL, e.what());
  } catch (const server::ApiError& e) {
    return fail(HADRON_ERR_INVALID_ARGUMENT, e.what());
  } catch (const InputError& e) {
    return fail(HADRON_ERR_INVALID_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return fail(HADRON_ERR_ENGINE, "out of memory");
  } catch (const std::exception& e) {
    return fail(HADRON_ERR_ENGINE, e.what());
  } catch (...) {
    return fail(HADRON_ERR_ENGINE, "unknown internal error");
  }
}

void require(bool ok, const char* what) {
  if (!ok) input_error("{} must not be NULL", what);
}

// A hadron_output and the storage its pointers point into.
struct OutputBox {
  hadron_output c{};
  std::vector<int32_t> token_ids;
  std::vector<float> logprobs;
  std::vector<int32_t> top_token_ids;
  std::vector<float> top_logprobs;
  std::string text;
};

hadron_finish_reason finish_reason_of(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone:
      return HADRON_FINISH_NONE;
    case FinishReason::kStop:
      return HADRON_FINISH_STOP;
    case FinishReason::kLength:
      return HADRON_FINISH_LENGTH;
    case FinishReason::kAbort:
      return HADRON_FINISH_ABORT;
  }
  return HADRON_FINISH_NONE;
}

std::unique_ptr<OutputBox> box_output(RequestOutput out) {
  auto box = std::make_unique<OutputBox>();
  box->token_ids = std::move(out.token_ids);
  box->text = std::move(out.text);
  const size_t n_top = out.logprobs.empty() ? 0 : out.logprobs.front().top.size();
  for (const Logprobs& lp : out.logprobs) {
    box->logprobs.push_back(lp.chosen.logprob);
    for (size_t k = 0; k < n_top; ++k) {
      const bool has = k < lp.top.size();
      box->top_token_ids.push_back(has ? lp.top[k].token : -1);
      box->top_logprobs.push_back(has ? lp.top[k].logprob : 0.0f);
    }
  }
  hadron_output& c = box->c;
  c.request_id = out.request_id;
  c.index = out.index;
  c.token_ids = box->token_ids.data();
  c.n_tokens = box->token_ids.size();
  c.logprobs = out.logprobs.empty() ? nullptr : box->logprobs.data();
  c.n_top = n_top;
  c.top_token_ids = n_top == 0 ? nullptr : box->top_token_ids.data();
  c.top_logprobs = n_top == 0 ? nullptr : box->top_logprobs.data();
  c.text = box->text.c_str();
  c.text_bytes = box->text.size();
  c.finished = out.finished ? 1 : 0;
  c.finish_reason = finish_reason_of(out.finish_reason);
  c.n_prompt_tokens = out.n_prompt_tokens;
  c.n_output_tokens = out.n_output_tokens;
  c.internal_ = box.get();
  return box;
}

char* copy_string(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

LibraryEngine& engine_of(hadron_engine* engine) {
  require(engine != nullptr, "engine");
  return *engine->impl;
}

}  // namespace
}  // namespace hadron::capi

using namespace hadron::capi;

extern "C" {

const char* hadron_version(void) { return "0.1.0"; }
int hadron_version_major(void) { return HADRON_VERSION_MAJOR; }
int hadron_version_minor(void) { return HADRON_VERSION_MINOR; }
const char* hadron_last_error(void) { return last_error.c_str(); }

hadron_status hadron_engine_create(const char* model_dir, const char* const* keys,
                                   const char* const* values, size_t n_options,
                                   hadron_engine** engine) {
  return guarded([&] {
    require(engine != nullptr, "engine");
    *engine = nullptr;
    std::vector<std::pair<std::string, std::string>> options;
    for (size_t i = 0; i < n_options; ++i) {
      require(keys != nullptr && values != nullptr && keys[i] != nullptr && values[i] != nullptr,
              "an option key or value");
      options.emplace_back(keys[i], values[i]);
    }
    std::error_code error;
    if (model_dir != nullptr && !std::filesystem::is_directory(model_dir, error))
      throw NotFoundError(fmt::format("no model folder {}", model_dir));
    const LibraryOptions parsed = parse_library_options(model_dir ? model_dir : "", options);
    auto handle = std::make_unique<hadron_engine>();
    handle->impl = std::make_unique<LibraryEngine>(parsed);
    *engine = handle.release();
  });
}

void hadron_engine_destroy(hadron_engine* engine) {
  try {
    delete engine;
  } catch (...) {  // a destructor that throws must not cross into C
  }
}

hadron_status hadron_add_text(hadron_engine* engine, const char* prompt, const char* sampling_json,
                              uint64_t* request_id) {
  return guarded([&] {
    require(prompt != nullptr, "prompt");
    require(request_id != nullptr, "request_id");
    LibraryEngine& e = engine_of(engine);
    *request_id = e.add(e.encode(prompt, true), sampling_json ? sampling_json : "");
  });
}

hadron_status hadron_add_tokens(hadron_engine* engine, const int32_t* token_ids, size_t n_tokens,
                                const char* sampling_json, uint64_t* request_id) {
  return guarded([&] {
    require(token_ids != nullptr || n_tokens == 0, "token_ids");
    require(request_id != nullptr, "request_id");
    LibraryEngine& e = engine_of(engine);
    *request_id = e.add({token_ids, token_ids + n_tokens}, sampling_json ? sampling_json : "");
  });
}

hadron_status hadron_add_chat(hadron_engine* engine, const char* messages_json,
                              const char* sampling_json, uint64_t* request_id) {
  return guarded([&] {
    require(messages_json != nullptr, "messages_json");
    require(request_id != nullptr, "request_id");
    LibraryEngine& e = engine_of(engine);
    *request_id =
        e.add(e.encode(e.render_chat(messages_json), false), sampling_json ? sampling_json : "");
  });
}

hadron_status hadron_poll(hadron_engine* engine, uint64_t request_id, int timeout_ms,
                          hadron_output** output) {
  return guarded([&] {
    require(output != nullptr, "output");
    *output = nullptr;
    std::optional<PolledOutput> polled =
        engine_of(engine).poll(request_id, std::chrono::milliseconds(timeout_ms));
    if (!polled) throw TimeoutSignal();
    *output = &box_output(std::move(polled->output)).release()->c;
  });
}

void hadron_output_free(hadron_output* output) {
  if (output != nullptr) delete static_cast<OutputBox*>(output->internal_);
}

hadron_status hadron_run(hadron_engine* engine, uint64_t request_id,
                         hadron_output_callback callback, void* user_data) {
  return guarded([&] {
    require(callback != nullptr, "callback");
    LibraryEngine& e = engine_of(engine);
    while (true) {
      std::optional<PolledOutput> polled = e.poll(request_id, std::chrono::milliseconds(-1));
      if (!polled) continue;
      const std::unique_ptr<OutputBox> box = box_output(std::move(polled->output));
      if (callback(&box->c, user_data) != 0) {
        if (!polled->last) e.abort(request_id);
        return;
      }
      if (polled->last) return;
    }
  });
}

hadron_status hadron_abort(hadron_engine* engine, uint64_t request_id) {
  return guarded([&] { engine_of(engine).abort(request_id); });
}

hadron_status hadron_metrics(hadron_engine* engine, char** json) {
  return guarded([&] {
    require(json != nullptr, "json");
    *json = copy_string(engine_of(engine).metrics().dump());
  });
}

hadron_status hadron_tokenize(hadron_engine* engine, const char* text, int add_special,
                              int32_t** token_ids, size_t* n_tokens) {
  return guarded([&] {
    require(text != nullptr && token_ids != nullptr && n_tokens != nullptr,
            "text, token_ids and n_tokens");
    const std::vector<int32_t> ids = engine_of(engine).encode(text, add_special != 0);
    auto* out = static_cast<int32_t*>(std::malloc(std::max<size_t>(ids.size(), 1) * 4));
    if (out == nullptr) throw std::bad_alloc();
    std::copy(ids.begin(), ids.end(), out);
    *token_ids = out;
    *n_tokens = ids.size();
  });
}

hadron_status hadron_apply_chat_template(hadron_engine* engine, const char* messages_json,
                                         char** text) {
  return guarded([&] {
    require(messages_json != nullptr && text != nullptr, "messages_json and text");
    *text = copy_string(engine_of(engine).render_chat(messages_json));
  });
}

void hadron_tokens_free(int32_t* token_ids) { std::free(token_ids); }
void hadron_string_free(char* text) { std::free(text); }

}  // extern "C"
