#!/usr/bin/env python3
"""Prints the table of every benchmark's rows (bench/summary.h): what was
measured, airlock's median, the floor measured in the same run, their ratio,
the target and whether it was met.  Reads the JSON lines the benchmarks
appended to the file given as the argument."""

import json
import sys


def number(x, unit):
    if x >= 100:
        text = f"{x:.0f}"
    elif x >= 10:
        text = f"{x:.1f}"
    else:
        text = f"{x:.2f}"
    return f"{text} {unit}" if unit != "x" else f"{text}x"


def main():
    if len(sys.argv) != 2:
        print("usage: bench-summary.py ROWS.jsonl", file=sys.stderr)
        return 2
    rows = []
    try:
        with open(sys.argv[1], encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    print(f"bench-summary: '{sys.argv[1]}' line {n}: {e}", file=sys.stderr)
                    return 1
    except FileNotFoundError:
        rows = []
    if not rows:
        print("bench-summary: no benchmark reported a row", file=sys.stderr)
        return 1

    table = [("benchmark", "measurement", "airlock", "floor (same run)", "ratio", "target", "met")]
    missed = 0
    for r in rows:
        unit = r["unit"]
        value = r["value"]
        floor = r.get("floor")
        # A paired estimate when the benchmark gives one, else the medians'.
        ratio = r.get("ratio") or (value / floor if floor else None)
        target = r.get("target")
        target_text, met = "", ""
        if target:
            higher = r.get("higher_is_better", False)
            measured = value if r.get("target_is_value") else ratio
            bound = number(target, unit) if r.get("target_is_value") else f"{target:g}x"
            target_text = ("≥ " if higher else "≤ ") + bound
            if measured is None or value < 0:
                met = "?"
            else:
                ok = measured >= target if higher else measured <= target
                met = "yes" if ok else "NO"
                missed += 0 if ok else 1
        table.append((
            r["bench"],
            r["what"],
            number(value, unit) if value >= 0 else "-",
            f"{number(floor, unit)} ({r.get('floor_what', '')})" if floor else "",
            f"{ratio:.2f}x" if ratio else "",
            target_text,
            met,
        ))
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for i, row in enumerate(table):
        print("  ".join(cell.ljust(widths[c]) for c, cell in enumerate(row)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print("\nratio: airlock over its floor; the medians' ratio, or where a benchmark pairs each run\n"
          "with its floor's (supervisor, sinkhole), the median of the pairs' ratios")
    print(f"{len(rows)} measurements, {missed} target(s) missed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
