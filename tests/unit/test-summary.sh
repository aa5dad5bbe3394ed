#!/bin/bash
# scripts/test-summary.py, the last step of scripts/test: it counts the
# cases of meson's JSON logs into "N passed, N failed, N skipped" (the last
# line CI reads) and, above it, says why each failing case failed, so a CI
# log whose tail alone survives still carries the reason.  Synthetic logs:
# a TAP script with a failing case and its comments, a GLib test that
# failed with its message on stderr, a test that crashed after its last
# case, a skip.  TAP.
set -u
src="${1:?usage: test-summary.sh SOURCE-ROOT}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
ok () { n=$((n + 1)); echo "ok $n $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n $1 # $2"; sed 's/^/# /' "$work/out"; }

python3 - "$work/log.json" <<'PY'
import json, sys
tests = [
    {"name": "airlock:vm / replay", "result": "FAIL", "duration": 30.0,
     "stdout": "1..3\nok 1 /replay/gate\nnot ok 2 /replay/same # exit 1\n"
               "# amd64: different (1):\n#   + 1 x network: udp 192.0.2.9:9\nok 3 /replay/usage\n"},
    {"name": "airlock:unit / verdict", "result": "FAIL", "duration": 1.0,
     "stdout": "ok 1 /verdict/a\nnot ok 2 /verdict/b\n",
     "stderr": "ERROR:test-verdict.c:42:check_b: assertion failed (kind == PASS)\n"},
    {"name": "airlock:vm / crashed", "result": "ERROR", "duration": 2.0,
     "stdout": "ok 1 /crash/first\nAddressSanitizer: heap-use-after-free\n"},
    {"name": "airlock:unit / skipped", "result": "SKIP", "duration": 0.1, "stdout": ""},
]
open(sys.argv[1], "w").write("".join(json.dumps(t) + "\n" for t in tests))
PY
python3 "$src/scripts/test-summary.py" "$work/log.json" >"$work/out" 2>&1
status=$?

if [ $status -ne 0 ] && [ "$(tail -n 1 "$work/out")" = "4 passed, 3 failed, 1 skipped" ]; then
  ok "/summary/counts-cases-and-ends-with-the-count-line"
else not_ok "/summary/counts-cases-and-ends-with-the-count-line" "exit $status"; fi

if grep -Fq "not ok 2 /replay/same # exit 1" "$work/out" \
   && grep -Fq "+ 1 x network: udp 192.0.2.9:9" "$work/out" \
   && ! grep -Fq "ok 3 /replay/usage" "$work/out"; then
  ok "/summary/shows-a-failing-case-with-its-comments"
else not_ok "/summary/shows-a-failing-case-with-its-comments" "the reason under 'not ok 2' is missing"; fi

if grep -Fq "assertion failed (kind == PASS)" "$work/out"; then
  ok "/summary/shows-what-a-failing-test-said-on-stderr"
else not_ok "/summary/shows-what-a-failing-test-said-on-stderr" "the GLib message is missing"; fi

if grep -Fq "heap-use-after-free" "$work/out" && grep -Fq "(ERROR)" "$work/out"; then
  ok "/summary/shows-the-tail-of-a-test-that-died-after-its-cases"
else not_ok "/summary/shows-the-tail-of-a-test-that-died-after-its-cases" "the crash's output is missing"; fi

python3 - "$work/ok.json" <<'PY'
import json, sys
open(sys.argv[1], "w").write(json.dumps({"name": "airlock:unit / fine", "result": "OK",
                                         "duration": 1.0, "stdout": "ok 1 /a\nok 2 /b\n"}) + "\n")
PY
python3 "$src/scripts/test-summary.py" "$work/ok.json" >"$work/out" 2>&1
status=$?
if [ $status -eq 0 ] && ! grep -Fq "what failed" "$work/out" \
   && [ "$(tail -n 1 "$work/out")" = "2 passed, 0 failed, 0 skipped" ]; then
  ok "/summary/a-green-run-says-nothing-failed"
else not_ok "/summary/a-green-run-says-nothing-failed" "exit $status"; fi

python3 "$src/scripts/test-summary.py" "$work/absent.json" >"$work/out" 2>&1
status=$?
if [ $status -ne 0 ] && grep -Fq "cannot read" "$work/out"; then
  ok "/summary/a-missing-log-fails"
else not_ok "/summary/a-missing-log-fails" "exit $status"; fi
echo "1..$n"
