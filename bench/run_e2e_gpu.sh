#!/usr/bin/env bash
# End-to-end GPU benchmarks of issue 4's targets on the Qwen3-8B config with dummy weights.
# Usage (on the GPU machine, after building into build-gpu): bench/run_e2e_gpu.sh CONFIG_DIR
# Writes one JSON line per measurement to $OUT/e2e.jsonl (or build-gpu/e2e.jsonl) and prints them.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hadron=$root/build-gpu/hadron
model=${1:?config dir of Qwen3-8B}
out=${OUT:-$root/build-gpu}/e2e.jsonl
: >"$out"
run() {  # run LABEL ARGS...
  local label=$1
  shift
  local line
  line=$("$hadron" bench "$@" --model "$model" --load-format dummy --json 2>"$out.$label.log")
  echo "{\"label\": \"$label\", \"result\": ${line:-null}}" | tee -a "$out"
}
run decode_b1 latency --batch 1 --input-len 128 --output-len 128 --num-iters 3
run prefill_2048 latency --batch 1 --input-len 2048 --output-len 2 --num-iters 3
run decode_b128 latency --batch 128 --input-len 128 --output-len 128 --num-iters 2 \
  --max-num-batched-tokens 16384
start=$EPOCHREALTIME
"$hadron" generate --model "$model" --load-format dummy --prompt-ids "1 2 3 4 5 6 7 8" \
  --max-tokens 1 >"$out.coldstart.log" 2>&1
end=$EPOCHREALTIME
echo "{\"label\": \"cold_start_to_first_token\", \"seconds\": $(awk "BEGIN {print $end - $start}")}" \
  | tee -a "$out"
