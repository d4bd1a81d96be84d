/* hadron's C API: load a model, add requests, stream their tokens and text, abort, read
 * metrics. Plain C (C99), opaque handles, status codes; no C++ type or exception crosses it.
 * Reference and compatibility promise: docs/library.md.
 *
 * Threads: every function may be called from any thread, on any engine, at once, except
 * hadron_engine_destroy, which must be the last call on its engine. The engine runs its steps
 * on a thread of its own from hadron_engine_create to hadron_engine_destroy.
 * Errors: a function returning hadron_status sets, on failure, a message that
 * hadron_last_error() returns on the same thread until its next failing call. */
#ifndef HADRON_HADRON_H_
#define HADRON_HADRON_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HADRON_API __attribute__((visibility("default")))
#else
#define HADRON_API
#endif

/* The version of this header. A library whose major version equals HADRON_VERSION_MAJOR and
 * whose minor version is at least HADRON_VERSION_MINOR serves a program built with it. */
#define HADRON_VERSION_MAJOR 0
#define HADRON_VERSION_MINOR 1
#define HADRON_VERSION_PATCH 0

typedef enum hadron_status {
  HADRON_OK = 0,
  HADRON_ERR_INVALID_ARGUMENT = 1, /* a bad option, sampling value, prompt, JSON, null pointer */
  HADRON_ERR_NOT_FOUND = 2,        /* no such model folder, or request (finished, aborted) */
  HADRON_ERR_QUEUE_FULL = 3,       /* max_queued_requests are unfinished; retry later */
  HADRON_ERR_ENGINE = 4,           /* the engine failed (an internal error); destroy it */
  HADRON_ERR_TIMEOUT = 5           /* hadron_poll: no output within the timeout */
} hadron_status;

typedef enum hadron_finish_reason {
  HADRON_FINISH_NONE = 0, /* still running */
  HADRON_FINISH_STOP = 1, /* an end-of-sequence token, stop token or stop string */
  HADRON_FINISH_LENGTH = 2,
  HADRON_FINISH_ABORT = 3
} hadron_finish_reason;

typedef struct hadron_engine hadron_engine;

/* What one completion of a request produced since the last output: new tokens and text.
 * Owned by the library; released by hadron_output_free. */
typedef struct hadron_output {
  uint64_t request_id;
  int32_t index; /* which of the request's n completions */
  const int32_t* token_ids;
  size_t n_tokens;
  /* With the request's "logprobs": k: per new token, its logprob (n_tokens values) and the
   * top k alternatives (n_tokens * n_top ids and logprobs, row-major). NULL otherwise. */
  const float* logprobs;
  size_t n_top;
  const int32_t* top_token_ids;
  const float* top_logprobs;
  const char* text; /* new text, UTF-8, NUL-terminated (never splits a character) */
  size_t text_bytes;
  int32_t finished; /* 1 when this completion is over */
  hadron_finish_reason finish_reason;
  int64_t n_prompt_tokens;
  int64_t n_output_tokens; /* of this completion so far */
  void* internal_;         /* the library's; do not touch */
} hadron_output;

/* "0.1.0": the library's version (compare with HADRON_VERSION_*). */
HADRON_API const char* hadron_version(void);
HADRON_API int hadron_version_major(void);
HADRON_API int hadron_version_minor(void);

/* The message of this thread's last failed call ("" when none). Valid until that thread's
 * next call into the library. */
HADRON_API const char* hadron_last_error(void);

/* Loads a model folder (config.json, safetensors, tokenizer) into a new engine. model_dir
 * NULL: the shipped models/default. Options are the CLI's engine flags with their values as
 * strings, spelled "max_model_len" or "max-model-len" ("device", "max_num_seqs",
 * "max_num_batched_tokens", "block_size", "kv_cache_memory_bytes", "gpu_memory_utilization",
 * "seed", "load_format", "enforce_eager", ... see `hadron generate --help`), parsed by the same
 * code as the CLI, plus "max_queued_requests" and "verbose" (progress on stderr, "0"/"1").
 * keys and values hold n_options strings each (both may be NULL when n_options is 0). */
