#!/usr/bin/env bash
# A/B of environment switches in one binary: `hadron bench latency` for every shape under
# every variant, the variants interleaved round by round (so drift and a fresh binary's first
# slow run fall on all of them), then a table of decode tok/s per shape and variant with the
# median over rounds and every run. Each run is its own process, and a process can land in a
# slow mode (docs/performance-notes.md, "Measuring"), hence 4 rounds by default. One JSON line per run (with the card's UUID) goes to
# $OUT/ab.jsonl (else ./ab.jsonl).
#
#   bench/run_ab.sh [--rounds N] [--bin HADRON] [--args "ARGS"] [--timeout S] -v NAME=ENV[,ENV...] [-v ...] SHAPE...
#     SHAPE: CONFIG_DIR:BATCH[:INPUT_LEN]   (input length 128 unless given; output 128)
#     --args: more `bench latency` flags for every run (128 sequences: --max-num-batched-tokens
#     16384, so the prompts' prefill is one step as in docs/benchmarks.md's figures)
#     --timeout: seconds a run may take before it is killed and shown as failed (default 120),
#     so an experiment that hangs the GPU costs one run, not the device call
#     HADRON_AB_BIN=PATH among a variant's ENVs runs that variant with another binary (two
#     builds of one tree, e.g. a change with no switch against the commit before it)
#     e.g. bench/run_ab.sh -v old=HADRON_ATTN_CLUSTER=0 -v new= configs/Qwen__Qwen3-8B:1
# The binary defaults to build-gpu/hadron, else build/hadron; its stderr goes to
# $OUT/ab-<shape>-<variant>-<round>.log.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=4
limit=120
hadron=
extra=()
names=()
envs=()
shapes=()
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --bin) hadron=$2; shift 2 ;;
    --args) read -r -a extra <<<"$2"; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    -v) names+=("${2%%=*}"); envs+=("${2#*=}"); shift 2 ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) shapes+=("$1"); shift ;;
  esac
done
if ((${#names[@]} == 0 || ${#shapes[@]} == 0)); then
  echo "run_ab.sh: give at least one -v NAME=ENV and one CONFIG_DIR:BATCH[:INPUT_LEN]" >&2
  exit 2
fi
if [[ -z $hadron ]]; then
  hadron=$root/build-gpu/hadron
  [[ -x $hadron ]] || hadron=$root/build/hadron
fi
out=${OUT:-.}
jsonl=$out/ab.jsonl
: >"$jsonl"
# The card each run is on: the same binary differs by up to 1.6% from one H100 to another, so
# results from different calls compare only by card.
card=$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null | head -1)

for round in $(seq 1 "$rounds"); do
  for shape in "${shapes[@]}"; do
    IFS=: read -r model batch input <<<"$shape"
    for i in "${!names[@]}"; do
      IFS=, read -r -a env_list <<<"${envs[$i]}"
      bin=$hadron
      for e in "${env_list[@]}"; do [[ $e == HADRON_AB_BIN=* ]] && bin=${e#HADRON_AB_BIN=}; done
      label="$(basename "$model")-b$batch-in${input:-128}"
      log=$out/ab-$label-${names[$i]}-$round.log
      line=$(timeout "$limit" env "${env_list[@]}" "$bin" bench latency --model "$model" \
        --load-format dummy --batch "$batch" --input-len "${input:-128}" --output-len 128 --num-iters 3 --json \
        "${extra[@]}" 2>"$log")
      printf '{"shape": "%s", "variant": "%s", "env": "%s", "round": %d, "card": "%s", "result": %s}\n' \
        "$label" "${names[$i]}" "${envs[$i]}" "$round" "${card:-unknown}" "${line:-null}" | tee -a "$jsonl"
    done
  done
done

python3 - "$jsonl" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    row = json.loads(line)
    value = (row["result"] or {}).get("decode_tok_s")
    runs.setdefault(row["shape"], {}).setdefault(row["variant"], []).append(value)
for shape, variants in runs.items():
    print(shape)
    for name, values in variants.items():
        ok = [v for v in values if v is not None]
        shown = ", ".join("failed" if v is None else f"{v:.1f}" for v in values)
        median = f"{statistics.median(ok):10.1f} tok/s" if ok else "    (no run finished)"
        print(f"  {name:16s} median {median}   runs: {shown}")
PY
