#!/usr/bin/env bash
# One kernel of a `hadron bench latency` run under Nsight Compute (--set full, with SASS stall
# sampling), summarised: its launch, occupancy, throughput and memory figures from the details
# page, and bench/ncu_stalls.py's ranking of where its warps stall. For the GPU machine, where
# ncu is in /usr/local/cuda/bin; writes the report and CSVs under $OUT (else ./ncu-out).
#
#   bench/ncu_kernel.sh KERNEL_REGEX LAUNCH_SKIP LAUNCH_COUNT [BENCH LATENCY ARGS...]
#     e.g. bench/ncu_kernel.sh attention_decode_kernel 1900 2 --model CONFIG --batch 128 \
#            --input-len 128 --output-len 16 --max-num-batched-tokens 16384
#
# LAUNCH_SKIP counts the matching kernel's launches, graph nodes included: start-up runs every
# decode graph size once eagerly before capturing it (46 sizes up to 256 sequences), so a
# decode-step kernel launched once a layer is first replayed from a graph after about
# 46 x layers launches; add layers x steps to land further into the decode. Each profiled
# launch is replayed ~40 times by ncu (seconds each); the run itself is not timed.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if (($# < 3)); then
  sed -n '2,15p' "$0"
  exit 2
fi
kernel=$1 skip=$2 count=$3
shift 3
hadron=${HADRON_BIN:-$root/build-gpu/hadron}
out=${OUT:-ncu-out}
mkdir -p "$out"
report=$out/ncu-$(echo "$kernel" | tr -c 'A-Za-z0-9_' '_')
ncu --set full --import-source no -k "regex:$kernel" --launch-skip "$skip" --launch-count "$count" \
  -f -o "$report" "$hadron" bench latency --load-format dummy --num-iters 1 --json "$@" \
  >"$report.log" 2>&1
rc=$?
echo "ncu exit status $rc (log: $report.log)"
((rc == 0)) || { tail -20 "$report.log"; exit "$rc"; }
ncu -i "$report.ncu-rep" --page details --csv >"$report-details.csv"
ncu -i "$report.ncu-rep" --page source --csv --print-source sass >"$report-source.csv"
python3 - "$report-details.csv" <<'PY'
import csv, sys
wanted = ("Duration", "Grid Size", "Block Size", "Registers Per Thread",
          "Dynamic Shared Memory Per Block", "Waves Per SM", "Achieved Occupancy",
          "Theoretical Occupancy", "Memory Throughput", "DRAM Throughput", "L2 Hit Rate",
          "Compute (SM) Throughput", "Executed Ipc Active", "SM Frequency")
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 14]
head = rows[0]
i, k, n, u, v = (head.index(x) for x in
                 ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value"))
for r in rows[1:]:
    if r[n] in wanted:
        print(f"  {r[i]:>3s} {r[k].split('(')[0][-48:]:48s} {r[n]:34s} {r[v]} {r[u]}")
PY
python3 "$root/bench/ncu_stalls.py" "$report-source.csv" --top 15
