#!/usr/bin/env bash
# Dense decode on one GPU in one go: builds hadron and the GPU tests for sm_90a, runs the op
# and model tests, the per-kernel bench, then issue 4's end-to-end figures with programmatic
# dependent launch on and off (HADRON_PDL=0: same binary) and the 128/128 throughput run.
# Each step has a time limit; logs go to $OUT (else build-gpu/decode-logs), 8 files at most.
#
#   bench/run_decode_gpu.sh CONFIG_DIR      e.g. tests/data/configs/Qwen__Qwen3-8B
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
model=$(cd "${1:?Qwen3-8B config folder}" && pwd)
build=${BUILD:-$root/build-gpu}
logs=${OUT:-$build/decode-logs}
mkdir -p "$logs"
summary=$logs/summary.txt
[[ -f .deps/env.sh ]] && source .deps/env.sh

source "$root/bench/gpu_steps.sh"

: >"$summary"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$summary"
step configure build.log 60 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90a || exit 1
step build build.log 420 cmake --build "$build" -j"$(nproc)" --target hadron cuda_ops_test \
  cuda_ops_bench hadron_gpu_model_tests \
  || { grep -E 'error|FAILED' -A5 "$logs/build.log" | head -40 | tee -a "$summary"; exit 1; }
step ops-test tests.log 200 "$build/tests/ops/cuda_ops_test"
step model-test tests.log 200 "$build/tests/models/hadron_gpu_model_tests"
grep -E '^\[  (PASSED|FAILED) |^\[  FAILED  \]' "$logs/tests.log" | tee -a "$summary"
step ops-bench bench.log 120 "$build/src/cuda_ops_bench" --markdown "$logs/ops-bench.md"
tail -4 "$logs/ops-bench.md" | tee -a "$summary"
for pdl in 1 0; do
  HADRON_PDL=$pdl OUT=$logs E2E_TAG=-pdl$pdl HADRON_BIN=$build/hadron \
    step "e2e-pdl$pdl" bench.log 240 bench/run_e2e_gpu.sh "$model"
done
cat "$logs"/e2e-pdl*.jsonl >>"$summary"
rm -f "$logs"/e2e-pdl*.jsonl.*.log
for pdl in 1 0; do
  HADRON_PDL=$pdl step "throughput-128-pdl$pdl" throughput.log 150 "$build/hadron" bench \
    throughput --model "$model" --load-format dummy --num-prompts 1000 --input-len 128 \
    --output-len 128 --json
  tail -1 "$logs/throughput.log" | tee -a "$summary"
done
