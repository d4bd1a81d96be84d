#!/usr/bin/env bash
# Builds the libFuzzer targets with the `fuzz` preset (clang, ASan + UBSan, build-fuzz/) and
# runs each for SECONDS (default 30) from its seed corpus in tests/fuzz/corpus/<target>/.
# Exits non-zero on any finding: crash, sanitizer report, leak, timeout or uncaught exception.
# New inputs go to build-fuzz/corpus/<target>/, reproducers to build-fuzz/artifacts/<target>/.
#
# usage: scripts/run-fuzzers.sh [SECONDS]     (HADRON_FUZZ_JOBS: build parallelism, default 2)
set -euo pipefail

seconds="${1:-30}"
targets=(fuzz_safetensors_header fuzz_model_config fuzz_chat_template fuzz_tokenizer_json fuzz_tokenizer_encode
         fuzz_gguf_metadata fuzz_server_protocol fuzz_grammar)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]}" --parallel "${HADRON_FUZZ_JOBS:-2}"

failed=()
for target in "${targets[@]}"; do
  work="build-fuzz/corpus/$target"
  artifacts="build-fuzz/artifacts/$target/"
  log="build-fuzz/$target.log"
  mkdir -p "$work" "$artifacts"
  echo "== $target: ${seconds}s"
  if build-fuzz/tests/fuzz/"$target" "$work" "tests/fuzz/corpus/$target" \
      -dict="tests/fuzz/$target.dict" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -artifact_prefix="$artifacts" -print_final_stats=1 >"$log" 2>&1; then
    grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)" "$log" || true
  else
    echo "FINDING in $target (log: $log, reproducer in $artifacts):"
    tail -n 60 "$log"
    failed+=("$target")
  fi
done

if ((${#failed[@]})); then
  echo "fuzzers with findings: ${failed[*]}"
  exit 1
fi
echo "no findings"
