#!/bin/bash
# airlock through qemu:///system: the same boot, with QEMU started by a
# libvirtd daemon (as libvirt-qemu) instead of the embedded driver.  Starts
# virtlogd/libvirtd when none runs, and stops only the ones it started, by pid.
# TAP output; exit 77 (skip) when the daemon cannot be had here.
set -u

cli="${AIRLOCK_CLI:?run through meson test}"
echo "1..1"

skip() { echo "ok 1 /vm/system/boot-all # SKIP $1"; exit 0; }

. "$(dirname "$0")/libvirtd-lib.sh"
trap libvirtd_stop EXIT
libvirtd_start

# QEMU runs as libvirt-qemu: it must reach the kernel and initramfs, so the
# test cache must be traversable (the build tree usually is).
out=$("$cli" boot --arch all --accel tcg --connect qemu:///system 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
if [ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -c '  ok: ')" -eq 2 ]; then
  echo "ok 1 /vm/system/boot-all"
else
  echo "not ok 1 /vm/system/boot-all (exit $rc)"
  exit 1
fi
