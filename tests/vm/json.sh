#!/bin/bash
# `airlock gate`'s reports for machines (docs/json.md), through the command a
# pipeline runs on the egress sample: under --json every stdout line is one
# JSON object of a known type, the last the summary with the verdict fail,
# exit status 1 and each arch's offending attempts to example.com; the JUnit
# file has a failing testcase per arch naming them; GitHub's annotations
# (GITHUB_ACTIONS=true) are one ::error line per offending attempt, and none
# under --json.  Two gates: both arches, then amd64 alone (its --cache-dir
# a relative path), whose bundle verify --json reports and replay --json
# replays (the same: one replay line, the summary last); a replay refused
# before any run still ends with its summary.  TAP output.
set -u

cli="${AIRLOCK_CLI:?run through meson test}"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"
echo "1..7"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

report () {   # report N NAME STATUS_TEXT (empty: ok) [file to show]
  if [ -z "$3" ]; then
    echo "ok $1 $2"
  else
    echo "not ok $1 $2 # $3"
    [ -n "${4:-}" ] && sed 's/^/# /' "$4" | tail -n 60
  fi
}

GITHUB_ACTIONS=true "$cli" gate --image "oci-archive:$samples/egress.tar" --json \
  --junit "$work/junit.xml" >"$work/out.jsonl" 2>"$work/err.txt"
status=$?

problem=$(python3 - "$work/out.jsonl" "$status" <<'PY'
import json, sys

known = {"image", "event", "network", "output", "run", "verdict", "summary"}
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
if lines and lines[-1] == "":
    lines.pop()
if not lines:
    sys.exit("no line on stdout")
objs = []
for n, line in enumerate(lines, 1):
    try:
        obj = json.loads(line)
    except ValueError as e:
        sys.exit(f"stdout line {n} is not JSON ({e}): {line[:120]}")
    if not isinstance(obj, dict) or obj.get("type") not in known:
        sys.exit(f"stdout line {n} has no known type: {line[:120]}")
    objs.append(obj)
for t in ("image", "event", "network", "run", "verdict"):
    for arch in ("amd64", "arm64"):
        if not any(o["type"] == t and o.get("arch") == arch for o in objs):
            sys.exit(f"no {t} line for {arch}")
if [o["type"] for o in objs].count("summary") != 1 or objs[-1]["type"] != "summary":
    sys.exit("the summary is not the last line, once")
s = objs[-1]
if s["command"] != "gate" or s["exit_status"] != int(sys.argv[2]) or s["exit_status"] != 1:
    sys.exit(f"summary says command {s['command']}, exit {s['exit_status']}; the command exited {sys.argv[2]}, want 1")
if s["verdict"] != "fail" or s["errors"] != []:
    sys.exit(f"summary verdict {s['verdict']}, errors {s['errors']}")
if sorted(s["arches"]) != ["amd64", "arm64"]:
    sys.exit(f"summary arches {sorted(s['arches'])}")
for arch, a in s["arches"].items():
    if a["verdict"] != "fail" or not a["complete"] or not a["reasons"]:
        sys.exit(f"{arch}: verdict {a['verdict']}, complete {a['complete']}, reasons {a['reasons']}")
    offending = sorted((x["protocol"], x["port"], x["host"] or ",".join(x["dns_names"]))
                       for x in a["attempts"] if x["offending"])
    want = sorted([("udp", 53, "example.com."), ("tcp", 80, "example.com."),
                   ("tcp", 80, "example.com."), ("tcp", 443, "example.com."),
                   ("tcp", 443, "example.com.")])
    if offending != want:
        sys.exit(f"{arch}: offending attempts {offending}, want {want}")
    v = [o for o in objs if o["type"] == "verdict" and o["arch"] == arch][0]
    if (v["verdict"], v["controls_seen"], v["controls"], v["attempts"], v["admitted"]) != ("fail", 12, 12, 5, 0):
        sys.exit(f"{arch}: verdict line {v}")
    seqs = {o["seq"] for o in objs if o["type"] == "event" and o["arch"] == arch}
    if not all(x["seq"] in seqs for x in a["attempts"]):
        sys.exit(f"{arch}: an attempt's seq names no event line")
PY
)
report 1 /json/gate-egress-lines-and-summary "$problem" "$work/out.jsonl"

# The text went to stderr: the table is there, not on stdout.
if grep -Eq '^  amd64 +12/12 +5 +0 +0 +0 +exited +fail$' "$work/err.txt" \
   && ! grep -q '^::error' "$work/out.jsonl"; then
  report 2 /json/text-on-stderr-no-annotations ""
else
  report 2 /json/text-on-stderr-no-annotations "no verdict table on stderr, or an annotation on stdout" "$work/err.txt"
fi

