#!/bin/bash
# airlock through qemu:///system: the same boot, with QEMU started by a
# libvirtd daemon (as libvirt-qemu) instead of the embedded driver.  Starts
# virtlogd/libvirtd when none runs, and stops only the ones it started, by pid.
# TAP output; exit 77 (skip) when the daemon cannot be had here.
set -u

cli="${AIRLOCK_CLI:?run through meson test}"
echo "1..1"

skip() { echo "ok 1 /vm/system/boot-all # SKIP $1"; exit 0; }

[ "$(id -u)" -eq 0 ] || skip "needs root to start libvirtd"
command -v libvirtd >/dev/null || skip "libvirtd is not installed (libvirt-daemon-system)"
command -v virtlogd >/dev/null || skip "virtlogd is not installed"
id libvirt-qemu >/dev/null 2>&1 || skip "no libvirt-qemu user"

started=()
cleanup() {
  for pid in "${started[@]}"; do
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
}
trap cleanup EXIT

mkdir -p /var/log/libvirt /var/run/libvirt /var/lib/libvirt/qemu
if [ ! -S /run/libvirt/virtlogd-sock ]; then
  virtlogd -d -p /run/airlock-test-virtlogd.pid || skip "virtlogd did not start"
  for _ in $(seq 50); do [ -s /run/airlock-test-virtlogd.pid ] && break; sleep 0.1; done
  started+=("$(cat /run/airlock-test-virtlogd.pid)")
fi
if [ ! -S /run/libvirt/libvirt-sock ]; then
  libvirtd -d -p /run/airlock-test-libvirtd.pid || skip "libvirtd did not start"
  for _ in $(seq 100); do [ -S /run/libvirt/libvirt-sock ] && break; sleep 0.1; done
  started+=("$(cat /run/airlock-test-libvirtd.pid)")
fi
[ -S /run/libvirt/libvirt-sock ] || skip "libvirtd socket did not appear"

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
