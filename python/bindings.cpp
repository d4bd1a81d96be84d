// hadron._hadron: the C API (include/hadron/hadron.h) for Python. The engine's work runs with
// the GIL released; statuses become exceptions (InvalidArgument -> ValueError).
#include <hadron/hadron.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// Statuses other than OK and TIMEOUT, raised as Python exceptions.
struct HadronError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct QueueFull : HadronError {
  using HadronError::HadronError;
};
struct RequestGone : HadronError {
  using HadronError::HadronError;
};

void check(hadron_status status) {
  switch (status) {
    case HADRON_OK:
    case HADRON_ERR_TIMEOUT:
      return;
    case HADRON_ERR_INVALID_ARGUMENT:
      throw py::value_error(hadron_last_error());
    case HADRON_ERR_NOT_FOUND:
      throw RequestGone(hadron_last_error());
    case HADRON_ERR_QUEUE_FULL:
      throw QueueFull(hadron_last_error());
    case HADRON_ERR_ENGINE:
      throw HadronError(hadron_last_error());
  }
  throw HadronError(hadron_last_error());
}

// What one completion produced over one or more outputs, as Python sees it: the tuple
// (index, token_ids, text, finished, finish_reason, logprobs, top), logprobs a list per token
// and top a list per token of (token_id, logprob) pairs, or None.
struct Delta {
  int32_t index = 0;
  std::vector<int32_t> ids;
  std::string text;
  bool finished = false;
  hadron_finish_reason reason = HADRON_FINISH_NONE;
  bool has_logprobs = false;
  std::vector<float> logprobs;
  std::vector<std::vector<std::pair<int32_t, float>>> top;

  void append(const hadron_output& out) {
    index = out.index;
    ids.insert(ids.end(), out.token_ids, out.token_ids + out.n_tokens);
    text.append(out.text, out.text_bytes);
    finished = out.finished != 0;
    reason = out.finish_reason;
    if (out.logprobs == nullptr) return;
    has_logprobs = true;
    for (size_t t = 0; t < out.n_tokens; ++t) {
      logprobs.push_back(out.logprobs[t]);
      top.emplace_back();
      for (size_t k = 0; k < out.n_top; ++k)
        top.back().emplace_back(out.top_token_ids[t * out.n_top + k],
                                out.top_logprobs[t * out.n_top + k]);
    }
  }

  py::tuple to_tuple() const {
    static const char* const kReasons[] = {nullptr, "stop", "length", "abort"};
    const char* name = kReasons[reason];
    return py::make_tuple(index, ids, py::str(text), finished,
                          name ? py::object(py::str(name)) : py::object(py::none()),
                          has_logprobs ? py::cast(logprobs) : py::object(py::none()),
                          has_logprobs ? py::cast(top) : py::object(py::none()));
  }
};

class Engine {
 public:
  Engine(std::optional<std::string> model, const std::map<std::string, std::string>& options) {
    std::vector<const char*> keys, values;
    for (const auto& [key, value] : options) {
      keys.push_back(key.c_str());
      values.push_back(value.c_str());
    }
    hadron_status status;
    {
      py::gil_scoped_release release;
      status = hadron_engine_create(model ? model->c_str() : nullptr, keys.data(), values.data(),
                                    keys.size(), &engine_);
    }
    if (status == HADRON_ERR_NOT_FOUND) throw py::value_error(hadron_last_error());
    check(status);
  }
  ~Engine() { close(); }

  void close() {
    py::gil_scoped_release release;
    hadron_engine_destroy(engine_);
    engine_ = nullptr;
  }

  uint64_t add_tokens(const std::vector<int32_t>& ids, const std::string& sampling_json) {
    uint64_t id = 0;
    hadron_status status;
    {
      py::gil_scoped_release release;
      status = hadron_add_tokens(live(), ids.data(), ids.size(), sampling_json.c_str(), &id);
    }
    check(status);
    return id;
  }

  std::vector<int32_t> tokenize(const std::string& text, bool add_special) {
    int32_t* ids = nullptr;
    size_t n = 0;
    check(hadron_tokenize(live(), text.c_str(), add_special ? 1 : 0, &ids, &n));
    std::vector<int32_t> out(ids, ids + n);
    hadron_tokens_free(ids);
    return out;
  }

  std::string apply_chat_template(const std::string& messages_json) {
    char* text = nullptr;
    check(hadron_apply_chat_template(live(), messages_json.c_str(), &text));
    std::string out(text);
    hadron_string_free(text);
    return out;
  }

  // The request's next output, or None when none came within timeout_ms; RequestGone once
  // every output was returned.
  py::object poll(uint64_t request_id, int timeout_ms) {
    hadron_output* out = nullptr;
    hadron_status status;
    {
      py::gil_scoped_release release;
      status = hadron_poll(live(), request_id, timeout_ms, &out);
    }
    check(status);
    if (out == nullptr) return py::none();
    Delta delta;
    delta.append(*out);
    hadron_output_free(out);
    return delta.to_tuple();
  }

  // Runs the request to its end and returns one tuple per completion (as poll's), gathered
  // without the GIL: a non-streaming caller costs Python nothing per token. Ctrl-C is seen
  // between waits of at most 100 ms.
  py::list collect(uint64_t request_id) {
    std::map<int32_t, Delta> completions;
    while (true) {
      hadron_status status;
      {
        py::gil_scoped_release release;
        hadron_output* out = nullptr;
        status = hadron_poll(live(), request_id, 100, &out);
        if (out != nullptr) completions[out->index].append(*out);
        hadron_output_free(out);
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (status == HADRON_ERR_NOT_FOUND) break;  // every output taken
      check(status);
    }
    py::list out;
    for (const auto& [index, delta] : completions) out.append(delta.to_tuple());
    return out;
  }

  void abort(uint64_t request_id) {
    const hadron_status status = hadron_abort(live(), request_id);
    if (status != HADRON_ERR_NOT_FOUND) check(status);  // already over: nothing to abort
  }

  std::string metrics() {
    char* json = nullptr;
    check(hadron_metrics(live(), &json));
    std::string out(json);
    hadron_string_free(json);
    return out;
  }

 private:
  hadron_engine* live() {
    if (engine_ == nullptr) throw HadronError("the engine is closed");
    return engine_;
  }

  hadron_engine* engine_ = nullptr;
};

}  // namespace

PYBIND11_MODULE(_hadron, m) {
  m.doc() = "hadron's C API for Python (use the hadron package)";
  auto base = py::register_exception<HadronError>(m, "HadronError", PyExc_RuntimeError);
  py::register_exception<QueueFull>(m, "QueueFullError", base.ptr());
  py::register_exception<RequestGone>(m, "RequestGone", base.ptr());
  m.def("version", [] { return std::string(hadron_version()); });
  py::class_<Engine>(m, "Engine")
      .def(py::init<std::optional<std::string>, const std::map<std::string, std::string>&>(),
           py::arg("model"), py::arg("options"))
      .def("close", &Engine::close)
      .def("add_tokens", &Engine::add_tokens)
      .def("tokenize", &Engine::tokenize)
      .def("apply_chat_template", &Engine::apply_chat_template)
      .def("poll", &Engine::poll)
      .def("collect", &Engine::collect)
      .def("abort", &Engine::abort)
      .def("metrics", &Engine::metrics);
}
