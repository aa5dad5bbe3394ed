#!/usr/bin/env python3
"""Counts test cases over meson test logs: each TAP result line of a test is a
case; a test without TAP lines is one case.  Prints the slowest suites and
each log's total time (so the next slow suite is visible), then, last,
"N passed, N failed, N skipped", and exits non-zero when anything failed or
a log is missing."""
import json
import re
import sys

TAP = re.compile(r"^(not ok|ok)\b(.*)$")

passed = failed = skipped = 0
missing = False
times = []      # (seconds, log, test name)
totals = []     # (log, seconds, tests)
for path in sys.argv[1:]:
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        print(f"test-summary: cannot read '{path}': {e.strerror}", file=sys.stderr)
        missing = True
        continue
    total = 0.0
    count = 0
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        result = t.get("result")
        seconds = float(t.get("duration") or 0)
        total += seconds
        count += 1
        times.append((seconds, path, t.get("name", "?")))
        p = f = s = 0
        for out in (t.get("stdout") or "").splitlines():
            m = TAP.match(out)
            if not m:
                continue
            rest = m.group(2)
            if re.search(r"#\s*skip", rest, re.I):
                s += 1
            elif m.group(1) == "ok" or re.search(r"#\s*todo", rest, re.I):
                p += 1
            else:
                f += 1
        if p + f + s == 0:
            # Not TAP (or crashed before its first case): the test is one case.
            if result == "SKIP":
                s = 1
            elif result in ("OK", "EXPECTEDFAIL"):
                p = 1
            else:
                f = 1
        elif result in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS") and f == 0:
            # Died after its last reported case (crash, timeout, bad plan).
            f = 1
        passed += p
        failed += f
        skipped += s
    totals.append((path, total, count))

# Test time, not wall time: a pass that runs two tests at once takes less.
print("test: the slowest suites")
for seconds, path, name in sorted(times, reverse=True)[:15]:
    print(f"  {seconds:7.1f} s  {name}  ({path.split('/')[0]})")
for path, total, count in totals:
    print(f"test: {path}: {count} suites, {total / 60:.1f} min of test time")

print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or missing else 0)
