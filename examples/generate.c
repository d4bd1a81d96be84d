/* Streams a completion of a prompt through hadron's C API.
 *
 *   build/examples/hadron_c_generate [PROMPT [MAX_TOKENS [MODEL_DIR]]]
 *
 * Greedy decoding; the text is printed as it comes, then the engine's metrics. */
#include <hadron/hadron.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int print_output(const hadron_output* output, void* user_data) {
  (void)user_data;
  fwrite(output->text, 1, output->text_bytes, stdout);
  fflush(stdout);
  return 0; /* nonzero would abort the request */
}

int main(int argc, char** argv) {
  const char* prompt = argc > 1 ? argv[1] : "And God said";
  const char* max_tokens = argc > 2 ? argv[2] : "32";
  const char* model_dir = argc > 3 ? argv[3] : NULL; /* NULL: models/default */
  if (hadron_version_major() != HADRON_VERSION_MAJOR) {
    fprintf(stderr, "libhadron %s does not match this program's header\n", hadron_version());
    return 1;
  }
  const char* keys[] = {"max_model_len", "device"};
  const char* values[] = {"512", "cpu"};
  hadron_engine* engine = NULL;
  if (hadron_engine_create(model_dir, keys, values, 2, &engine) != HADRON_OK) {
    fprintf(stderr, "error: %s\n", hadron_last_error());
    return 1;
  }
  char sampling[128];
  snprintf(sampling, sizeof sampling, "{\"temperature\": 0, \"max_tokens\": %s}", max_tokens);
  uint64_t request_id = 0;
  hadron_status status = hadron_add_text(engine, prompt, sampling, &request_id);
  if (status == HADRON_OK) status = hadron_run(engine, request_id, print_output, NULL);
  if (status != HADRON_OK) {
    fprintf(stderr, "error: %s\n", hadron_last_error());
    hadron_engine_destroy(engine);
    return 1;
  }
  char* metrics = NULL;
  if (hadron_metrics(engine, &metrics) == HADRON_OK) {
    fprintf(stderr, "\n%s\n", metrics);
    hadron_string_free(metrics);
  }
  hadron_engine_destroy(engine);
  return 0;
}
