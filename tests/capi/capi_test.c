/* The C API on models/default: greedy output equals `hadron generate`, polling equals the
 * callback, bad input returns error codes, and many requests do not grow the process.
 *
 *   capi_test HADRON_CLI MODEL_DIR */
#define _GNU_SOURCE /* popen, mallinfo2 */
#include <hadron/hadron.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int n_failures = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      ++n_failures;                                                            \
    }                                                                          \
  } while (0)

#define CHECK_OK(call)                                                                  \
  do {                                                                                  \
    hadron_status status_ = (call);                                                     \
    if (status_ != HADRON_OK) {                                                         \
      fprintf(stderr, "%s:%d: %s -> %d: %s\n", __FILE__, __LINE__, #call, (int)status_, \
              hadron_last_error());                                                     \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

/* A growing buffer of text and token ids. */
typedef struct {
  char* text;
  size_t text_bytes;
  int32_t ids[4096];
  size_t n_ids;
  int n_outputs;
  hadron_finish_reason finish_reason;
} Result;

static void append(Result* r, const hadron_output* out) {
  r->text = realloc(r->text, r->text_bytes + out->text_bytes + 1);
  memcpy(r->text + r->text_bytes, out->text, out->text_bytes);
  r->text_bytes += out->text_bytes;
  r->text[r->text_bytes] = '\0';
  for (size_t i = 0; i < out->n_tokens && r->n_ids < 4096; ++i)
    r->ids[r->n_ids++] = out->token_ids[i];
  ++r->n_outputs;
  if (out->finished) r->finish_reason = out->finish_reason;
}

static int collect(const hadron_output* out, void* user_data) {
  append((Result*)user_data, out);
  return 0;
}

static Result run_callback(hadron_engine* engine, uint64_t id) {
  Result r = {0};
  CHECK_OK(hadron_run(engine, id, collect, &r));
  return r;
}

static Result run_polling(hadron_engine* engine, uint64_t id) {
  Result r = {0};
  for (;;) {
    hadron_output* out = NULL;
    hadron_status status = hadron_poll(engine, id, 5, &out);
    if (status == HADRON_ERR_TIMEOUT) continue;
    if (status == HADRON_ERR_NOT_FOUND) break; /* every output taken */
    CHECK(status == HADRON_OK, "poll: %s", hadron_last_error());
    if (status != HADRON_OK) break;
    append(&r, out);
    hadron_output_free(out);
  }
  return r;
}

/* stdout of a command, without its final newline. */
static char* run_command(const char* command) {
  FILE* pipe = popen(command, "r");
  if (pipe == NULL) return NULL;
  size_t size = 0, cap = 1 << 16;
  char* out = malloc(cap);
  size_t n;
  while ((n = fread(out + size, 1, cap - size - 1, pipe)) > 0) size += n;
  out[size] = '\0';
  if (pclose(pipe) != 0) {
    free(out);
    return NULL;
  }
  if (size > 0 && out[size - 1] == '\n') out[size - 1] = '\0';
  return out;
}

static const char* kPrompt = "And God said";
static const char* kChat = "Who was the son of Abraham?";

static void test_greedy_equals_cli(hadron_engine* engine, const char* cli, const char* model) {
  char command[1024];
  snprintf(command, sizeof command,
           "%s generate --model %s --device cpu --prompt '%s' --max-tokens 40 --temperature 0 "
           "2>/dev/null",
           cli, model, kPrompt);
  char* expected = run_command(command);
  CHECK(expected != NULL && expected[0] != '\0', "the CLI gave no output: %s", command);
  uint64_t id = 0;
  CHECK_OK(hadron_add_text(engine, kPrompt, "{\"temperature\": 0, \"max_tokens\": 40}", &id));
  Result got = run_callback(engine, id);
  if (expected)
    CHECK(strcmp(got.text, expected) == 0, "C API '%s' != CLI '%s'", got.text, expected);
  CHECK(got.n_ids > 0, "no tokens");

  snprintf(command, sizeof command,
           "%s generate --model %s --device cpu --chat '%s' --max-tokens 24 --temperature 0 "
           "2>/dev/null",
           cli, model, kChat);
  char* expected_chat = run_command(command);
  char messages[256];
  snprintf(messages, sizeof messages, "[{\"role\": \"user\", \"content\": \"%s\"}]", kChat);
  CHECK_OK(hadron_add_chat(engine, messages, "{\"temperature\": 0, \"max_tokens\": 24}", &id));
  Result chat = run_callback(engine, id);
  CHECK(expected_chat != NULL && strcmp(chat.text, expected_chat) == 0,
        "chat: C API '%s' != CLI '%s'", chat.text, expected_chat ? expected_chat : "(none)");
  printf("greedy: '%s'\n", got.text);
  free(expected);
  free(expected_chat);
  free(got.text);
  free(chat.text);
}

/* Polling, the callback and a batch of four at once give the same tokens and text, greedy and
 * seeded. */
static void test_streaming_equals_callback(hadron_engine* engine) {
  const char* samplings[] = {"{\"temperature\": 0, \"max_tokens\": 48}",
                             "{\"temperature\": 0.9, \"top_p\": 0.9, \"seed\": 7, "
                             "\"max_tokens\": 48}"};
  for (int s = 0; s < 2; ++s) {
    uint64_t id = 0;
    CHECK_OK(hadron_add_text(engine, kPrompt, samplings[s], &id));
    Result callback = run_callback(engine, id);
    CHECK_OK(hadron_add_text(engine, kPrompt, samplings[s], &id));
    Result polled = run_polling(engine, id);
    CHECK(strcmp(callback.text, polled.text) == 0, "'%s' != '%s'", callback.text, polled.text);
    CHECK(callback.n_ids == polled.n_ids &&
              memcmp(callback.ids, polled.ids, callback.n_ids * sizeof(int32_t)) == 0,
          "token ids differ (%zu vs %zu)", callback.n_ids, polled.n_ids);
    CHECK(polled.n_outputs > 1, "one output only: nothing streamed");
    CHECK(callback.finish_reason == HADRON_FINISH_LENGTH ||
              callback.finish_reason == HADRON_FINISH_STOP,
          "finish reason %d", (int)callback.finish_reason);
    /* Four at once, read in turn after they all ran. */
    uint64_t ids[4];
    for (int i = 0; i < 4; ++i) CHECK_OK(hadron_add_text(engine, kPrompt, samplings[s], &ids[i]));
    for (int i = 0; i < 4; ++i) {
      Result batched = run_polling(engine, ids[i]);
      CHECK(strcmp(batched.text, callback.text) == 0, "batched '%s' != alone '%s'", batched.text,
            callback.text);
      free(batched.text);
    }
    /* The same ids through hadron_add_tokens. */
    CHECK_OK(hadron_add_tokens(engine, callback.ids, callback.n_ids, samplings[0], &id));
    Result from_ids = run_callback(engine, id);
    CHECK(from_ids.n_ids > 0, "token prompt produced nothing");
    free(from_ids.text);
    free(callback.text);
    free(polled.text);
  }
}

static void test_logprobs_and_abort(hadron_engine* engine) {
  uint64_t id = 0;
  CHECK_OK(hadron_add_text(engine, kPrompt,
                           "{\"temperature\": 0, \"max_tokens\": 4, \"logprobs\": 3}", &id));
  hadron_output* out = NULL;
  while (hadron_poll(engine, id, -1, &out) == HADRON_OK) {
    if (out->n_tokens > 0) {
      CHECK(out->logprobs != NULL && out->n_top == 3, "logprobs missing");
      if (out->logprobs != NULL && out->n_top == 3)
        CHECK(out->top_token_ids[0] == out->token_ids[0] && out->logprobs[0] <= 0,
              "greedy token %d is not the top one %d", out->token_ids[0], out->top_token_ids[0]);
    }
    hadron_output_free(out);
  }
  CHECK_OK(hadron_add_text(engine, kPrompt, "{\"max_tokens\": 900, \"ignore_eos\": true}", &id));
  CHECK_OK(hadron_poll(engine, id, -1, &out));
  hadron_output_free(out);
  CHECK_OK(hadron_abort(engine, id));
  CHECK(hadron_poll(engine, id, 0, &out) == HADRON_ERR_NOT_FOUND, "aborted request still there");
  CHECK(hadron_abort(engine, id) == HADRON_ERR_NOT_FOUND, "aborted twice");
}

static void expect_status(hadron_status got, hadron_status expected, const char* what) {
  CHECK(got == expected, "%s: status %d, expected %d (%s)", what, (int)got, (int)expected,
        hadron_last_error());
  if (got != HADRON_OK) CHECK(hadron_last_error()[0] != '\0', "%s: no message", what);
}

static void test_bad_input(hadron_engine* engine) {
  hadron_engine* other = NULL;
  expect_status(hadron_engine_create("/no/such/model", NULL, NULL, 0, &other), HADRON_ERR_NOT_FOUND,
                "unknown model folder");
  CHECK(other == NULL, "engine set on failure");
  const char* bad_keys[][1] = {{"max_model_len"}, {"no_such_option"}, {"device"}, {"block_size"}};
  const char* bad_values[][1] = {{"many"}, {"1"}, {"tpu"}, {"0"}};
  for (int i = 0; i < 4; ++i)
    expect_status(hadron_engine_create(NULL, bad_keys[i], bad_values[i], 1, &other),
                  HADRON_ERR_INVALID_ARGUMENT, bad_keys[i][0]);
  expect_status(hadron_engine_create(NULL, NULL, NULL, 1, &other), HADRON_ERR_INVALID_ARGUMENT,
                "NULL options");

  const char* bad_sampling[] = {"{\"temperature\": -1}",
                                "{\"top_p\": 2}",
                                "{\"top_p\": 0}",
                                "{\"top_k\": -5}",
                                "{\"min_p\": 1.5}",
                                "{\"n\": 0}",
                                "{\"max_tokens\": 0}",
                                "{\"max_tokens\": 100000}",
                                "{\"temperature\": \"hot\"}",
                                "{\"stop\": 3}",
                                "{\"logprobs\": 99}",
                                "{\"repetition_penalty\": 0}",
                                "{\"no_such_field\": 1}",
                                "{bad json",
                                "[1, 2]",
                                "nul",
                                "{\"stop_token_ids\": [-1]}",
                                "{\"seed\": 1.5}"};
  uint64_t id = 0;
  for (size_t i = 0; i < sizeof bad_sampling / sizeof *bad_sampling; ++i)
    expect_status(hadron_add_text(engine, kPrompt, bad_sampling[i], &id),
                  HADRON_ERR_INVALID_ARGUMENT, bad_sampling[i]);
  const char* bad_messages[] = {"not json", "{\"role\": \"user\"}", "[]",
                                "[{\"role\": \"wizard\", \"content\": \"hi\"}]",
                                "[{\"role\": \"user\", \"content\": 7}]"};
  for (size_t i = 0; i < sizeof bad_messages / sizeof *bad_messages; ++i)
    expect_status(hadron_add_chat(engine, bad_messages[i], NULL, &id), HADRON_ERR_INVALID_ARGUMENT,
                  bad_messages[i]);
  const int32_t bad_ids[] = {1, -3, 2};
  expect_status(hadron_add_tokens(engine, bad_ids, 3, NULL, &id), HADRON_ERR_INVALID_ARGUMENT,
                "negative token id");
  const int32_t huge_id[] = {1 << 30};
  expect_status(hadron_add_tokens(engine, huge_id, 1, NULL, &id), HADRON_ERR_INVALID_ARGUMENT,
                "token id past the vocabulary");
  expect_status(hadron_add_tokens(engine, bad_ids, 0, NULL, &id), HADRON_ERR_INVALID_ARGUMENT,
                "empty prompt");
  expect_status(hadron_add_text(engine, NULL, NULL, &id), HADRON_ERR_INVALID_ARGUMENT, "NULL text");
  expect_status(hadron_add_text(NULL, kPrompt, NULL, &id), HADRON_ERR_INVALID_ARGUMENT,
                "NULL engine");
  hadron_output* out = NULL;
  expect_status(hadron_poll(engine, 987654321, 0, &out), HADRON_ERR_NOT_FOUND, "unknown request");
  expect_status(hadron_run(engine, 987654321, collect, NULL), HADRON_ERR_NOT_FOUND,
                "run of an unknown request");
  hadron_engine_destroy(NULL);
}

/* Bytes the process's malloc has handed out and not had back (glibc). */
static long heap_bytes(void) {
  struct mallinfo2 info = mallinfo2();
  return (long)(info.uordblks + info.hblkhd);
}

static long rss_kb(void) {
  FILE* f = fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (f == NULL) return -1;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  fclose(f);
  return resident * 4; /* 4 KiB pages */
}

/* Requests in a loop, good and bad, after a warm-up: resident memory stays flat. The engine
 * has a KV pool of a few blocks, which the warm-up touches entirely (a large pool's pages are
 * faulted in as the prefix cache cycles through its blocks, which is no leak). */
static void test_no_leak(const char* model) {
  const char* keys[] = {"device", "max_model_len", "max_num_seqs"};
  const char* values[] = {"cpu", "64", "1"};
  hadron_engine* engine = NULL;
  CHECK_OK(hadron_engine_create(model, keys, values, 3, &engine));
  const int n_warmup = 100, n_measured = 400;
  long rss_after_warmup = 0, heap_after_warmup = 0;
  for (int i = 0; i < n_warmup + n_measured; ++i) {
    if (i == n_warmup) {
      rss_after_warmup = rss_kb();
      heap_after_warmup = heap_bytes();
    }
    uint64_t id = 0;
    char sampling[96];
    snprintf(sampling, sizeof sampling, "{\"temperature\": 0.8, \"seed\": %d, \"max_tokens\": 6}",
             i);
    CHECK_OK(hadron_add_text(engine, kPrompt, sampling, &id));
    Result r = i % 2 ? run_callback(engine, id) : run_polling(engine, id);
    free(r.text);
    hadron_add_text(engine, kPrompt, "{\"top_p\": 2}", &id); /* an error each turn */
    char* metrics = NULL;
    CHECK_OK(hadron_metrics(engine, &metrics));
    hadron_string_free(metrics);
  }
  const long rss_growth = rss_kb() - rss_after_warmup;
  const long heap_growth = heap_bytes() - heap_after_warmup;
  printf(
      "after %d warm-up requests: rss %ld kB, heap %ld kB; growth over %d more: rss %ld kB, "
      "heap %ld bytes\n",
      n_warmup, rss_after_warmup, heap_after_warmup / 1024, n_measured, rss_growth, heap_growth);
  CHECK(rss_growth < 512, "resident memory grew by %ld kB over %d requests", rss_growth,
        n_measured);
  /* 400 requests leaking 40 bytes each would pass; any object of a request would not. */
  CHECK(heap_growth < 16384, "the heap grew by %ld bytes over %d requests", heap_growth,
        n_measured);
  /* Destroyed with a request running and one never read: it ends them. */
  uint64_t running = 0, unread = 0;
  CHECK_OK(
      hadron_add_text(engine, kPrompt, "{\"max_tokens\": 60, \"ignore_eos\": true}", &running));
  CHECK_OK(hadron_add_text(engine, kPrompt, NULL, &unread));
  hadron_output* out = NULL;
  CHECK_OK(hadron_poll(engine, running, -1, &out));
  hadron_output_free(out);
  hadron_engine_destroy(engine);
}

/* The metrics once the loop has counted its last step (it updates them after handing out a
 * step's outputs). */
static int wait_until_idle(hadron_engine* engine) {
  for (int i = 0; i < 200; ++i) {
    char* metrics = NULL;
    CHECK_OK(hadron_metrics(engine, &metrics));
    const int idle = strstr(metrics, "\"num_requests_running\":0") != NULL;
    if (idle || i == 199) printf("metrics: %s\n", metrics);
    hadron_string_free(metrics);
    if (idle) return 1;
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: capi_test HADRON_CLI MODEL_DIR\n");
    return 2;
  }
  CHECK(strcmp(hadron_version(), "0.1.0") == 0 && hadron_version_major() == HADRON_VERSION_MAJOR &&
            hadron_version_minor() >= HADRON_VERSION_MINOR,
        "version %s", hadron_version());
  const char* keys[] = {"device", "max_model_len", "max-num-seqs"};
  const char* values[] = {"cpu", "1024", "8"};
  hadron_engine* engine = NULL;
  CHECK_OK(hadron_engine_create(argv[2], keys, values, 3, &engine));
  test_greedy_equals_cli(engine, argv[1], argv[2]);
  test_streaming_equals_callback(engine);
  test_logprobs_and_abort(engine);
  test_bad_input(engine);
  CHECK(wait_until_idle(engine), "requests still running");
  hadron_engine_destroy(engine);
  test_no_leak(argv[2]);
  if (n_failures)
    fprintf(stderr, "%d checks failed\n", n_failures);
  else
    printf("all checks passed\n");
  return n_failures ? 1 : 0;
}
