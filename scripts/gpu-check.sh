#!/usr/bin/env bash
# On a GPU machine without network: configure with the unpacked Debian packages in .deps/
# (scripts/offline-deps.sh; unpacked from .deps.tar.xz when only that was carried), build for sm_90a with ninja on all cores, run the gpu-labelled
# tests, then the kernel benchmark; prints a short table last. Full logs go to $OUT when set
# (else build-gpu/logs).
#
#   scripts/gpu-check.sh [--all]     --all builds every target, not only the GPU ones
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=$root/build-gpu
logs=${OUT:-$build/logs}
mkdir -p "$logs"
targets=(--target cuda_ops_test sampling_reference_test cuda_ops_bench)
[[ ${1:-} == --all ]] && targets=()

[[ ! -f .deps/env.sh && -f .deps.tar.xz ]] && tar -xJf .deps.tar.xz
if [[ -f .deps/env.sh ]]; then
  source .deps/env.sh
else
  echo "no .deps/ (run scripts/offline-deps.sh where the Debian registry is reachable)" >&2
fi

step() {  # step NAME LOG COMMAND...: runs, keeps the log, reports the status
  local name=$1 log=$2 start=$SECONDS
  shift 2
  "$@" >"$logs/$log" 2>&1
  local status=$?
  printf '%-10s %-4s %4ds  (%s)\n' "$name" "$([[ $status == 0 ]] && echo ok || echo FAIL)" \
    $((SECONDS - start)) "$logs/$log" | tee -a "$logs/summary.txt"
  return $status
}

: >"$logs/summary.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
  | tee "$logs/gpu.txt"
git log -1 --format='commit %h %s' 2>/dev/null | tee -a "$logs/summary.txt"
step configure configure.log cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90a || { tail -30 "$logs/configure.log"; exit 1; }
step build build.log cmake --build "$build" -j"$(nproc)" "${targets[@]}" \
  || { grep -E 'error|FAILED' -A5 "$logs/build.log" | head -60; exit 1; }
step test-gpu ctest-gpu.log ctest --test-dir "$build" -L gpu --output-on-failure -j1
test_status=$?
step test-ref ctest-sampling-ref.log ctest --test-dir "$build" -R SamplingReference \
  --output-on-failure
step bench bench.log "$build/src/cuda_ops_bench" --markdown "$logs/bench.md"
bench_status=$?

echo
grep -E 'tests passed|FAILED|Failed|\*\*\*' "$logs/ctest-gpu.log" | head -40
[[ $bench_status == 0 ]] && cat "$logs/bench.md" | grep -v '^|---' | sed 's/^| //; s/ |$//'
exit $((test_status || bench_status))
