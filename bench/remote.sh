#!/bin/bash
# bench/remote: the release gate on a remote hypervisor next to the same
# gate on the local embedded driver, on this machine (issue 21, "bench/
# reports the remote gate's cost next to the local one").
#
# The remote hypervisor is this machine's system libvirtd reached through
# qemu+ssh:// to an sshd of the benchmark's own on 127.0.0.1
# (tests/vm/sshd-lib.sh; libvirtd started when none runs,
# tests/vm/libvirtd-lib.sh).  Each round gates the clean sample on both
# arches once each way, `airlock gate --out DIR` as a pipeline runs it, in
# alternating order; a first remote gate beforehand puts the guest's
# volumes in the pool (not timed: a pool keeps them for every later run).
# What the remote gate adds: ssh, the daemon's QEMU start, the volumes read
# back and hashed, the network and evidence through libvirt streams.
# Medians over --repeat rounds (default 3), and the median of each
# round's ratio.  Not a test: exit 1 only when a
# gate does not pass; 0 with a SKIP line when the remote side cannot be had.
set -u

cli="${AIRLOCK_CLI:?run through meson (scripts/bench remote)}"
sample="${AIRLOCK_SAMPLE_DIR:?run through meson (scripts/bench remote)}/clean.tar"
repeat=3
[ "${1:-}" = "--repeat" ] && repeat="$2"

work=$(mktemp -d)
skip() { echo "bench remote: SKIP: $1"; exit 0; }
src="${AIRLOCK_SOURCE_DIR:-$(dirname "$0")/..}"
. "$src/tests/vm/libvirtd-lib.sh"
. "$src/tests/vm/sshd-lib.sh"
cleanup() { sshd_stop; libvirtd_stop; rm -rf "$work"; }
trap cleanup EXIT

libvirtd_start
sshd_start "$work"

gate() {   # gate NAME [--connect URI]: prints the wall seconds, or fails
  local name="$1" start end
  shift
  rm -rf "$work/$name"
  start=$(date +%s.%N)
  "$cli" gate --image "oci-archive:$sample" --out "$work/$name" "$@" >"$work/$name.log" 2>&1 \
    || { echo "bench remote: the $name gate did not pass:" >&2; tail -20 "$work/$name.log" >&2; return 1; }
  end=$(date +%s.%N)
  python3 -c "print($end - $start)"
}

gate warmup --connect "$remote_uri" >/dev/null || exit 1
local_s=()
remote_s=()
for round in $(seq "$repeat"); do
  if [ $((round % 2)) -eq 1 ]; then
    l=$(gate local) || exit 1
    r=$(gate remote --connect "$remote_uri") || exit 1
  else
    r=$(gate remote --connect "$remote_uri") || exit 1
    l=$(gate local) || exit 1
  fi
  local_s+=("$l")
  remote_s+=("$r")
  printf 'round %d: local %.2f s, remote %.2f s\n' "$round" "$l" "$r"
done

python3 - "${local_s[*]}" "${remote_s[*]}" <<'EOF'
import json, os, statistics, sys
local = [float(x) for x in sys.argv[1].split()]
remote = [float(x) for x in sys.argv[2].split()]
ratios = [r / l for l, r in zip(local, remote)]
lm, rm, ratio = statistics.median(local), statistics.median(remote), statistics.median(ratios)
print()
print("gate of clean, both arches, --out      median    ratio")
print(f"  local (embedded driver)             {lm:6.2f} s")
print(f"  remote (qemu+ssh, this machine)     {rm:6.2f} s   {ratio:.2f}x")
path = os.environ.get("AIRLOCK_BENCH_SUMMARY")
if path:
    with open(path, "a") as f:
        f.write(json.dumps({"bench": "remote", "what": "gate of clean, both arches, qemu+ssh to this machine",
                            "value": rm, "unit": "s", "floor": lm,
                            "floor_what": "the same gate, embedded driver", "ratio": ratio}) + "\n")
EOF
