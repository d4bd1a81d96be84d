#!/usr/bin/env bash
# Issue 6's serving targets on a GPU with the Qwen3-8B config and dummy weights:
#  1. offline engine vs. the HTTP server at concurrency 64 (input 1000, output 1000);
#  2. 1,000 concurrent streaming connections held for minutes: every request completes, no 5xx.
# Usage (GPU machine, after building build-gpu/hadron): bench/run_serve_gpu.sh CONFIG_DIR
# Writes JSON lines to $OUT/serve.jsonl (or build-gpu/serve.jsonl) and the server log beside.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hadron=${HADRON_BIN:-$root/build-gpu/hadron}
model=${1:?config dir of Qwen3-8B}
prompts=${SERVE_PROMPTS:-128}
out_dir=${OUT:-$root/build-gpu}
out=$out_dir/serve.jsonl
: >"$out"
record() { echo "{\"label\": \"$1\", \"result\": ${2:-null}}" | tee -a "$out"; }

record offline_c64 "$("$hadron" bench throughput --model "$model" --load-format dummy --json \
  --num-prompts "$prompts" --input-len 1000 --output-len 1000 --max-num-seqs 64 \
  2>"$out_dir/offline_c64.log")"

"$hadron" serve --model "$model" --load-format dummy --port 8000 --served-model-name qwen3-8b \
  >"$out_dir/serve.log" 2>&1 &
server=$!
until curl -sf localhost:8000/health >/dev/null; do
  kill -0 $server 2>/dev/null || { tail -20 "$out_dir/serve.log"; exit 1; }
  sleep 0.5
done
record serve_c64 "$("$hadron" bench serve --url http://127.0.0.1:8000 --json \
  --num-prompts "$prompts" --max-concurrency 64 --input-len 1000 --output-len 1000)"
if [[ ${LONG_OUTPUT:-2000} != 0 ]]; then  # LONG_OUTPUT=0 skips the 1000-connection run
  record serve_1000_connections "$("$hadron" bench serve --url http://127.0.0.1:8000 --json \
    --num-prompts 1000 --max-concurrency 1000 --input-len 128 --output-len ${LONG_OUTPUT:-2000})"
fi
curl -s localhost:8000/metrics | grep -E '^hadron_(http_requests_total|requests_total)' \
  | tee "$out_dir/serve_metrics.txt"
kill -TERM $server
wait $server
echo "server exit status $?" | tee -a "$out_dir/serve.log"
