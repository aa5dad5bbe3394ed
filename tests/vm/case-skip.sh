#!/bin/bash
# An arch that cannot run here skips every case with the reason, and never
# passes one: the case API's GLib integration (tests/vm/test-case) with
# arm64's QEMU pointed at a path that does not exist.  A broken install (its
# guest recipes missing) fails every case instead: a suite must never go
# green on nothing.  No VM boots.  TAP.
set -u
prog="${1:?usage: case-skip.sh TEST-PROGRAM}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "1..3"

AIRLOCK_QEMU_AARCH64=/nonexistent/qemu-system-aarch64 "$prog" --tap --airlock-arch=arm64 >"$out" 2>&1
status=$?
arm_lines=$(grep -cE '^ok [0-9]+ /arm64/' "$out")
skipped=$(grep -cE "^ok [0-9]+ /arm64/.* # SKIP arm64 cannot run here: cannot run arm64 guests here: '/nonexistent/qemu-system-aarch64' is not installed" "$out")
if [ "$status" -eq 0 ] && [ "$arm_lines" -gt 0 ] && [ "$arm_lines" -eq "$skipped" ]; then
  echo "ok 1 /testing/arch-that-cannot-run-skips-with-reason"
else
  echo "not ok 1 /testing/arch-that-cannot-run-skips-with-reason # exit $status, $skipped of $arm_lines arm64 cases skipped with the reason"
  sed 's/^/# /' "$out"
fi
if ! grep -qE '^ok [0-9]+ /amd64/' "$out"; then
  echo "ok 2 /testing/unselected-arch-not-registered"
else
  echo "not ok 2 /testing/unselected-arch-not-registered # amd64 cases ran under --airlock-arch=arm64"
fi

AIRLOCK_DATA_DIR=/nonexistent/airlock-data "$prog" --tap --airlock-arch=amd64 >"$out" 2>&1
status=$?
amd_ok=$(grep -cE '^ok [0-9]+ /amd64/' "$out")
amd_failed=$(grep -cE '^not ok [0-9]+ /amd64/' "$out")
if [ "$status" -ne 0 ] && [ "$amd_ok" -eq 0 ] && [ "$amd_failed" -gt 0 ] \
   && grep -q 'amd64: cannot prepare a session: ' "$out"; then
  echo "ok 3 /testing/broken-install-fails-every-case"
else
  echo "not ok 3 /testing/broken-install-fails-every-case # exit $status, $amd_ok amd64 cases ok, $amd_failed failed"
  sed 's/^/# /' "$out"
fi
