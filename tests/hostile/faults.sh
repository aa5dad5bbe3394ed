#!/bin/bash
# Faults: `airlock gate` whose run breaks underneath it, through the command
# a release pipeline runs.  Each fault ends with the gate's inconclusive
# exit status (3), its reason printed, and the bundle DIR/ARCH/ kept with
# its evidence: a finished bundle says inconclusive in verdict.json and
# `airlock verify` accepts it; an unfinished one stays marked INCOMPLETE
# with evidence.bin, and verify refuses it.  Never `pass`.  Faults that
# are not about the evidence (a corrupted cached disk, two gates at once)
# must end with the right verdict instead: pass, on an intact disk.
#
# Guest faults come from the hidden `--test-mode` (guest/test-modes.c
# `airlock.test=`); host faults are made here: QEMU stopped or killed by
# pid, the airlock process killed, a full tmpfs as --out, qemu:///system's
# libvirtd restarted or crashed mid-run (only a daemon this test started),
# a byte of a cached disk flipped.  Everything this test starts it stops
# by pid; the disks it builds and the mounts it makes it removes.  TAP.
set -u

cli="${AIRLOCK_CLI:?run through meson test}"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"
cache="${AIRLOCK_CACHE_DIR:?run through meson test}"
clean="oci:$samples/clean"
work=$(mktemp -d /tmp/airlock-faults.XXXXXX)
# shellcheck source=../vm/run-lib.sh
. "$(dirname "$0")/../vm/run-lib.sh"   # runtime, run_id_of, qemu_of
qemus=()      # "pid run-id" of QEMUs our runs started, checked before any kill
daemons=()    # libvirtd/virtlogd this test started
mounts=()
runtime_mode=""
image_keys=() # manifest hex of the private images whose disks we built
n=0

