#!/bin/bash
# An arch that cannot run here skips every case with the reason, and never
# passes one: the case API's GLib integration (tests/vm/test-case) with
# arm64's QEMU pointed at a path that does not exist.  No VM boots.  TAP.
set -u
prog="${1:?usage: case-skip.sh TEST-PROGRAM}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "1..2"

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