problem=$(python3 - "$work/junit.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
cases = root.findall("./testsuite/testcase")
if sorted(c.get("name") for c in cases) != ["amd64", "arm64"]:
    sys.exit(f"testcases {[c.get('name') for c in cases]}")
if root.get("tests") != "2" or root.get("failures") != "2" or root.get("errors") != "0":
    sys.exit(f"counts tests={root.get('tests')} failures={root.get('failures')} errors={root.get('errors')}")
for c in cases:
    f = c.find("failure")
    if f is None:
        sys.exit(f"{c.get('name')}: no failure")
    msg = f.get("message")
    if not msg.startswith("verdict fail: 5 offending attempts: ") or "198.18.243.18:443" not in msg:
        sys.exit(f"{c.get('name')}: failure message {msg!r}")
    if "egress not admitted by the policy: connect continue inet/stream/tcp 198.18.243.18:443 (example.com, SNI example.com)" not in (f.text or ""):
        sys.exit(f"{c.get('name')}: failure text {f.text!r}")
PY
)
report 3 /junit/gate-egress-fails-per-arch "$problem" "$work/junit.xml"

# This gate is given the cache as a relative path, as a user types it
# (libvirt's embedded driver wants an absolute root: the library makes it
# one).
cache="${AIRLOCK_CACHE_DIR:?run through meson test}"
(cd "$(dirname "$cache")" \
  && GITHUB_ACTIONS=true "$cli" gate --arch amd64 --image "oci-archive:$samples/egress.tar" \
       --cache-dir "$(basename "$cache")" --out "$work/b") >"$work/out.txt" 2>&1
status=$?
n_ann=$(grep -c '^::error title=airlock amd64::egress not admitted by the policy: ' "$work/out.txt")
if [ "$status" -eq 1 ] && [ "$n_ann" -eq 5 ] \
   && grep -qx '::error title=airlock amd64::egress not admitted by the policy: connect continue inet/stream/tcp 198.18.243.18:443 (example.com.) by /usr/local/bin/egress-probe' "$work/out.txt" \
   && ! grep -q '^::error title=airlock arm64' "$work/out.txt"; then
  report 4 /github/annotation-per-offending-attempt ""
else
  report 4 /github/annotation-per-offending-attempt "exit $status, $n_ann annotations, want 1 and 5" "$work/out.txt"
fi

# verify --json on that gate's --out directory: a line for the bundle, one
# for the set, the summary last.
"$cli" verify --json "$work/b" >"$work/verify.jsonl" 2>"$work/verify.err"
status=$?
problem=$(python3 - "$work/verify.jsonl" "$status" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
types = [o["type"] for o in objs]
if types != ["bundle", "set", "summary"]:
    sys.exit(f"line types {types}")
b, st, s = objs
if (b["arch"], b["verified"], b["verdict"], b["problems"]) != ("amd64", True, "fail", []):
    sys.exit(f"bundle line {b}")
if not b["manifest"].startswith("sha256:") or st["verified"] is not True or st["arches"] != ["amd64"]:
    sys.exit(f"bundle or set line {b} {st}")
if (s["command"], s["exit_status"], s["bundles"], s["verified"]) != ("verify", 0, 1, 1) or int(sys.argv[2]) != 0:
    sys.exit(f"summary {s}, exit {sys.argv[2]}")
PY
)
report 5 /json/verify-lines-and-summary "$problem" "$work/verify.jsonl" "$work/verify.err"

# replay --json of the amd64 bundle: a replay line saying the same, with
# the gate's 5 attempts and its verdict, then the summary; text on stderr.
"$cli" replay --json "$work/b" >"$work/replay.jsonl" 2>"$work/replay.err"
status=$?
problem=$(python3 - "$work/replay.jsonl" "$status" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
types = [o["type"] for o in objs]
if types != ["replay", "summary"]:
    sys.exit(f"line types {types}")
r, s = objs
if (r["arch"], r["outcome"], r["exit_status"], r["attempts"], r["verdict"], r["differences"]) != ("amd64", "same", 0, 5, "fail", []):
    sys.exit(f"replay line {r}")
if not any(m.startswith("amd64: same: 5 attempts") for m in r["messages"]):
    sys.exit(f"replay messages {r['messages']}")
if (s["command"], s["exit_status"], s["outcome"], len(s["arches"])) != ("replay", 0, "same", 1) or int(sys.argv[2]) != 0:
    sys.exit(f"summary {s}, exit {sys.argv[2]}")
PY
)
report 6 /json/replay-lines-and-summary "$problem" "$work/replay.jsonl" "$work/replay.err"

# A directory with no bundle: usage, and the summary is still the last line.
"$cli" replay --json "$work" >"$work/replay.jsonl" 2>"$work/replay.err"
status=$?
problem=$(python3 - "$work/replay.jsonl" "$status" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
if [o["type"] for o in objs] != ["summary"]:
    sys.exit(f"lines {objs}")
s = objs[0]
if s["exit_status"] != 2 or int(sys.argv[2]) != 2 or s["outcome"] != "error" or "no manifest.json" not in (s["error"] or ""):
    sys.exit(f"summary {s}, exit {sys.argv[2]}")
PY
)
report 7 /json/replay-refused-summary-last "$problem" "$work/replay.jsonl" "$work/replay.err"
