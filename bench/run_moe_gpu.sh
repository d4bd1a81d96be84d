#!/usr/bin/env bash
# MoE on one GPU in one go: builds hadron, cuda_ops_test and moe_ops_bench for sm_90a, runs
# the MoE op tests and the MoE kernel micro-benchmark, then batch-1 decode latency (in 128,
# out 128, dummy weights) of Qwen3-30B-A3B and gpt-oss-20b with CUDA graphs (and eagerly when
# MOE_EAGER=1; with MOE_NSYS=1 and nsys on the machine, a per-kernel summary of 32 decoded
# tokens of each). Each step has a time limit so a slow one cannot starve the next; logs go
# to $OUT (else build-gpu/moe-logs), 8 files at most.
#
#   bench/run_moe_gpu.sh CONFIGS_DIR     e.g. tests/data/configs
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
configs=$(cd "${1:?folder holding Qwen__Qwen3-30B-A3B and openai__gpt-oss-20b}" && pwd)
build=$root/build-gpu
logs=${OUT:-$build/moe-logs}
mkdir -p "$logs"
summary=$logs/summary.txt
[[ -f .deps/env.sh ]] && source .deps/env.sh

source "$root/bench/gpu_steps.sh"

latency() {  # latency LABEL CONFIG [FLAGS...]: one JSON line into moe.jsonl
  local label=$1 model=$configs/$2 start=$SECONDS line
  shift 2
  line=$(timeout 150 "$build/hadron" bench latency --model "$model" --load-format dummy \
    --batch 1 --input-len 128 --output-len 128 --json "$@" 2>"$logs/lat-$label.log")
  local status=$?
  printf '{"label": "%s", "rc": %d, "wall_s": %d, "result": %s}\n' "$label" "$status" \
    $((SECONDS - start)) "${line:-null}" | tee -a "$logs/moe.jsonl" | tee -a "$summary"
}

: >"$summary"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$summary"
step configure build.log 60 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90a || exit 1
# hadron and the op tests build apart, so one's failure does not stop the other.
step build-hadron build.log 300 cmake --build "$build" -j"$(nproc)" --target hadron \
  || grep -E 'error|FAILED' -A5 "$logs/build.log" | head -40 | tee -a "$summary"
if step build-ops-test build.log 150 cmake --build "$build" -j"$(nproc)" --target cuda_ops_test \
  moe_ops_bench; then
  step ops-moe ops.log 120 "$build/tests/ops/cuda_ops_test" --gtest_filter='*Moe*'
  grep -E '^\[  (PASSED|FAILED) |^\[  FAILED  \]|tests ran' "$logs/ops.log" | tee -a "$summary"
  step moe-ops-bench moe-ops-bench.md 120 "$build/src/moe_ops_bench" && \
    cat "$logs/moe-ops-bench.md" | tee -a "$summary"
fi
latency gpt-oss-20b-graphs openai__gpt-oss-20b
latency qwen3-30b-a3b-graphs Qwen__Qwen3-30B-A3B
if [[ ${MOE_EAGER:-0} == 1 ]]; then
  latency qwen3-30b-a3b-eager Qwen__Qwen3-30B-A3B --enforce-eager
  latency gpt-oss-20b-eager openai__gpt-oss-20b --enforce-eager
fi
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
  2>/dev/null | head -n1)
if [[ ${MOE_NSYS:-0} == 1 && -n $nsys ]]; then
  for model in Qwen__Qwen3-30B-A3B openai__gpt-oss-20b; do  # kernels of graph nodes one by one
    timeout 150 "$nsys" profile --trace=cuda --cuda-graph-trace=node --force-overwrite true \
      -o "/tmp/nsys-$model" "$build/hadron" bench latency --model "$configs/$model" \
      --load-format dummy --batch 1 --input-len 128 --output-len 32 >/dev/null 2>&1 &&
      timeout 60 "$nsys" stats --report cuda_gpu_kern_sum --format csv --force-overwrite true \
        -o "/tmp/kern-$model" "/tmp/nsys-$model.nsys-rep" >/dev/null 2>&1
    echo "== $model" >>"$logs/kernels.csv"
    cat /tmp/kern-"$model"*.csv >>"$logs/kernels.csv" 2>/dev/null || echo "nsys failed" >>"$logs/kernels.csv"
  done
  echo "per-kernel summary: kernels.csv" | tee -a "$summary"
fi
