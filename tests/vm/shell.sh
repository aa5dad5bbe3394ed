#!/bin/bash
# `airlock shell` as a person uses it, driven through tmux on both arches:
# a detached tmux session of a fixed size runs `airlock shell --out` on the
# clean sample; the test waits for the prompt, types into it and reads the
# pane.  Checked: the guest terminal has tmux's size and follows a resize;
# a connect the shell's command makes (nc to the documentation address
# 198.51.100.80: in the guest the sinkhole network accepts it; nothing
# leaves this host) is shown live as an "[airlock] …"
# line; Ctrl-C interrupts a `sleep 30` in the guest (SIGINT from the guest's
# line discipline); `exit`, and in a second session Ctrl-D at the prompt,
# end the shell and the run; our terminal is restored (stty -g before and
# after); the bundle has its manifest and records the connect.  Then an
# image without /bin/sh gets airlock's static shell, read-only at
# /.airlock/bin/sh, here with its commands on a pipe (no terminal).
# TAP output.
set -u

cli="${AIRLOCK_CLI:?run through meson test}"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"
if ! command -v tmux >/dev/null; then
  echo "1..0 # SKIP tmux is not installed (scripts/setup installs it)"
  exit 0
fi
work=$(mktemp -d)
out="$work/out.txt"
# A tmux server of our own (its socket in our directory), so our sessions
# get this test's environment and nobody else's sessions are touched.
# shellcheck source=run-lib.sh
. "$(dirname "$0")/run-lib.sh"   # run_ids_of, qemu_of
sessions=()
tm () { tmux -S "$work/tmux.sock" "$@"; }
cleanup () {
  for s in "${sessions[@]}"; do tm kill-session -t "$s" 2>/dev/null; done
  tm kill-server 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
n=0
ok () { n=$((n + 1)); echo "ok $n $1"; }
skip () { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
not_ok () { n=$((n + 1)); echo "not ok $n $1 # $2"; sed 's/^/# /' "$out"; }

# airlock's static shell is built from the pinned busybox-static the sample
# images were built from: a .deb already in the downloads directory that
# matches the pin is used as is, so the test downloads nothing more.
mkdir -p "$AIRLOCK_CACHE_DIR/downloads"
cp -n "$samples"/downloads/busybox-static_*.deb "$AIRLOCK_CACHE_DIR/downloads/" 2>/dev/null

# What runs in the pane: airlock shell between two snapshots of the
# terminal's settings, then a marker line with its exit status (the
# wrapper itself ignores the SIGINT a ^C sends the pane's foreground).
cat >"$work/wrap.sh" <<EOF
#!/bin/bash
export AIRLOCK_CACHE_DIR='$AIRLOCK_CACHE_DIR' AIRLOCK_DATA_DIR='${AIRLOCK_DATA_DIR:-}'
export AIRLOCK_GUEST_DIR='${AIRLOCK_GUEST_DIR:-}' G_DEBUG='${G_DEBUG:-}'
trap '' INT
before=\$(stty -g)
( trap - INT; exec "\$@" )
status=\$?
after=\$(stty -g)
if [ "\$before" = "\$after" ]; then echo "SHELL-DONE restored status=\$status"
else echo "SHELL-DONE changed status=\$status"; fi
sleep 3600
EOF
chmod +x "$work/wrap.sh"

pane () { tm capture-pane -p -J -t "$1" -S -3000 2>/dev/null; }
# wait_for SESSION REGEX SECONDS: until a line of the pane matches.
wait_for () {
  local s="$1" re="$2" deadline=$((SECONDS + $3))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if pane "$s" | grep -Eq -- "$re"; then return 0; fi
    sleep 0.5
  done
  pane "$s" >"$out"
  return 1
}
# A prompt alone on its line; after a job Ctrl-C ended, it can follow the
# kernel's echo of the ^C on the same line ("^C~ $ ").
prompt='^(\^C)?(~|/)[^ ]* [$#] ?$'
# type SESSION TEXT: a line, after the prompt is back.
type_line () { wait_for "$1" "$prompt" 30; tm send-keys -t "$1" -l -- "$2"; tm send-keys -t "$1" Enter; }
start () {   # start SESSION ARGS...: a 100x30 pane running the wrapper
  local s="$1"
  shift
  sessions+=("$s")
  tm new-session -d -s "$s" -x 100 -y 30 "$work/wrap.sh $*"
}

echo "1..21"
for arch in amd64 arm64; do
  s="shell-$arch-$$"
  start "$s" "$cli" shell --arch "$arch" --image "oci-archive:$samples/clean.tar" --out "$work/out1-$arch" \
    --timeout 600
  if ! wait_for "$s" "$prompt|SHELL-DONE" 300 || pane "$s" | grep -q "SHELL-DONE"; then
    pane "$s" >"$out"
    if grep -q "cannot run $arch guests here" "$out"; then
      for t in prompt winsize attempt-shown-live ctrl-c resize exit-restores-terminal bundle ctrl-d; do
        skip "/shell/$arch/$t" "no QEMU for $arch here"
      done
      continue
    fi
    not_ok "/shell/$arch/prompt" "no prompt within 300 s"
    for t in winsize attempt-shown-live ctrl-c resize exit-restores-terminal bundle ctrl-d; do
      not_ok "/shell/$arch/$t" "the shell did not start"
    done
    continue
  fi
  if pane "$s" | grep -q '^\[airlock\] shell: /bin/sh, the image'"'"'s own'; then
    ok "/shell/$arch/prompt"
  else
    pane "$s" >"$out"; not_ok "/shell/$arch/prompt" "no '[airlock] shell: /bin/sh' line"
  fi

  type_line "$s" "stty size"
  if wait_for "$s" '^30 100$' 20; then ok "/shell/$arch/winsize"
  else not_ok "/shell/$arch/winsize" "stty size in the guest is not tmux's 30 100"; fi

  type_line "$s" "nc 198.51.100.80 80 </dev/null; echo nc-done"
  if wait_for "$s" '^\[airlock\] nc\[[0-9]+\] connect continue inet/stream/tcp 198\.51\.100\.80:80: ok$' 30 \
     && wait_for "$s" '^nc-done$' 10; then
    ok "/shell/$arch/attempt-shown-live"
  else
    not_ok "/shell/$arch/attempt-shown-live" "no live '[airlock] nc[N] connect … 198.51.100.80:80' line"
  fi

  # The marker says the shell is running the line: the ^C then reaches the
  # sleep, not the line editor (a loaded host once took over 3 s).
  type_line "$s" "echo sleep-started; sleep 30"
  wait_for "$s" '^sleep-started$' 30
  sleep 1
  began=$SECONDS
  tm send-keys -t "$s" C-c
  # Apart from the ^C: the line discipline flushes what is queued with it.
  sleep 1
  type_line "$s" 'echo "sleep-status=$?"'
  if wait_for "$s" '^sleep-status=130$' 20 && [ $((SECONDS - began)) -lt 20 ]; then
    ok "/shell/$arch/ctrl-c"
  else
    not_ok "/shell/$arch/ctrl-c" "Ctrl-C did not end 'sleep 30' with SIGINT (status 130)"
  fi

  tm resize-window -t "$s" -x 120 -y 40
  sleep 1
  type_line "$s" "stty size"
  if wait_for "$s" '^40 120$' 20; then ok "/shell/$arch/resize"
  else not_ok "/shell/$arch/resize" "after resize-window, stty size in the guest is not 40 120"; fi

  type_line "$s" "exit"
  if wait_for "$s" '^SHELL-DONE restored status=0$' 120; then ok "/shell/$arch/exit-restores-terminal"
  else not_ok "/shell/$arch/exit-restores-terminal" "exit did not end airlock shell with status 0 and the terminal as it was"; fi

  # One session's --out is one set of bundles (set.json): a directory per
  # session, and the set verifies.
  b="$work/out1-$arch/$arch"
  if [ -f "$b/manifest.json" ] && [ ! -e "$b/INCOMPLETE" ] \
     && grep -q '"key":"connect continue inet/stream/tcp 198.51.100.80:80"' "$b/events.jsonl" \
     && "$cli" verify "$work/out1-$arch" >"$out" 2>&1; then
    ok "/shell/$arch/bundle"
  else
    ls -la "$b" >>"$out" 2>&1
    not_ok "/shell/$arch/bundle" "no complete bundle in $b recording the connect, or its set does not verify"
  fi

  # Ctrl-D at the prompt, with the negative controls first.
  s="shell-$arch-ctrl-d-$$"
  start "$s" "$cli" shell --arch "$arch" --image "oci-archive:$samples/clean.tar" --controls \
    --out "$work/out2-$arch" --timeout 600
  if wait_for "$s" "$prompt" 300 && pane "$s" | grep -Eq '^\[airlock\] negative controls: [0-9]+ records'; then
    tm send-keys -t "$s" C-d
    if wait_for "$s" '^SHELL-DONE restored status=0$' 120 && [ -f "$work/out2-$arch/$arch/manifest.json" ]; then
      ok "/shell/$arch/ctrl-d"
    else
      not_ok "/shell/$arch/ctrl-d" "Ctrl-D at the prompt did not end the run (status 0, terminal restored, a bundle)"
    fi
  else
    not_ok "/shell/$arch/ctrl-d" "no prompt after the negative controls' line"
  fi
done

# ^C while the guest boots is still ours: it ends the session, the VM torn
# down and the bundle finished (inconclusive), the terminal restored, and
# airlock shell ends by SIGINT (status 130).  "While the guest boots" is
# made to last: the run's QEMU (found by the airlock process in the pane,
# never another run's) is stopped as soon as it exists, so the shell
# cannot start before the ^C, however slow this machine is.  Its boot
# takes seconds; the QEMU is found within a fraction of one.
s="shell-boot-ctrl-c-$$"
start "$s" "$cli" shell --arch amd64 --image "oci-archive:$samples/clean.tar" --out "$work/out3" \
  --timeout 600
held="" run_id=""
leader=$(tm display-message -p -t "$s" '#{pane_pid}' 2>/dev/null)
# hold_qemu: stops a live QEMU of a run of the pane's airlock (the pane's
# processes are one session, led by its first process) and says whether
# one is held.  A QEMU that ended before it could be stopped (the KVM
# probe's, which boots a VM of its own first and may fail at once) is not
# held: the run's comes after it.
hold_qemu () {
  local p id q
  [ -n "$leader" ] || return 1
  for p in $(pgrep -s "$leader"); do
    for id in $(run_ids_of "$p"); do
      q=$(qemu_of "$id")
      [ -n "$q" ] || continue
      kill -STOP "$q" 2>/dev/null || continue
      if grep -q '^State:[[:space:]]*T' "/proc/$q/status" 2>/dev/null; then
        held=$q run_id=$id
        return 0
      fi
    done
  done
  return 1
}
# still_held: the held QEMU is still there, stopped (a probe's would have
# been ended by the probe's timeout, and the run's started after it).
still_held () {
  [ -n "$held" ] && grep -q '^State:[[:space:]]*T' "/proc/$held/status" 2>/dev/null \
    && [ "$(qemu_of "$run_id")" = "$held" ]
}
# hold_soon: hold_qemu, tried for up to a minute, until the session ends.
hold_soon () {
  for _ in $(seq 1200); do
    hold_qemu && return 0
    pane "$s" | grep -q SHELL-DONE && return 1
    sleep 0.05
  done
  return 1
}
hold_soon
# Once the run has said it starts its shell, the QEMU held must be the
# run's: if the one held was a probe's, hold the run's now (its boot
# takes seconds; it is found within a fraction of one).
if [ -n "$held" ] && wait_for "$s" '^airlock: amd64: a shell in ' 120 && ! still_held; then
  [ -n "$held" ] && kill -CONT "$held" 2>/dev/null
  held="" run_id=""
  hold_soon
fi
if [ -z "$held" ]; then
  pane "$s" >"$out"
  not_ok "/shell/amd64/ctrl-c-while-booting-ends-the-session" "the run's QEMU was never found to hold"
elif wait_for "$s" '^airlock: amd64: a shell in ' 120; then
  tm send-keys -t "$s" C-c
  if wait_for "$s" '^SHELL-DONE restored status=130$' 90 \
     && pane "$s" | grep -q 'the session was ended by SIGINT' \
     && ! pane "$s" | grep -q '^\[airlock\] shell: ' \
     && [ -f "$work/out3/amd64/manifest.json" ] && [ ! -e "$work/out3/amd64/INCOMPLETE" ] \
     && grep -q '"verdict" *: *"inconclusive"' "$work/out3/amd64/verdict.json"; then
    ok "/shell/amd64/ctrl-c-while-booting-ends-the-session"
  else
    pane "$s" >"$out"; ls -la "$work/out3/amd64" >>"$out" 2>&1
    not_ok "/shell/amd64/ctrl-c-while-booting-ends-the-session" \
      "no SIGINT end with the terminal restored and a finished, inconclusive bundle"
  fi
else
  not_ok "/shell/amd64/ctrl-c-while-booting-ends-the-session" "airlock shell did not start a VM"
fi
# The held QEMU, if the session left it (still the one of our run).
if [ -n "$held" ] && [ "$(qemu_of "$run_id")" = "$held" ]; then kill -9 "$held"; fi

# An image without a shell: the clean sample's server alone, one layer per
# arch, an OCI layout written here.
python3 - "$work/noshell" "$samples" <<'EOF'
import hashlib, io, json, os, sys, tarfile
out, samples = sys.argv[1], sys.argv[2]
blobs = os.path.join(out, "blobs", "sha256")
os.makedirs(blobs)
def blob(data):
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(blobs, d), "wb").write(data)
    return {"digest": "sha256:" + d, "size": len(data)}
manifests = []
for arch in ("amd64", "arm64"):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        data = open(os.path.join(samples, "clean-server-" + arch), "rb").read()
        info = tarfile.TarInfo("server")
        info.size, info.mode, info.mtime = len(data), 0o755, 0
        t.addfile(info, io.BytesIO(data))
    layer = blob(buf.getvalue())
    config = blob(json.dumps({
        "architecture": arch, "os": "linux",
        "config": {"Entrypoint": ["/server"], "Env": ["PATH=/usr/bin:/bin"]},
        "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]}}).encode())
    manifest = blob(json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": dict(mediaType="application/vnd.oci.image.config.v1+json", **config),
        "layers": [dict(mediaType="application/vnd.oci.image.layer.v1.tar", **layer)]}).encode())
    manifests.append(dict(mediaType="application/vnd.oci.image.manifest.v1+json",
                          platform={"architecture": arch, "os": "linux"}, **manifest))
json.dump({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
           "manifests": manifests}, open(os.path.join(out, "index.json"), "w"))
open(os.path.join(out, "oci-layout"), "w").write('{"imageLayoutVersion":"1.0.0"}')
EOF
for arch in amd64 arm64; do
  printf '%s\n' 'echo "shell=$0"' 'touch /.airlock/x || echo read-only' \
    'nc 198.51.100.80 80 </dev/null' 'exit 7' \
    | "$cli" shell --arch "$arch" --image "oci:$work/noshell" --timeout 300 >"$out" 2>&1
  status=$?
  if grep -q "cannot run $arch guests here" "$out"; then
    skip "/shell/$arch/static-shell" "no QEMU for $arch here"
    skip "/shell/$arch/static-shell-attempt" "no QEMU for $arch here"
    continue
  fi
  if [ "$status" -eq 0 ] && grep -q '^\[airlock\] shell: /.airlock/bin/sh, airlock'"'"'s static busybox' "$out" \
     && grep -qx 'shell=/.airlock/bin/sh' "$out" && grep -qx 'read-only' "$out" \
     && grep -q 'the shell exited 7' "$out"; then
    ok "/shell/$arch/static-shell"
  else
    not_ok "/shell/$arch/static-shell" "status $status; not airlock's read-only static shell, or its exit status lost"
  fi
  if grep -Eq '^\[airlock\] nc\[[0-9]+\] connect continue inet/stream/tcp 198\.51\.100\.80:80: ok$' "$out"; then
    ok "/shell/$arch/static-shell-attempt"
  else
    not_ok "/shell/$arch/static-shell-attempt" "no '[airlock] nc[N] connect … 198.51.100.80:80' line"
  fi
done
