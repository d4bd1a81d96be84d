#!/usr/bin/env python3
"""Ranks where a kernel's warps stall, from an ncu source page.

    ncu --set full -k regex:KERNEL --launch-skip N --launch-count 1 -o R BENCH ARGS...
    ncu -i R.ncu-rep --page source --csv --print-source sass > R.csv
    bench/ncu_stalls.py R.csv [--top 20]

For each kernel in the file: its stall samples by reason, then the SASS instructions with the
most samples (address, instruction, executions, samples, top reasons). See
docs/adding-an-op.md ("Measuring what an op costs inside a step").
"""
import argparse
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def kernels(rows):
    """Splits the page into [kernel name, header, instruction rows], one per kernel."""
    found, current = [], None
    for row in rows:
        if not row:
            continue
        if row[0] == "Kernel Name":
            current = [row[1], None, []]
            found.append(current)
        elif row[0] == "Address" and current is not None:
            current[1] = row
        elif current is not None and current[1] is not None:
            current[2].append(row)
    return found


def number(text):
    try:
        return int(text.replace(",", ""))
    except ValueError:
        return 0


def report(name, header, rows, top):
    column = {title: i for i, title in enumerate(header)}
    for needed in (SAMPLES, EXECUTED, "Source"):
        if needed not in column:
            sys.exit(f"no column '{needed}': was the report captured with --set full?")
    reasons = [t for t in header if t.startswith("stall_") and "Not Issued" not in t]
    totals = {r: sum(number(row[column[r]]) for row in rows) for r in reasons}
    samples = sum(number(row[column[SAMPLES]]) for row in rows)
    executed = sum(number(row[column[EXECUTED]]) for row in rows)
    print(f"{name}\n  {samples} stall samples, {executed:,} instructions executed")
    ranked = sorted(((v, r[6:]) for r, v in totals.items() if v), reverse=True)
    print("  by reason: " + ", ".join(f"{r} {100.0 * v / max(samples, 1):.0f}%" for v, r in ranked))
    for row in sorted(rows, key=lambda r: -number(r[column[SAMPLES]]))[:top]:
        s = number(row[column[SAMPLES]])
        if s == 0:
            break
        why = sorted(((number(row[column[r]]), r[6:]) for r in reasons), reverse=True)[:3]
        why_text = ", ".join(f"{r} {v}" for v, r in why if v)
        print(f"  {s:6d} {number(row[column[EXECUTED]]):9d}  {row[0][-6:]}  "
              f"{row[column['Source']].strip()[:56]:56s}  {why_text}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="ncu -i R.ncu-rep --page source --csv --print-source sass")
    parser.add_argument("--top", type=int, default=20, help="instructions to list per kernel")
    args = parser.parse_args()
    with open(args.csv, newline="") as f:
        found, seen = False, []
        for name, header, rows in kernels(csv.reader(f)):
            # ncu may print a kernel's table twice; report each profiled launch once.
            if header is None or (name, rows) in seen:
                continue
            seen.append((name, rows))
            found = True
            report(name, header, rows, args.top)
    if not found:
        sys.exit(f"{args.csv}: no kernel with a source table")


if __name__ == "__main__":
    main()
