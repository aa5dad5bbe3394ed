# Sourced by the tests that act on the QEMU of one of their runs (stop it,
# kill it): how to find it, by the airlock process that started it, so no
# other run's QEMU is ever touched.
# shellcheck shell=bash

# airlock's runtime directory (lib/vm/connection.c: $XDG_RUNTIME_DIR/airlock,
# else /run/airlock for root, else /tmp/airlock-UID).
runtime="${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/airlock}"
[ -n "$runtime" ] || { [ "$(id -u)" -eq 0 ] && runtime=/run/airlock || runtime="/tmp/airlock-$(id -u)"; }

# run_ids_of PID [RUNTIME]: every run id of the VMs that airlock process
# PID started (their run directories' owner files name the pid), one a
# line, or nothing yet (a KVM probe boots a VM of its own before the run's).
run_ids_of () {
  local f owner rt="${2:-$runtime}"
  for f in "$rt"/*/owner; do
    [ -f "$f" ] || continue
    read -r _ _ owner _ <"$f" || continue
    if [ "$owner" = "$1" ]; then f=${f%/owner}; f=${f##*/}; echo "${f%-net}"; fi
  done
}

# run_id_of PID [RUNTIME]: the first of them.
run_id_of () {
  run_ids_of "$@" | head -n 1
}

# qemu_of RUN_ID: the QEMU of run RUN_ID (domain airlock-ARCH-RUN_ID), or nothing.
qemu_of () {
  local p
  for p in /proc/[0-9]*; do
    { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q -- "-name guest=airlock-[a-z0-9]*-$1," \
      && { echo "${p#/proc/}"; return; }
  done
}
