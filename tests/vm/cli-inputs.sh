#!/bin/bash
# `airlock gate` and `airlock run` check every input before they boot
# anything (no VM here): a reference that names nothing is one error line
# prefixed with the command the user ran and naming the reference, with no
# verdict table; under --json the only stdout line is the summary saying so;
# an image lacking one arch is refused at once (exit 15), before the other
# arch boots; --junit belongs to the gate; verify --json's lines for a
# directory holding no bundle; help: `airlock help CMD` is CMD's own, each
# command's usage line names it, and --help lists only what the command
# accepts; numbers out of range (a negative --guest-time was taken for
# none given) are usage errors.  TAP output.
set -u

cli="${AIRLOCK_CLI:?run through meson test}"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"
echo "1..12"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

report () {   # report N NAME PROBLEM (empty: ok) [file to show]...
  local n="$1" name="$2" problem="$3"
  shift 3
  if [ -z "$problem" ]; then
    echo "ok $n $name"
    return
  fi
  echo "not ok $n $name # $problem"
  for f in "$@"; do sed 's/^/# /' "$f"; done
}

ref="oci-archive:$work/no-such-image.tar"
"$cli" gate --image "$ref" >"$work/out" 2>"$work/err"
status=$?
problem=""
[ "$status" -eq 10 ] || [ "$status" -eq 11 ] || problem="exit status $status, want an image error (10 or 11)"
[ "$(wc -l <"$work/err")" -eq 1 ] || problem="$problem; $(wc -l <"$work/err") lines on stderr, want 1"
grep -q "^airlock gate: .*no-such-image.tar" "$work/err" || problem="$problem; the line does not start 'airlock gate:' and name the reference"
[ -s "$work/out" ] && problem="$problem; stdout is not empty (a verdict table?)"
report 1 /gate/bad-reference-one-line "$problem" "$work/out" "$work/err"

