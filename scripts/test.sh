#!/usr/bin/env bash
# The test command: set-up, the full build (CUDA compile-only without a GPU), every CPU test,
# the end-to-end tests, and a short libFuzzer run of every fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

scripts/setup.sh --all

# npm dependencies of the reference-comparison tests (lock files committed).
for dir in tests/*/; do
  if [ -f "$dir/package-lock.json" ]; then
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
  fi
done

labels=(-LE gpu)
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  labels=()  # a GPU is present: run the gpu tests too
fi
ctest --test-dir build "${labels[@]}" --output-on-failure -j "$(nproc)" --timeout 900

if [ -x scripts/run-fuzzers.sh ]; then
  scripts/run-fuzzers.sh "${HADRON_FUZZ_SECONDS:-20}"
fi
echo "test.sh: all passed in $((SECONDS - start)) s"