cleanup () {
  local entry p id
  # Our background jobs still running (holders, gates), by pid.
  for p in $(jobs -p); do kill -9 "$p" 2>/dev/null; done
  # A QEMU is killed only while it is still the one of our run.
  for entry in "${qemus[@]}"; do
    read -r p id <<<"$entry"
    [ "$(qemu_of "$id")" = "$p" ] && kill -9 "$p" 2>/dev/null
  done
  for p in "${daemons[@]}"; do
    [ -n "$p" ] || continue
    kill "$p" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  for p in "${mounts[@]}"; do umount "$p" 2>/dev/null || umount -l "$p" 2>/dev/null; done
  for p in "${image_keys[@]}"; do rm -rf "$cache/image/$p"-*; done
  # A run through the daemon opens the runtime directory to QEMU's user
  # (0711); as it was before, now that no daemon of ours runs.
  [ -z "$runtime_mode" ] || chmod "$runtime_mode" "$runtime" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

ok () { n=$((n + 1)); echo "ok $n $1"; }
skip () { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
# not_ok NAME WHY [FILE]: the failure, and FILE (the gate's output) as diagnostics.
not_ok () {
  n=$((n + 1))
  echo "not ok $n $1 # $2"
  [ -n "${3:-}" ] && [ -f "$3" ] && grep -v '^  probe\[' "$3" | tail -60 | sed 's/^/# /'
}

# start_held NAME ARG...: `airlock gate --stdin - ARG...` in the background,
# its stdin a fifo a sleep holds open, so the clean server keeps serving
# until release_held; output in $work/NAME.out.  Sets gate_pid, holder_pid.
start_held () {
  local name="$1"
  shift
  mkfifo "$work/$name.in"
  sleep 600 >"$work/$name.in" &
  holder_pid=$!
  "$cli" gate --stdin - "$@" <"$work/$name.in" >"$work/$name.out" 2>&1 &
  gate_pid=$!
}

# wait_workload BUNDLE [RUNTIME]: until the controls are done and the
# image's workload runs (the console the bundle streams says so), and the
# QEMU of the run is known: sets run_id and qemu_pid.  FALSE on timeout or
# when the gate already ended.
wait_workload () {
  run_id="" qemu_pid=""
  for _ in $(seq 900); do
    kill -0 "$gate_pid" 2>/dev/null || return 1
    [ -n "$run_id" ] || run_id=$(run_id_of "$gate_pid" "${2:-$runtime}")
    [ -n "$run_id" ] && [ -z "$qemu_pid" ] && qemu_pid=$(qemu_of "$run_id")
    if [ -n "$qemu_pid" ] && grep -aq "airlock-init: workload ended" "$1/console.log" 2>/dev/null; then
      qemus+=("$qemu_pid $run_id")
      sleep 1   # heartbeats and the workload's first records arrive
      return 0
    fi
    sleep 0.2
  done
  return 1
}

# release_held: end of file on the held stdin, then the gate's exit status in $status.
release_held () {
  kill "$holder_pid" 2>/dev/null
  wait "$gate_pid"
  status=$?
}

# gate_problems OUT ARCH STATUS WANT REASON: what is wrong with how the
# gate said it: exit status WANT, a header naming REASON, an inconclusive
# row in the verdict table (never pass), REASON among the printed reasons.
gate_problems () {
  local out="$1" arch="$2" status="$3" want="$4" reason="$5"
  if [ "$status" -ne "$want" ]; then echo "exit status $status, want $want"; return; fi
  if ! grep -Eq -- "^$arch: [a-z]+, run inconclusive: .*$reason" "$out"; then
    echo "no '$arch: …, run inconclusive: …$reason' header"; return
  fi
  if grep -Eq -- "^  $arch .* pass$" "$out"; then echo "the verdict table says pass"; return; fi
  if ! grep -Eq -- "^  $arch +.* inconclusive$" "$out"; then echo "no inconclusive $arch row"; return; fi
  if ! grep -Eq -- "^$arch: the evidence is incomplete: .*$reason" "$out"; then
    echo "no '$arch: the evidence is incomplete: …$reason' reason"; return
  fi
}

# finished_problems DIR/ARCH REASON: a finished bundle that says
# inconclusive for REASON (verdict.json, manifest.json) and verifies.
finished_problems () {
  local d="$1" reason="$2" arch="${1##*/}" v
  if [ -e "$d/INCOMPLETE" ] || [ ! -s "$d/evidence.bin" ]; then
    echo "bundle $d unfinished or without evidence.bin"; return
  fi
  if ! v=$(python3 - "$d" "$reason" 2>&1 <<'EOF'
import json, re, sys
d, reason = sys.argv[1], sys.argv[2]
v = json.load(open(d + "/verdict.json"))
m = json.load(open(d + "/manifest.json"))
assert v["verdict"] == "inconclusive", "verdict.json says %r" % v["verdict"]
assert any(re.search(reason, r) for r in v["reasons"]), "no reason in verdict.json names it: %r" % v["reasons"]
assert m["run"]["complete"] is False, "manifest.json says the run was complete"
assert re.search(reason, m["run"]["reason"] or ""), "manifest.json run.reason is %r" % m["run"]["reason"]
EOF
  ); then echo "$v" | tail -1; return; fi
  v=$("$cli" verify "$d" 2>&1)
  if [ $? -ne 0 ] || ! grep -Eq "^$arch: verified .*: verdict inconclusive" <<<"$v"; then
    echo "airlock verify does not accept it: $(head -3 <<<"$v" | tr '\n' ' ')"
  fi
}

# unfinished_problems DIR/ARCH [PATTERN]: a bundle kept as it was when the
# run stopped: INCOMPLETE (holding PATTERN), evidence.bin, no manifest, and
# verify refusing it for that.
unfinished_problems () {
  local d="$1" v
  if [ ! -e "$d/INCOMPLETE" ]; then echo "$d has no INCOMPLETE marker"; return; fi
  if [ ! -s "$d/evidence.bin" ]; then echo "$d has no evidence.bin, or an empty one"; return; fi
  if [ -e "$d/manifest.json" ]; then echo "$d has a manifest.json"; return; fi
  if [ -n "${2:-}" ] && ! grep -Eq -- "$2" "$d/INCOMPLETE"; then
    echo "INCOMPLETE does not say '$2': $(tr '\n' ' ' <"$d/INCOMPLETE")"; return
  fi
  v=$("$cli" verify "$d" 2>&1)
  if [ $? -ne 1 ] || ! grep -q "INCOMPLETE: the bundle was not finished" <<<"$v"; then
    echo "airlock verify does not refuse it as unfinished: $(head -2 <<<"$v" | tr '\n' ' ')"
  fi
}

# report NAME OUT PROBLEMS: one TAP line.
report () {
  if [ -z "$3" ]; then ok "$1"; else not_ok "$1" "$3" "$2"; fi
}

# gate_mode NAME MODE ARCHES REASON [CHECK]: a plain gate of the clean
# sample under guest test mode MODE on ARCHES (a comma list), one bundle per
# arch, each checked; CHECK, a function, is given the bundle and prints
# what else is wrong with it.
gate_mode () {
  local name="$1" mode="$2" reason="$4" extra="${5:-}" out="$work/$1.out" status arch p
  "$cli" gate --arch "$3" --image "$clean" --out "$work/$name" --test-mode "$mode" >"$out" 2>&1
  status=$?
  for arch in ${3//,/ }; do
    p=$(gate_problems "$out" "$arch" "$status" 3 "$reason")
    [ -n "$p" ] || p=$(finished_problems "$work/$name/$arch" "$reason")
    [ -n "$p" ] || [ -z "$extra" ] || p=$("$extra" "$work/$name/$arch")
    report "/faults/$name/$arch" "$out" "$p"
  done
}

# Is QEMU for ARCH (amd64, arm64) here, as airlock looks for it?
have_qemu () {
  local var=AIRLOCK_QEMU_X86_64 bin=qemu-system-x86_64
  [ "$1" = arm64 ] && var=AIRLOCK_QEMU_AARCH64 bin=qemu-system-aarch64
  if [ -n "${!var:-}" ]; then [ -x "${!var}" ]; else command -v "$bin" >/dev/null; fi
}
have_qemu amd64 || { echo "1..0 # SKIP qemu-system-x86_64 is not installed"; exit 0; }
arm64_missing=""
have_qemu arm64 || arm64_missing="qemu-system-aarch64 is not installed"

echo "1..18"

# ---- the evidence stream itself --------------------------------------------

# Random bytes where frame 1 should start: stopped at its first byte.
if [ -z "$arm64_missing" ]; then
  gate_mode garbage garbage amd64,arm64 'bad magic at byte [0-9]+, where frame 1 should start'
else
  gate_mode garbage garbage amd64 'bad magic at byte [0-9]+, where frame 1 should start'
  skip /faults/garbage/arm64 "$arm64_missing"
fi

gate_mode oversize oversize amd64 \
  'oversize frame: frame 1 at byte [0-9]+ declares a payload of 16385 bytes, the limit is 16384'

# An earlier frame sent again byte for byte: the sequence check catches it,
# and evidence.bin holds that frame's very bytes where the reason says.
replayed_bytes () {
  python3 - "$1" 2>&1 <<'EOF' | tail -1
import json, re, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
got = re.search(r"got frame (\d+) again at byte (\d+)", m["run"]["reason"])
seq, at = int(got.group(1)), int(got.group(2))
frame = [f for f in map(json.loads, open(d + "/frames.jsonl")) if f["seq"] == seq][0]
raw = open(d + "/evidence.bin", "rb").read()
orig = raw[frame["offset"]:frame["offset"] + frame["size"]]
if raw[at:at + len(orig)] != orig:
    print("the bytes at %d of evidence.bin are not those of frame %d" % (at, seq))
EOF
}
gate_mode replayed-frame replay-frame amd64 \
  'sequence replay or reorder: expected frame [0-9]+, got frame [0-9]+ again at byte [0-9]+' \
  replayed_bytes

gate_mode sequence-gap seq-gap amd64 'sequence gap: expected frame 3, got frame 4 at byte [0-9]+'

# The replay of a previous session's hello: the nonce an earlier gate of
# this test used (its bundle's manifest), echoed by this run's guest.
stale=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["nonce"])' \
        "$work/garbage/amd64/manifest.json" 2>/dev/null)
if [[ "$stale" =~ ^[0-9a-f]{64}$ ]]; then
  gate_mode stale-nonce "stale-nonce=$stale" amd64 \
    "wrong nonce: the hello \\(frame 0 at byte 0\\) echoes nonce $stale, but this run's nonce is [0-9a-f]{64}"
else
  not_ok /faults/stale-nonce/amd64 "no nonce in the garbage gate's bundle to replay"
fi

# A kernel crash while the image's workload runs (the clean server, its
# stdin held open): the controls' evidence stays, the workload's exit never
# comes.
for arch in amd64 arm64; do
  name="panic-mid-run-$arch"
  if [ "$arch" = arm64 ] && [ -n "$arm64_missing" ]; then skip "/faults/panic-mid-run/$arch" "$arm64_missing"; continue; fi
  start_held "$name" --arch "$arch" --image "$clean" --out "$work/$name" --test-mode panic-mid-run
  wait "$gate_pid"
  status=$?
  kill "$holder_pid" 2>/dev/null
  reason='guest kernel panic: Kernel panic - not syncing: sysrq triggered crash'
  p=$(gate_problems "$work/$name.out" "$arch" "$status" 3 "$reason")
  [ -n "$p" ] || p=$(finished_problems "$work/$name/$arch" "$reason")
  if [ -z "$p" ] && ! python3 - "$work/$name/$arch/events.jsonl" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert any(e["kind"] == "workload-start" and e["phase"] == "workload" for e in ev)
assert any(e.get("syscall") == "execve" and e.get("path") == "/usr/local/bin/clean-server" for e in ev)
assert not any(e["kind"] == "workload-exit" and e["phase"] == "workload" for e in ev)
EOF
  then p="events.jsonl does not show the crash during the workload (start and execve, no exit)"; fi
  report "/faults/panic-mid-run/$arch" "$work/$name.out" "$p"
done

# The guest powers off without a trailer: the channel closes early.
gate_mode channel-closed-early no-trailer amd64 \
  'closed early: the channel closed after frame [0-9]+ at byte [0-9]+, before any trailer'

# ---- the VM under the run ----------------------------------------------------

# The whole guest hangs: its QEMU stopped (SIGSTOP) mid-workload.  The
# heartbeats stop; the host ends the run and the stopped QEMU is gone.
start_held hang --arch amd64 --image "$clean" --out "$work/hang"
if wait_workload "$work/hang/amd64"; then
  kill -STOP "$qemu_pid"
  wait "$gate_pid"
  status=$?
  kill "$holder_pid" 2>/dev/null
  reason='heartbeat gap: no heartbeat for [0-9]+ ms since (heartbeat frame [0-9]+|the hello)'
  p=$(gate_problems "$work/hang.out" amd64 "$status" 3 "$reason")
  [ -n "$p" ] || p=$(finished_problems "$work/hang/amd64" "$reason")
  sleep 1
  [ -n "$p" ] || [ -z "$(qemu_of "$run_id")" ] || p="the stopped QEMU $qemu_pid was left behind"
  report /faults/guest-hang/amd64 "$work/hang.out" "$p"
else
  release_held
  not_ok /faults/guest-hang/amd64 "the workload never ran (exit $status)" "$work/hang.out"
fi

start_held qemu-killed --arch amd64 --image "$clean" --out "$work/qemu-killed"
if wait_workload "$work/qemu-killed/amd64"; then
  kill -9 "$qemu_pid"
  wait "$gate_pid"
  status=$?
  kill "$holder_pid" 2>/dev/null
  p=$(gate_problems "$work/qemu-killed.out" amd64 "$status" 3 'QEMU died before the trailer')
  [ -n "$p" ] || p=$(finished_problems "$work/qemu-killed/amd64" 'QEMU died before the trailer')
  report /faults/qemu-killed/amd64 "$work/qemu-killed.out" "$p"
else
  release_held
  not_ok /faults/qemu-killed/amd64 "the workload never ran (exit $status)" "$work/qemu-killed.out"
fi

# ---- the host under the run ----------------------------------------------------

# The disk of --out fills up mid-run (a 1 MiB tmpfs, filled once the
# workload runs).  The bundle cannot be finished: exit 4 (docs/bundle.md:
# "a bundle that could not be written whole makes gate exit 4, whatever the
# verdict"), the verdict shown as inconclusive with the reason, what had
# arrived kept under INCOMPLETE.
full="$work/full"
mkdir -p "$full"
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=1m,mode=0755 airlock-faults "$full" 2>"$work/mount.err"; then
  skip /faults/disk-full/amd64 "cannot mount a tmpfs here: $(cat "$work/mount.err" 2>/dev/null)"
else
  mounts+=("$full")
  start_held disk-full --arch amd64 --image "$clean" --out "$full/b"
  if wait_workload "$full/b/amd64"; then
    dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null
    release_held
    out="$work/disk-full.out"
    p=""
    if [ "$status" -ne 4 ]; then p="exit status $status, want 4"
    elif ! grep -Eq "^airlock gate: amd64: the bundle '$full/b/amd64' is incomplete: cannot write '[^']+': No space left on device$" "$out"; then
      p="the gate does not say the bundle is incomplete for want of space"
    elif grep -Eq '^  amd64 .* pass$' "$out" || ! grep -Eq '^  amd64 +.* inconclusive$' "$out"; then
      p="the verdict table does not say inconclusive"
    elif ! grep -Eq "^amd64: the evidence bundle '$full/b/amd64' could not be written: .*No space left on device; a verdict without its evidence does not count$" "$out"; then
      p="no reason line for the lost bundle"
    else
      p=$(unfinished_problems "$full/b/amd64" 'not finished: cannot write .*No space left on device')
    fi
    report /faults/disk-full/amd64 "$out" "$p"
  else
    release_held
    not_ok /faults/disk-full/amd64 "the workload never ran (exit $status)" "$work/disk-full.out"
  fi
  umount "$full" && mounts=()
fi

# The airlock process killed mid-run (SIGKILL: no cleanup of its own).
# What had arrived stays, marked INCOMPLETE; its QEMU, domain state and run
# files stay until the next run removes them.  A private cache and runtime
# directory (the guest and image caches shared through links), so that no
# other airlock sharing this cache sweeps them first.
pcache="$work/cache"
pxdg="$work/xdg"
mkdir -p "$pcache" && mkdir -m 0700 "$pxdg"
for sub in guest downloads accel image; do
  mkdir -p "$cache/$sub" && ln -s "$cache/$sub" "$pcache/$sub"
done
saved_xdg="${XDG_RUNTIME_DIR:-}"
export AIRLOCK_CACHE_DIR="$pcache" XDG_RUNTIME_DIR="$pxdg"
start_held killed --arch amd64 --image "$clean" --timeout 120 --out "$work/killed"
if wait_workload "$work/killed/amd64" "$pxdg/airlock"; then
  kill -9 "$gate_pid"
  wait "$gate_pid" 2>/dev/null
  kill "$holder_pid" 2>/dev/null
  killed_id="$run_id" killed_qemu="$qemu_pid"
  p=$(unfinished_problems "$work/killed/amd64" "started this bundle")
  report /faults/airlock-killed/bundle-kept-incomplete "$work/killed.out" "$p"

  dom="airlock-amd64-$killed_id"
  left=("$pxdg/airlock/$killed_id" "$pcache/runs/$killed_id")
  p=""
  [ "$(qemu_of "$killed_id")" = "$killed_qemu" ] || p="precondition: the killed run left no QEMU"
  for f in "${left[@]}" "$pcache"/libvirt/slot-*/run/qemu/"$dom".xml; do
    [ -n "$p" ] || [ -e "$f" ] || p="precondition: the killed run left no '$f'"
  done
  "$cli" gate --arch amd64 --image "$clean" --out "$work/after-kill" >"$work/after-kill.out" 2>&1
  status=$?
  if [ -n "$p" ]; then :
  elif [ "$status" -ne 0 ] || ! grep -Eq '^  amd64 .* pass$' "$work/after-kill.out"; then
    p="the next gate did not pass (exit $status)"
  elif ! grep -q "^airlock: removed domain '$dom' left behind by a crashed run$" "$work/after-kill.out"; then
    p="the next gate did not say it removed '$dom'"
  elif [ -n "$(qemu_of "$killed_id")" ]; then
    p="the killed run's QEMU $killed_qemu still runs"
  else
    for f in "${left[@]}" "$pcache"/libvirt/slot-*/run/qemu/"$dom".*; do
      [ -n "$p" ] || [ ! -e "$f" ] || p="'$f' is still there"
    done
  fi
  report /faults/airlock-killed/next-run-removes-leftovers "$work/after-kill.out" "$p"
else
  release_held
  not_ok /faults/airlock-killed/bundle-kept-incomplete "the workload never ran (exit $status)" "$work/killed.out"
  not_ok /faults/airlock-killed/next-run-removes-leftovers "not run: the killed gate never ran"
fi
export AIRLOCK_CACHE_DIR="$cache"
if [ -n "$saved_xdg" ]; then export XDG_RUNTIME_DIR="$saved_xdg"; else unset XDG_RUNTIME_DIR; fi

# Is a daemon listening on unix socket $1 (not just a file left by one that died)?
listening () {
  [ -S "$1" ] && python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$1" 2>/dev/null
}
forget_daemon () {
  local keep=() p
  for p in "${daemons[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  daemons=("${keep[@]}")
}

# qemu:///system with its libvirtd restarted (SIGTERM, as a service manager
# restarts it) or crashed and restarted (SIGKILL: the daemon never runs its
# AUTODESTROY, and the new one takes the running QEMU back) mid-run.  Only a
# libvirtd this test started: anyone else's is not ours to restart.
why=""
if [ "$(id -u)" -ne 0 ]; then why="needs root to start libvirtd"
elif ! command -v libvirtd >/dev/null || ! command -v virtlogd >/dev/null; then
  why="libvirtd or virtlogd is not installed (libvirt-daemon-system)"
elif ! id libvirt-qemu >/dev/null 2>&1; then why="no libvirt-qemu user"
elif listening /run/libvirt/libvirt-sock; then
  why="a libvirtd this test did not start is running: restarting it would disturb its users"
fi
start_libvirtd () {
  rm -f "$work/libvirtd.pid"
  libvirtd -d -p "$work/libvirtd.pid" || return 1
  for _ in $(seq 100); do
    [ -s "$work/libvirtd.pid" ] && listening /run/libvirt/libvirt-sock && break
    sleep 0.1
  done
  libvirtd_pid=$(cat "$work/libvirtd.pid" 2>/dev/null)
  [ -n "$libvirtd_pid" ] || return 1
  daemons+=("$libvirtd_pid")
  listening /run/libvirt/libvirt-sock
}
if [ -z "$why" ]; then
  runtime_mode=$(stat -c %a "$runtime" 2>/dev/null)
  mkdir -p /var/log/libvirt /var/run/libvirt /var/lib/libvirt/qemu
  if ! listening /run/libvirt/virtlogd-sock; then
    virtlogd -d -p "$work/virtlogd.pid" || why="virtlogd did not start"
    for _ in $(seq 50); do [ -s "$work/virtlogd.pid" ] && break; sleep 0.1; done
    [ -s "$work/virtlogd.pid" ] && daemons+=("$(cat "$work/virtlogd.pid")")
  fi
  [ -n "$why" ] || start_libvirtd || why="libvirtd did not start"
fi
for fault in restarted:TERM crashed:KILL; do
  name="libvirtd-${fault%%:*}"
  sig="${fault##*:}"
  if [ -n "$why" ]; then skip "/faults/$name/amd64" "$why"; continue; fi
  # --accel tcg: KVM's probe result is cached per URI; no probe to redo.
  start_held "$name" --arch amd64 --accel tcg --timeout 120 --connect qemu:///system \
    --image "$clean" --out "$work/$name"
  if ! wait_workload "$work/$name/amd64"; then
    release_held
    not_ok "/faults/$name/amd64" "the workload never ran (exit $status)" "$work/$name.out"
    continue
  fi
  kill -"$sig" "$libvirtd_pid"
  for _ in $(seq 200); do kill -0 "$libvirtd_pid" 2>/dev/null || break; sleep 0.1; done
  forget_daemon "$libvirtd_pid"   # gone: its pid is no longer ours to stop
  start_libvirtd || why="libvirtd did not start again"
  wait "$gate_pid"
  status=$?
  kill "$holder_pid" 2>/dev/null
  reason="the connection to libvirt 'qemu:///system' was lost before the trailer \\(its daemon stopped or restarted\\)"
  p=$(gate_problems "$work/$name.out" amd64 "$status" 3 "$reason")
  [ -n "$p" ] || p=$(finished_problems "$work/$name/amd64" "$reason")
  for _ in $(seq 30); do [ -z "$(qemu_of "$run_id")" ] && break; sleep 0.2; done
  [ -n "$p" ] || [ -z "$(qemu_of "$run_id")" ] || p="domain airlock-amd64-$run_id was left running"
  report "/faults/$name/amd64" "$work/$name.out" "$p"
done

# ---- the image cache ---------------------------------------------------------

# A private copy of the clean sample whose amd64 manifest carries an
# annotation of this run: its own digest, so its own cached disk, which
# nobody else runs while it is corrupted (and which cleanup removes).
img="$work/img"
key=$(python3 - "$samples/clean" "$img" "faults-$$-$RANDOM" <<'EOF'
import hashlib, json, os, shutil, sys
src, dst, tag = sys.argv[1:]
shutil.copytree(src, dst)
blobs = os.path.join(dst, "blobs", "sha256")
def read(d): return open(os.path.join(blobs, d.split(":")[1]), "rb").read()
def put(obj):
    data = json.dumps(obj, separators=(",", ":")).encode()
    h = hashlib.sha256(data).hexdigest()
    open(os.path.join(blobs, h), "wb").write(data)
    return "sha256:" + h, len(data)
top = json.load(open(os.path.join(dst, "index.json")))
inner = json.loads(read(top["manifests"][0]["digest"]))
for m in inner["manifests"]:
    if m["platform"]["architecture"] == "amd64":
        man = json.loads(read(m["digest"]))
        man["annotations"] = {"org.airlock.test.faults": tag}
        m["digest"], m["size"] = put(man)
        print(m["digest"].split(":")[1])
top["manifests"][0]["digest"], top["manifests"][0]["size"] = put(inner)
open(os.path.join(dst, "index.json"), "w").write(json.dumps(top, separators=(",", ":")))
EOF
)
[[ "$key" =~ ^[0-9a-f]{64}$ ]] && image_keys+=("$key")

# disk_problems: the private image's cached disk is whole (its SHA-256 is
# the one disk.json records) and no temporary build is left.
disk_problems () {
  local dir
  dir=$(echo "$cache/image/$key"-*)
  python3 - "$dir" <<'EOF' || echo "the cached disk in $dir is not what disk.json records"
import hashlib, json, os, sys
d = sys.argv[1]
meta = json.load(open(os.path.join(d, "disk.json")))
h = hashlib.sha256()
with open(os.path.join(d, "rootfs.ext4"), "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        h.update(block)
assert h.hexdigest() == meta["sha256"], (h.hexdigest(), meta["sha256"])
assert not [n for n in os.listdir(d) if n.startswith(".build-")]
EOF
}

# Two gates of one image at once, its disk not built yet: one builds it
# under the cache's lock while the other waits, then both run on it (two
# embedded slots, two VMs) and pass.
"$cli" gate --arch amd64 --image "oci:$img" --out "$work/two-a" >"$work/two-a.out" 2>&1 &
ga=$!
"$cli" gate --arch amd64 --image "oci:$img" --out "$work/two-b" >"$work/two-b.out" 2>&1 &
gb=$!
wait "$ga"; sa=$?
wait "$gb"; sb=$?
cat "$work/two-a.out" "$work/two-b.out" >"$work/two.out"
p=""
if [ "$sa" -ne 0 ] || [ "$sb" -ne 0 ]; then p="exit statuses $sa and $sb, want 0 and 0"
elif [ "$(grep -c '^  amd64 .* pass$' "$work/two.out")" -ne 2 ]; then p="not both verdicts pass"
elif [ "$(grep -c '^airlock: start the libguestfs appliance' "$work/two.out")" -ne 1 ]; then
  p="the disk was not built exactly once"
elif ! grep -q "^airlock: wait for another airlock building the disk of image 'oci:$img' (amd64)$" "$work/two.out"; then
  p="neither gate waited for the other's build"
else
  p=$(disk_problems)
  for d in two-a two-b; do
    [ -n "$p" ] || "$cli" verify "$work/$d/amd64" | grep -Eq '^amd64: verified .*: verdict pass' \
      || p="the bundle of $d does not verify as a pass"
  done
fi
report /faults/two-gates-at-once "$work/two.out" "$p"

# One byte of the cached disk flipped: the gate finds it damaged, says so,
# rebuilds it and runs on the rebuilt disk, never on the corrupted one.
disk=$(echo "$cache/image/$key"-*/rootfs.ext4)
p=""
if [ ! -f "$disk" ]; then p="no cached disk to corrupt"
else
  python3 - "$disk" <<'EOF'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(1 << 20)
    b = f.read(1)
    f.seek(1 << 20)
    f.write(bytes([b[0] ^ 0x40]))
EOF
  "$cli" gate --arch amd64 --image "oci:$img" --out "$work/corrupt" >"$work/corrupt.out" 2>&1
  status=$?
  if [ "$status" -ne 0 ] || ! grep -Eq '^  amd64 .* pass$' "$work/corrupt.out"; then
    p="the gate did not pass on a rebuilt disk (exit $status)"
  elif ! grep -Eq "^airlock: the cached disk '$disk' of image 'oci:$img' is damaged \(its SHA-256 is [0-9a-f]{64}, not the [0-9a-f]{64} recorded when it was built\); rebuilding it$" "$work/corrupt.out"; then
    p="the gate did not say the cached disk is damaged and rebuilt"
  else
    p=$(disk_problems)
  fi
fi
report /faults/corrupted-disk-rebuilt "$work/corrupt.out" "$p"
