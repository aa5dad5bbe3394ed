#!/usr/bin/env python3
"""Counts test cases over meson test logs: each TAP result line of a test is a
case; a test without TAP lines is one case.  Prints the slowest suites and
each log's total time (so the next slow suite is visible), then, last,
"N passed, N failed, N skipped", and exits non-zero when anything failed or
a log is missing.  Before those, what failed: each failing case's "not ok"
line with the comment lines under it (a TAP script's reason and the output
it showed), or the tail of a test without TAP lines, so that the end of a CI
log says why a run failed as well as that it did."""
import json
import re
import sys

TAP = re.compile(r"^(not ok|ok)\b(.*)$")

passed = failed = skipped = 0
missing = False
times = []      # (seconds, log, test name)
failures = []   # (test name, lines that say why)
FAILURE_LINES = 40     # per failing case
FAILURES_SHOWN = 12    # failing cases shown in all
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
        output = (t.get("stdout") or "").splitlines()
        errors = (t.get("stderr") or "").splitlines()
        shown = len(failures)
        why = None
        for out in output:
            m = TAP.match(out)
            if not m:
                # A comment under a failing case: its reason, its output.
                if why is not None and out.startswith("#") and len(why) < FAILURE_LINES:
                    why.append(out)
                continue
            why = None
            rest = m.group(2)
            if re.search(r"#\s*skip", rest, re.I):
                s += 1
            elif m.group(1) == "ok" or re.search(r"#\s*todo", rest, re.I):
                p += 1
            else:
                f += 1
                why = [out]
                failures.append((t.get("name", "?"), why))
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
        if f and len(failures) == shown:
            # No "not ok" line says why: the end of what it printed does.
            failures.append((t.get("name", "?"), [f"({result})"] + output[-FAILURE_LINES:]))
        if f and errors:
            # What it said on stderr (GLib's assertion messages go there).
            failures[-1][1].extend(["(stderr)"] + errors[-FAILURE_LINES // 2:])
        passed += p
        failed += f
        skipped += s
    totals.append((path, total, count))

if failures:
    print("test: what failed")
    for name, why in failures[:FAILURES_SHOWN]:
        print(f"  {name}:")
        for line in why:
            print(f"    {line}")
    if len(failures) > FAILURES_SHOWN:
        print(f"  (and {len(failures) - FAILURES_SHOWN} more failing cases: see the logs)")

# Test time, not wall time: a pass that runs two tests at once takes less.
print("test: the slowest suites")
for seconds, path, name in sorted(times, reverse=True)[:15]:
    print(f"  {seconds:7.1f} s  {name}  ({path.split('/')[0]})")
for path, total, count in totals:
    print(f"test: {path}: {count} suites, {total / 60:.1f} min of test time")

print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or missing else 0)
