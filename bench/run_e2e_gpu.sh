#!/usr/bin/env bash
# End-to-end GPU benchmarks of issue 4's targets on the Qwen3-8B config with dummy weights.
# Usage (on the GPU machine, after building into build-gpu):
#   bench/run_e2e_gpu.sh CONFIG_DIR [HADRON FLAGS...]     e.g. --enforce-eager
# Writes one JSON line per measurement to $OUT/e2e${E2E_TAG}.jsonl (or build-gpu/...) and
# prints them. HADRON_BIN overrides the binary (default build-gpu/hadron).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hadron=${HADRON_BIN:-$root/build-gpu/hadron}
model=${1:?config dir of Qwen3-8B}
shift
extra=("$@")
out=${OUT:-$root/build-gpu}/e2e${E2E_TAG:-}.jsonl
: >"$out"
run() {  # run LABEL ARGS...
  local label=$1
  shift
  local line
  line=$("$hadron" bench "$@" "${extra[@]}" --model "$model" --load-format dummy --json \
    2>"$out.$label.log")
  echo "{\"label\": \"$label\", \"result\": ${line:-null}}" | tee -a "$out"
}
run decode_b1 latency --batch 1 --input-len 128 --output-len 128 --num-iters 3
run prefill_2048 latency --batch 1 --input-len 2048 --output-len 2 --num-iters 3
run decode_b128 latency --batch 128 --input-len 128 --output-len 128 --num-iters 2 \
  --max-num-batched-tokens 16384
start=$EPOCHREALTIME
"$hadron" generate "${extra[@]}" --model "$model" --load-format dummy \
  --prompt-ids "1 2 3 4 5 6 7 8" --max-tokens 1 >"$out.coldstart.log" 2>&1
end=$EPOCHREALTIME
echo "{\"label\": \"cold_start_to_first_token\", \"seconds\": $(awk "BEGIN {print $end - $start}")}" \
  | tee -a "$out"
