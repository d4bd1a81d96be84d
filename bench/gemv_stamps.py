#!/usr/bin/env python3
"""Summarise the batch-1 GEMV stamps of `git show 83ed126:bench/results/s31-gemv-stamps.patch`.

  HADRON_EXP_GEMV_STAMPS=stamps.bin hadron bench latency ... --batch 1
  bench/gemv_stamps.py stamps.bin [--skip-steps N]

Each record (8 uint64): the weight pointer, %globaltimer at the block's start and end (ns),
then clock64 at the block's start, pdl_wait's return, the prologue's end, the arrival of its
first weights and its end. Sampled blocks of every batch-1 GEMV launch. Launches are grouped
per weight, a step is the launches up to and including an LM-head launch (the weight whose
blocks run longest) in which no weight repeats (so the start-up timing's repeated launches of
one weight are dropped), and each launch is named by its place in the step: four a layer (qkv,
o_proj, gate_up, down for a dense model; MoE layers order differently) and the LM head last.
The patch's buffer (1,048,576 records) fills within a 128-token Qwen3-8B run, start-up
included: shorten the run (--output-len 32) or raise kStampCapacity. Per role, the medians over
layers and steps (us):
  wait       the block's start to pdl_wait's return (how early PDL launched it)
  prologue   pdl_wait's return to x staged (the memory streams only the first step meanwhile)
  first      x staged to the first step's weights there (0 if they came during the prologue)
  stream     the first weights to the block's end
  spread     the launch's last block end minus its median block end (the tail)
  gap        this launch's median wait return minus the previous GEMV launch's last block end
             (the kernels between them included: attention and rope before o_proj)
"""
import argparse
import statistics
import struct
import sys
from collections import defaultdict

WORDS = 8


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--skip-steps", type=int, default=3)
    args = parser.parse_args()
    data = open(args.path, "rb").read()
    n = len(data) // (8 * WORDS)
    records = [struct.unpack_from("<8Q", data, i * 8 * WORDS) for i in range(n)]
    if not records:
        sys.exit("no records")
    # SM cycles per ns, from blocks long enough for the globaltimer's granularity not to matter.
    rates = [(r[7] - r[3]) / (r[2] - r[1]) for r in records if r[2] - r[1] > 5000]
    ghz = statistics.median(rates) if rates else 1.98
    print(f"{n} records, SM clock {ghz:.3f} GHz (median over {len(rates)} blocks)")

    by_weight = defaultdict(list)
    for r in records:
        by_weight[r[0]].append(r)
    launches = []  # (weight, records)
    for w, rs in by_weight.items():
        rs.sort(key=lambda r: r[1])
        group = [rs[0]]
        for r in rs[1:]:
            if r[1] - group[0][1] > 200_000:  # a launch's blocks start within 0.2 ms
                launches.append((w, group))
                group = []
            group.append(r)
        launches.append((w, group))
    launches.sort(key=lambda item: min(r[1] for r in item[1]))

    # Steps: the launches between two LM-head launches (the weight whose blocks run longest),
    # kept where every weight appears once and the count is the most common one, which drops
    # the start-up timing's repeated launches of one weight. Roles by place in the step.
    def duration(item):
        return statistics.median(r[2] - r[1] for r in item[1])

    by_weight_launches = defaultdict(list)
    for item in launches:
        by_weight_launches[item[0]].append(duration(item))
    lm_head = max(by_weight_launches, key=lambda w: statistics.median(by_weight_launches[w]))
    segments, current = [], []
    for item in launches:
        if item[0] == lm_head:
            segments.append(current + [item])
            current = []
        else:
            current.append(item)
    distinct = [seg for seg in segments if len({w for w, _ in seg}) == len(seg) > 1]
    if not distinct:
        sys.exit("no decode steps found (a step: distinct GEMV weights ending with the LM head)")
    per_step = statistics.mode(len(seg) for seg in distinct)
    steps = [seg for seg in distinct if len(seg) == per_step]
    print(f"{per_step} GEMV launches a step; {len(steps)} steps recorded "
          f"({len(segments) - len(steps)} other segments dropped)")
    layer_roles = ("qkv", "o_proj", "gate_up", "down")

    stats = defaultdict(lambda: defaultdict(list))
    for step, seg in enumerate(steps):
        if step < args.skip_steps:
            continue
        previous_end = None
        for place, (w, rs) in enumerate(seg):
            role = "lm_head" if place == per_step - 1 else layer_roles[place % 4]
            wait_return = [r[1] + (r[4] - r[3]) / ghz for r in rs]
            ends = [r[2] for r in rs]
            s = stats[role]
            s["wait"].append(statistics.median((r[4] - r[3]) / ghz / 1000 for r in rs))
            s["prologue"].append(statistics.median((r[5] - r[4]) / ghz / 1000 for r in rs))
            s["first"].append(statistics.median((r[6] - r[5]) / ghz / 1000 for r in rs))
            s["stream"].append(statistics.median((r[7] - r[6]) / ghz / 1000 for r in rs))
            s["spread"].append((max(ends) - statistics.median(ends)) / 1000)
            if previous_end is not None:
                s["gap"].append((statistics.median(wait_return) - previous_end) / 1000)
            previous_end = max(ends)

    names = ("wait", "prologue", "first", "stream", "spread", "gap")
    print(f"{'role':10s} {'launches':>8s} " + " ".join(f"{x:>9s}" for x in names) + "   (us, medians)")
    for role in (*layer_roles, "lm_head"):
        if role not in stats:
            continue
        s = stats[role]
        cells = " ".join(f"{statistics.median(s[x]):9.2f}" if s[x] else f"{'-':>9s}" for x in names)
        print(f"{role:10s} {len(s['wait']):8d} {cells}")


if __name__ == "__main__":
    main()
