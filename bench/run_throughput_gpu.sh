#!/usr/bin/env bash
# Issue 5's offline throughput shapes on one GPU in one go: builds hadron for sm_90a, then
# `hadron bench throughput` (1000 prompts, dummy weights) at in/out 128/128 and 1000/1000,
# each with the default scheduler limits and with every extra flag set given as an argument
# (one quoted string per set). Logs and one JSON line per run go to $OUT (else
# build-gpu/throughput-logs). SHAPES="128x128 1000x1000" (the default) picks the shapes; BUILD
# the build folder (default build-gpu; built when it holds no hadron).
#
#   bench/run_throughput_gpu.sh CONFIG_DIR ["--max-num-seqs 512 --max-num-batched-tokens 16384" ...]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
model=$(cd "${1:?Qwen3-8B config folder}" && pwd)
shift
build=${BUILD:-$root/build-gpu}
logs=${OUT:-$build/throughput-logs}
mkdir -p "$logs"
[[ -f .deps/env.sh ]] && source .deps/env.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
if [[ ! -x $build/hadron ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
    >"$logs/build.log" 2>&1 || exit 1
  cmake --build "$build" -j"$(nproc)" --target hadron >>"$logs/build.log" 2>&1 \
    || { tail -30 "$logs/build.log"; exit 1; }
fi
for shape in ${SHAPES:-128x128 1000x1000}; do
  in=${shape%x*} out=${shape#*x}
  for flags in "" "$@"; do
    # shellcheck disable=SC2086  # each flag set is split into words on purpose
    line=$(timeout 300 "$build/hadron" bench throughput --model "$model" --load-format dummy \
      --num-prompts 1000 --input-len "$in" --output-len "$out" --json $flags \
      2>>"$logs/throughput.log")
    echo "{\"input_len\": $in, \"output_len\": $out, \"flags\": \"$flags\", \"result\": ${line:-null}}" \
      | tee -a "$logs/throughput.jsonl"
  done
done
