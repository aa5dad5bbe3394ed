# Sourced: a system libvirtd (with its virtlogd) for a test, started when
# none runs and stopped, by pid, only when this test started it.  Needs
# skip() from the sourcing test; sets nothing else but libvirtd_started
# and libvirtd_pid (the libvirtd this test started, or empty).
# Call libvirtd_start; libvirtd_stop runs on the test's EXIT trap.

libvirtd_started=()
libvirtd_pid=

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
    libvirtd_pid=$(cat /run/airlock-test-libvirtd.pid)
    libvirtd_started+=("$libvirtd_pid")
  fi
  [ -S /run/libvirt/libvirt-sock ] || skip "libvirtd socket did not appear"
}

# libvirtd_crash_and_restart: the libvirtd this test started killed with
# SIGKILL (no AUTODESTROY, its domains left running, as in a crash) and a
# new one started in its place, which takes the running QEMUs back.  FALSE
# when this test did not start the daemon or the new one does not answer.
libvirtd_crash_and_restart() {
  local pid=$libvirtd_pid keep=() p
  [ -n "$pid" ] || return 1
  kill -KILL "$pid" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  for p in "${libvirtd_started[@]}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
  libvirtd_started=("${keep[@]}")
  libvirtd_pid=
  rm -f /run/airlock-test-libvirtd.pid
  libvirtd -d -p /run/airlock-test-libvirtd.pid || return 1
  for _ in $(seq 100); do [ -s /run/airlock-test-libvirtd.pid ] && break; sleep 0.1; done
  libvirtd_pid=$(cat /run/airlock-test-libvirtd.pid 2>/dev/null)
  [ -n "$libvirtd_pid" ] || return 1
  libvirtd_started+=("$libvirtd_pid")
  for _ in $(seq 100); do virsh -c qemu:///system uri >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}