"$cli" run --arch all --image "$ref" >"$work/out" 2>"$work/err"
status=$?
problem=""
[ "$status" -eq 10 ] || [ "$status" -eq 11 ] || problem="exit status $status"
[ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "^airlock run: .*no-such-image.tar" "$work/err" \
  || problem="$problem; want one 'airlock run:' line naming the reference"
report 2 /run/bad-reference-one-line "$problem" "$work/out" "$work/err"

"$cli" gate --image "$ref" --json >"$work/out" 2>"$work/err"
status=$?
problem=$(python3 - "$work/out" "$status" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
if len(lines) != 1:
    sys.exit(f"{len(lines)} stdout lines, want the summary alone")
s = json.loads(lines[0])
if s.get("type") != "summary" or s["exit_status"] != int(sys.argv[2]) or s["verdict"] is not None:
    sys.exit(f"not a summary of exit {sys.argv[2]} without a verdict: {lines[0]}")
if len(s["errors"]) != 1 or "no-such-image.tar" not in s["errors"][0]:
    sys.exit(f"errors {s['errors']}")
PY
)
report 3 /json/bad-reference-summary-only "$problem" "$work/out" "$work/err"

# The clean sample with its index cut to the amd64 manifest alone.
cp -r "$samples/clean" "$work/amd64-only"
python3 - "$work/amd64-only" <<'PY'
import json, sys
d = sys.argv[1]
index = json.load(open(f"{d}/index.json"))
inner = index["manifests"][0]["digest"].split(":", 1)[1]
manifests = json.load(open(f"{d}/blobs/sha256/{inner}"))["manifests"]
index["manifests"] = [m for m in manifests if m["platform"]["architecture"] == "amd64"]
json.dump(index, open(f"{d}/index.json", "w"))
PY
start=$(date +%s)
"$cli" gate --image "oci:$work/amd64-only" >"$work/out" 2>"$work/err"
status=$?
took=$(( $(date +%s) - start ))
problem=""
[ "$status" -eq 15 ] || problem="exit status $status, want 15"
[ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "^airlock gate: arm64: .*no manifest for linux/arm64" "$work/err" \
  || problem="$problem; want one 'airlock gate: arm64:' line saying the arch is missing"
grep -Eqi "running|boot|tcg|libguestfs" "$work/err" "$work/out" && problem="$problem; something was prepared or booted"
[ "$took" -le 10 ] || problem="$problem; took $took s"
report 4 /gate/missing-arch-before-any-boot "$problem" "$work/out" "$work/err"

"$cli" run --arch amd64 --image "oci:$samples/clean" --junit "$work/j.xml" >"$work/out" 2>"$work/err"
status=$?
if [ "$status" -eq 2 ] && grep -q "^airlock run: --junit belongs to 'airlock gate'" "$work/err" && [ ! -e "$work/j.xml" ]; then
  report 5 /run/junit-is-usage-error ""
else
  report 5 /run/junit-is-usage-error "exit status $status" "$work/err"
fi

# verify --json on a directory that holds no bundle: its line says so, the
# summary last with exit status 1.
mkdir "$work/empty"
"$cli" verify --json "$work/empty" >"$work/out" 2>"$work/err"
status=$?
problem=$(python3 - "$work/out" "$status" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
if [o["type"] for o in objs] != ["bundle", "summary"]:
    sys.exit(f"line types {[o['type'] for o in objs]}")
if objs[0]["verified"] is not False or not objs[0]["problems"]:
    sys.exit(f"bundle line {objs[0]}")
if objs[1]["exit_status"] != 1 or int(sys.argv[2]) != 1 or objs[1]["verified"] != 0:
    sys.exit(f"summary {objs[1]}, exit {sys.argv[2]}")
PY
)
report 6 /verify/json-no-bundle "$problem" "$work/out" "$work/err"

# `airlock help gate` is gate's help, whose usage line names the command.
"$cli" help gate >"$work/out" 2>"$work/err"
status=$?
problem=""
[ "$status" -eq 0 ] || problem="exit status $status"
grep -q '^  airlock gate \[OPTION…\]' "$work/out" || problem="$problem; no 'airlock gate [OPTION…]' usage line"
grep -q -e '--policy' "$work/out" || problem="$problem; gate's --policy is not listed"
grep -q '^Commands:' "$work/out" && problem="$problem; the global command list instead"
report 7 /help/help-cmd-is-its-own "$problem" "$work/out" "$work/err"

# The gate refuses a test program and always runs the controls: its help
# does not offer them; run's offers them, and not the gate's --junit.
"$cli" gate --help >"$work/out" 2>&1
problem=""
grep -q -e '--guest-program' -e '--controls' "$work/out" && problem="gate --help lists --guest-program or --controls"
report 8 /help/gate-lists-what-it-accepts "$problem" "$work/out"
"$cli" run --help >"$work/out" 2>&1
problem=""
grep -q -e '--guest-program' "$work/out" || problem="run --help lacks --guest-program"
grep -q -e '--junit' -e '--policy' "$work/out" && problem="$problem; run --help lists the gate's --junit or --policy"
grep -q '^  airlock run \[OPTION…\]' "$work/out" || problem="$problem; no 'airlock run [OPTION…]' usage line"
report 9 /help/run-lists-what-it-accepts "$problem" "$work/out"

# images inspect --json: JSON Lines, an image line per arch, the summary
# last; a reference that names nothing is the summary alone, with its error.
"$cli" images inspect --json "oci-archive:$samples/clean.tar" >"$work/out" 2>"$work/err"
status=$?
problem=$(python3 - "$work/out" "$status" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
if [o["type"] for o in objs] != ["image", "image", "summary"]:
    sys.exit(f"line types {[o['type'] for o in objs]}")
if [o["arch"] for o in objs[:2]] != ["amd64", "arm64"] or not all(o["manifest_digest"].startswith("sha256:") for o in objs[:2]):
    sys.exit(f"image lines {objs[:2]}")
s = objs[2]
if (s["command"], s["exit_status"], s["arches"], s["error"]) != ("images inspect", 0, ["amd64", "arm64"], None) or int(sys.argv[2]) != 0:
    sys.exit(f"summary {s}, exit {sys.argv[2]}")
PY
)
report 10 /json/images-inspect-lines-and-summary "$problem" "$work/out" "$work/err"
"$cli" images inspect --json "$ref" >"$work/out" 2>"$work/err"
status=$?
problem=$(python3 - "$work/out" "$status" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
if [o["type"] for o in objs] != ["summary"]:
    sys.exit(f"lines {objs}")
s = objs[0]
if s["exit_status"] != int(sys.argv[2]) or s["exit_status"] not in (10, 11) or "no-such-image.tar" not in (s["error"] or ""):
    sys.exit(f"summary {s}, exit {sys.argv[2]}")
PY
)
report 11 /json/images-inspect-error-summary "$problem" "$work/out" "$work/err"

# Every out-of-range number is a usage error naming its option, before any
# image is read: a negative --guest-time passed for "not given" (the
# default six hours) until it was told apart from one given.
problem=""
for args in "gate --guest-time -5" "gate --guest-time -1" "gate --guest-time 0" \
            "run --arch amd64 --guest-time -2" "gate --boot-timeout 9999999" \
            "gate --timeout -1"; do
  # shellcheck disable=SC2086
  "$cli" $args --image "oci:$samples/clean" >"$work/out" 2>"$work/err"
  status=$?
  opt=$(echo "$args" | grep -o -- '--[a-z-]*' | tail -1)
  if [ "$status" -ne 2 ] || ! grep -q -- "$opt" "$work/err"; then
    problem="$problem; '$args': exit $status, want 2 naming $opt"
  fi
done
report 12 /cli/numbers-out-of-range-are-usage "${problem#; }" "$work/err"