HADRON_API hadron_status hadron_engine_create(const char* model_dir, const char* const* keys,
                                              const char* const* values, size_t n_options,
                                              hadron_engine** engine);
/* Aborts every unfinished request and frees the engine. NULL is ignored. */
HADRON_API void hadron_engine_destroy(hadron_engine* engine);

/* Adding a request. sampling_json: a JSON object with vLLM's SamplingParams names ("n",
 * "temperature", "top_p", "top_k", "min_p", "seed", "max_tokens" (default 16), "min_tokens",
 * "stop", "stop_token_ids", "ignore_eos", "logprobs", "prompt_logprobs", "presence_penalty",
 * "frequency_penalty", "repetition_penalty", "logit_bias", "skip_special_tokens"), validated as
 * the HTTP server validates them; NULL or "" for the defaults (the model's
 * generation_config.json, then vLLM's). Unknown names are an error. On success *request_id
 * names the request for hadron_poll, hadron_run and hadron_abort. */

/* A text prompt, tokenized with the model's tokenizer (special tokens added, as vLLM). */
HADRON_API hadron_status hadron_add_text(hadron_engine* engine, const char* prompt,
                                         const char* sampling_json, uint64_t* request_id);
/* A prompt of token ids. */
HADRON_API hadron_status hadron_add_tokens(hadron_engine* engine, const int32_t* token_ids,
                                           size_t n_tokens, const char* sampling_json,
                                           uint64_t* request_id);
/* Chat messages as OpenAI's JSON array ([{"role": "user", "content": "..."}, ...]), rendered
 * with the model's chat template and a generation prompt. */
HADRON_API hadron_status hadron_add_chat(hadron_engine* engine, const char* messages_json,
                                         const char* sampling_json, uint64_t* request_id);

/* Waits up to timeout_ms (negative: without limit) for the request's next output. HADRON_OK
 * with *output set (free it with hadron_output_free); HADRON_ERR_TIMEOUT with *output NULL
 * when none came; HADRON_ERR_NOT_FOUND once every completion's last output was returned (the
 * request is then forgotten) or after hadron_abort. */
HADRON_API hadron_status hadron_poll(hadron_engine* engine, uint64_t request_id, int timeout_ms,
                                     hadron_output** output);
HADRON_API void hadron_output_free(hadron_output* output);

/* Called for each output of a request; return nonzero to abort it. The output is valid
 * during the call only. */
typedef int (*hadron_output_callback)(const hadron_output* output, void* user_data);
/* Runs the request to its end on the calling thread, calling callback for each output. */
HADRON_API hadron_status hadron_run(hadron_engine* engine, uint64_t request_id,
                                    hadron_output_callback callback, void* user_data);

/* Aborts a request: its KV blocks are freed before the engine's next step and it is
 * forgotten. HADRON_ERR_NOT_FOUND when it has finished already or never existed. */
HADRON_API hadron_status hadron_abort(hadron_engine* engine, uint64_t request_id);

/* The engine's counters as a JSON object ("num_requests_running", "num_requests_waiting",
 * "kv_cache_usage", "prompt_tokens", "generation_tokens", "num_preemptions", "num_steps",
 * "prefix_cache_queries", "prefix_cache_hits", "max_model_len", "vocab_size"). Free *json
 * with hadron_string_free. */
HADRON_API hadron_status hadron_metrics(hadron_engine* engine, char** json);

/* Token ids of text with the model's tokenizer (special tokens added when add_special is
 * nonzero); free *token_ids with hadron_tokens_free. */
HADRON_API hadron_status hadron_tokenize(hadron_engine* engine, const char* text, int add_special,
                                         int32_t** token_ids, size_t* n_tokens);
/* The prompt text a chat request renders (messages_json as for hadron_add_chat); free *text
 * with hadron_string_free. Tokenize it without special tokens: the template writes them. */
HADRON_API hadron_status hadron_apply_chat_template(hadron_engine* engine,
                                                    const char* messages_json, char** text);
HADRON_API void hadron_tokens_free(int32_t* token_ids);
HADRON_API void hadron_string_free(char* text);

#ifdef __cplusplus
}
#endif

#endif /* HADRON_HADRON_H_ */
