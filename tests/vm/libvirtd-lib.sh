# Sourced: a system libvirtd (with its virtlogd) for a test, started when
# none runs and stopped, by pid, only when this test started it.  Needs
# skip() from the sourcing test; sets nothing else but libvirtd_started.
# Call libvirtd_start; libvirtd_stop runs on the test's EXIT trap.

libvirtd_started=()

libvirtd_stop() {
  local pid
  for pid in "${libvirtd_started[@]}"; do
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  libvirtd_started=()
}

libvirtd_start() {
  [ "$(id -u)" -eq 0 ] || skip "needs root to start libvirtd"
  command -v libvirtd >/dev/null || skip "libvirtd is not installed (libvirt-daemon-system)"
  command -v virtlogd >/dev/null || skip "virtlogd is not installed"
  id libvirt-qemu >/dev/null 2>&1 || skip "no libvirt-qemu user"
  mkdir -p /var/log/libvirt /var/run/libvirt /var/lib/libvirt/qemu
  if [ ! -S /run/libvirt/virtlogd-sock ]; then
    virtlogd -d -p /run/airlock-test-virtlogd.pid || skip "virtlogd did not start"
    for _ in $(seq 50); do [ -s /run/airlock-test-virtlogd.pid ] && break; sleep 0.1; done
    libvirtd_started+=("$(cat /run/airlock-test-virtlogd.pid)")
  fi
  if [ ! -S /run/libvirt/libvirt-sock ]; then
    libvirtd -d -p /run/airlock-test-libvirtd.pid || skip "libvirtd did not start"
    for _ in $(seq 100); do [ -S /run/libvirt/libvirt-sock ] && break; sleep 0.1; done
    libvirtd_started+=("$(cat /run/airlock-test-libvirtd.pid)")
  fi
  [ -S /run/libvirt/libvirt-sock ] || skip "libvirtd socket did not appear"
}
