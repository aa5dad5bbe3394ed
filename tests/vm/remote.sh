#!/bin/bash
# airlock on a remote hypervisor, on one machine: a system libvirtd reached
# through qemu+ssh:// (an sshd of this test's own on 127.0.0.1, with a key
# made for it), and a cache directory QEMU's user cannot read, so the
# hypervisor has of airlock only what went through libvirt: the guest files
# as storage volumes, the evidence, console and network as channel streams.
# Gates of the samples on both arches: clean passes, egress fails with its
# destinations in the bundle, every bundle verifies; the volumes are named
# by the digests the manifests record; a volume whose bytes changed on the
# hypervisor is replaced, not booted from; doctor reports the pool.
# Starts sshd (and libvirtd/virtlogd when none runs) and stops them by pid;
# removes the volumes (and the pool) it made and its known_hosts line.
# A pool of the embedded driver and the remote host runs both arches at
# once, one on each, and two images at once; a pool whose first host
# cannot take the guest's files (its storage pool broken on purpose) runs
# the arch again on the other;
# one whose remote daemon crashes mid-run (SIGKILL, only a libvirtd this
# test started) runs it again on the other too, the lost attempt's bundle
# kept and verified with the set, which refuses it unnamed or passing.
set -u

cli="${AIRLOCK_CLI:?run through meson test}"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"
cache="${AIRLOCK_CACHE_DIR:?run through meson test}"
tests=(/remote/gate-clean-passes /remote/manifest-names-the-hypervisor
       /remote/gate-egress-fails-with-destinations /remote/volumes-named-by-digest
       /remote/guest-files-not-shared /remote/changed-volume-replaced /remote/doctor
       /remote/pool-runs-both-arches-at-once /remote/pool-retries-on-another-host
       /remote/pool-gates-images-at-once
       /remote/pool-retries-a-host-lost-mid-run /remote/lost-attempt-is-part-of-the-set)
echo "1..${#tests[@]}"
skip() { local i; for i in "${!tests[@]}"; do echo "ok $((i + 1)) ${tests[$i]} # SKIP $1"; done; exit 0; }

work=$(mktemp -d)   # 0700: libvirt-qemu cannot reach anything in it
out="$work/out.txt"
pool_before=
vols_before=
pool_dir=/var/lib/libvirt/airlock
n=0
ok () { n=$((n + 1)); echo "ok $n $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n $1 # $2"; sed 's/^/# /' "$out"; }

. "$(dirname "$0")/libvirtd-lib.sh"
. "$(dirname "$0")/sshd-lib.sh"

cleanup () {
  local v
  # The storage pool's directory, when the retry case broke it.
  if [ -d "$pool_dir.test-aside" ]; then
    rm -f "$pool_dir"; mv "$pool_dir.test-aside" "$pool_dir"
    virsh -c qemu:///system pool-start airlock >/dev/null 2>&1
  fi
  if [ -n "${uri:-}" ]; then
    # The volumes this test made, and the pool when it made that too.
    for v in $(virsh -c qemu:///system vol-list airlock 2>/dev/null | awk '/airlock-sha256-/ {print $1}'); do
      grep -qx "$v" <<<"$vols_before" || virsh -c qemu:///system vol-delete "$v" --pool airlock >/dev/null 2>&1
    done
    if [ -z "$pool_before" ]; then
      virsh -c qemu:///system pool-destroy airlock >/dev/null 2>&1
      virsh -c qemu:///system pool-delete airlock >/dev/null 2>&1
      virsh -c qemu:///system pool-undefine airlock >/dev/null 2>&1
    fi
  fi
  [ -n "${holder_pid:-}" ] && kill "$holder_pid" 2>/dev/null
  [ -n "${gate_pid:-}" ] && kill "$gate_pid" 2>/dev/null && wait "$gate_pid" 2>/dev/null
  sshd_stop
  libvirtd_stop
  rm -rf "$work"
}
trap cleanup EXIT

libvirtd_start
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
sshd_start "$work"
uri=$remote_uri
pool_before=$(virsh -c qemu:///system pool-list --all --name 2>/dev/null | grep -x airlock)
vols_before=$(virsh -c qemu:///system vol-list airlock 2>/dev/null | awk '/airlock-sha256-/ {print $1}')

# A cache of this airlock's own, where QEMU's user cannot look: the guest
# images and rootfs disks of the test cache, linked (or copied) in.
mkdir -p "$work/cache"
for d in guest image downloads; do
  [ -d "$cache/$d" ] && { cp -al "$cache/$d" "$work/cache/" 2>/dev/null || cp -a "$cache/$d" "$work/cache/"; }
done
export AIRLOCK_CACHE_DIR="$work/cache"

# 1-2: clean passes on both arches, and its manifests name the hypervisor.
"$cli" gate --image "oci-archive:$samples/clean.tar" --connect "$uri" --out "$work/clean" >"$out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -Eq '^  amd64 .* pass$' "$out" && grep -Eq '^  arm64 .* pass$' "$out" \
   && "$cli" verify "$work/clean" >>"$out" 2>&1; then
  ok /remote/gate-clean-passes
else not_ok /remote/gate-clean-passes "exit $rc, or not a verified pass on both arches"; fi

qemu_v=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9.]*\).*/\1/p')
if python3 - "$work/clean" "$uri" "$qemu_v" >"$out" 2>&1 <<'EOF'
import json, sys
d, uri, qemu = sys.argv[1:4]
for arch in ("amd64", "arm64"):
    m = json.load(open(f"{d}/{arch}/manifest.json"))
    assert m["inputs"]["libvirt"]["uri"] == uri, m["inputs"]["libvirt"]
    assert m["inputs"]["qemu"]["version"] == qemu, m["inputs"]["qemu"]
    assert m["run"]["complete"] is True and m["run"]["pcap_error"] is None, m["run"]
EOF
then ok /remote/manifest-names-the-hypervisor
else not_ok /remote/manifest-names-the-hypervisor "a manifest does not name $uri and QEMU $qemu_v"; fi

# 3: egress fails, its destinations in the sinkhole's records and the
# capture of each arch.
"$cli" gate --image "oci-archive:$samples/egress.tar" --connect "$uri" --out "$work/egress" >"$out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -Eq '^  amd64 .* fail$' "$out" && grep -Eq '^  arm64 .* fail$' "$out" \
   && "$cli" verify "$work/egress" >>"$out" 2>&1 \
   && python3 - "$work/egress" >>"$out" 2>&1 <<'EOF'
import json, os, sys
d = sys.argv[1]
for arch in ("amd64", "arm64"):
    recs = [json.loads(l) for l in open(f"{d}/{arch}/network.jsonl")]
    questions = {q for r in recs if r.get("kind") == "dns" for q in [r.get("question")]}
    assert "example.com." in questions, (arch, questions)
    tcp = {(r.get("port"), r.get("tls_sni") or r.get("http_host")) for r in recs if r.get("kind") == "tcp"}
    assert any(p == 443 for p, _ in tcp) and any(p == 80 for p, _ in tcp), (arch, tcp)
    assert os.path.getsize(f"{d}/{arch}/net.pcap") > 1000, arch
EOF
then ok /remote/gate-egress-fails-with-destinations
else not_ok /remote/gate-egress-fails-with-destinations "exit $rc, or the destinations are not in both bundles"; fi

# 4: the hypervisor holds volumes named by the digests the manifests record.
virsh -c "$uri" vol-list airlock >"$work/vols" 2>&1
missing=
for arch in amd64 arm64; do
  for k in kernel initramfs; do
    sha=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["inputs"][sys.argv[2]]["sha256"])' \
          "$work/clean/$arch/manifest.json" "$k")
    grep -q "airlock-sha256-$sha " "$work/vols" || missing="$missing $arch/$k:$sha"
  done
done
cp "$work/vols" "$out"
if [ -z "$missing" ]; then ok /remote/volumes-named-by-digest
else not_ok /remote/volumes-named-by-digest "no volume for$missing"; fi

# 5: what the domains booted from was not this airlock's cache: QEMU's
# user cannot read it, and yet the clean gate above booted and passed on
# both arches (its verdicts, read again here).
kernel=$(find "$work/cache/guest/amd64" -name vmlinux -o -name Image | head -1)
passed=$(python3 -c 'import json, sys; print(sum(json.load(open(f))["verdict"] == "pass" for f in sys.argv[1:]))' \
         "$work/clean/amd64/verdict.json" "$work/clean/arm64/verdict.json" 2>/dev/null)
if [ -n "$kernel" ] && [ "${passed:-0}" -eq 2 ] && ! setpriv --reuid=libvirt-qemu --regid=libvirt-qemu --clear-groups \
       test -r "$kernel" 2>/dev/null && [ -r "$kernel" ]; then
  ok /remote/guest-files-not-shared
else echo "kernel: $kernel" >"$out"; not_ok /remote/guest-files-not-shared "libvirt-qemu can read the local cache"; fi

# 6: a volume whose bytes changed on the hypervisor is not booted from: it
# is replaced by the right bytes, and the gate is the same.
sha=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["inputs"]["kernel"]["sha256"])' \
      "$work/clean/amd64/manifest.json")
vol="$pool_dir/airlock-sha256-$sha"
if [ -f "$vol" ]; then
  printf 'X' | dd of="$vol" bs=1 seek=4096 conv=notrunc 2>/dev/null
  changed=$(sha256sum "$vol" | cut -d' ' -f1)
  "$cli" gate --image "oci-archive:$samples/clean.tar" --arch amd64 --connect "$uri" \
    --out "$work/clean2" >"$out" 2>&1
  rc=$?
  after=$(sha256sum "$vol" 2>/dev/null | cut -d' ' -f1)
  if [ "$changed" != "$sha" ] && [ "$rc" -eq 0 ] && [ "$after" = "$sha" ]; then
    ok /remote/changed-volume-replaced
  else not_ok /remote/changed-volume-replaced "exit $rc; volume now sha256 $after, want $sha"; fi
else
  echo "no $vol" >"$out"; not_ok /remote/changed-volume-replaced "the kernel's volume is not in $pool_dir"
fi

# 7: doctor reports the pool it found.
"$cli" doctor --connect "$uri" >"$out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -Eq "^  ok   guest files +pool 'airlock' at [^ ]+, [0-9]+ volume\(s\)$" "$out"; then
  ok /remote/doctor
else not_ok /remote/doctor "exit $rc, or no guest files line naming the pool"; fi

# 8: a pool of two hosts, one slot each: amd64 on the first (the embedded
# driver), arm64 on the second (the remote daemon), at the same time.
"$cli" gate --image "oci-archive:$samples/clean.tar" --connect qemu:///embed --connect "$uri" \
  --out "$work/pool" >"$out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^amd64: hypervisor qemu:///embed?root=' "$out" \
   && grep -qF "arm64: hypervisor $uri" "$out" \
   && python3 - "$work/pool" "$uri" >>"$out" 2>&1 <<'EOF'
import datetime, json, sys
d, uri = sys.argv[1:3]
m = {a: json.load(open(f"{d}/{a}/manifest.json")) for a in ("amd64", "arm64")}
assert m["amd64"]["inputs"]["libvirt"]["uri"].startswith("qemu:///embed?root="), m["amd64"]["inputs"]["libvirt"]
assert m["arm64"]["inputs"]["libvirt"]["uri"] == uri, m["arm64"]["inputs"]["libvirt"]
t = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
a, b = m["amd64"]["run"], m["arm64"]["run"]
assert t(a["started"]) <= t(b["finished"]) and t(b["started"]) <= t(a["finished"]), (a, b)
EOF
then ok /remote/pool-runs-both-arches-at-once
else not_ok /remote/pool-runs-both-arches-at-once "exit $rc, or the arches did not run on one host each at once"; fi

# 9: the remote host first, its storage pool broken (the directory a file):
# it cannot take the guest's files, so the run goes to the embedded driver,
# and the gate says which host failed and which ran it.
virsh -c qemu:///system pool-destroy airlock >/dev/null 2>&1
mv "$pool_dir" "$pool_dir.test-aside" && : >"$pool_dir"
"$cli" gate --image "oci-archive:$samples/clean.tar" --arch arm64 --connect "$uri" \
  --connect qemu:///embed --out "$work/retry" >"$out" 2>&1
rc=$?
rm -f "$pool_dir"; mv "$pool_dir.test-aside" "$pool_dir"
virsh -c qemu:///system pool-start airlock >/dev/null 2>&1
if [ "$rc" -eq 0 ] && grep -qF "after the first failed to start it ($uri: " "$out" \
   && grep -Eq '^arm64: hypervisor qemu:///embed\?root=[^ ]+, after the first failed to start it \(.*storage pool' "$out" \
   && "$cli" verify "$work/retry" >>"$out" 2>&1; then
  ok /remote/pool-retries-on-another-host
  grep '^arm64: hypervisor' "$out" | sed 's/^/# /'
else not_ok /remote/pool-retries-on-another-host "exit $rc, or no retry on the embedded driver reported"; fi

# 10: two images over a pool of two hosts, one slot each: both gate at
# once (one on each host), each image's report printed whole, the table
# and the exit status over both.  Their disks cached, both images ask the
# pool for a host within milliseconds, and both probe the hosts then: the
# one that takes the remote host (first in the list) holds its only slot,
# so the other must be given the embedded driver.  (A pool that went on
# with a scan begun before a probe gave both the remote host;
# tests/unit/test-hosts.c holds the probes to make that interleaving
# certain.)
"$cli" gate --image "oci-archive:$samples/clean.tar" --image "oci-archive:$samples/egress.tar" \
  --arch amd64 --connect "$uri" --connect qemu:///embed --out "$work/many" >"$out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q '^airlock gate: 2 images, 2 at once over the pool of hypervisors$' "$out" \
   && grep -Eq "^  oci-archive:$samples/clean\\.tar +pass +- +0 +$work/many/01-clean\\.tar\$" "$out" \
   && grep -Eq "^  oci-archive:$samples/egress\\.tar +fail +- +1 +$work/many/02-egress\\.tar\$" "$out" \
   && python3 - "$work/many" "$out" >>"$out" 2>&1 <<'PY'
import datetime, json, sys
d, out = sys.argv[1:3]
m = {}
for n in ("01-clean", "02-egress"):
    m[n] = json.load(open(f"{d}/{n}.tar/amd64/manifest.json"))
uris = {n: x["inputs"]["libvirt"]["uri"] for n, x in m.items()}
assert len({u.split("?")[0] for u in uris.values()}) == 2, uris
t = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
a, b = m["01-clean"]["run"], m["02-egress"]["run"]
assert t(a["started"]) <= t(b["finished"]) and t(b["started"]) <= t(a["finished"]), (a, b)
# Each image's lines naming its directory come in one block (before the table).
text = open(out).read().split("\nimages\n")[0]
seq = [1 if "/01-" in l else 2 for l in text.splitlines() if "/01-" in l or "/02-" in l]
runs = [k for i, k in enumerate(seq) if i == 0 or seq[i - 1] != k]
assert len(runs) == 2, seq
PY
then ok /remote/pool-gates-images-at-once
else not_ok /remote/pool-gates-images-at-once "exit $rc, or the two images did not gate at once, one per host, each report whole"; fi

# 11-12: the remote daemon crashes while the workload runs (its stdin
# held open: nothing of it read yet).  The run is made again on the
# embedded driver; the lost attempt's bundle stays, inconclusive, beside
# the arch's, and the set names and verifies both.
skip_one () { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
if [ -z "$libvirtd_pid" ]; then
  skip_one /remote/pool-retries-a-host-lost-mid-run "the system libvirtd is not this test's to crash"
  skip_one /remote/lost-attempt-is-part-of-the-set "no lost attempt made"
  exit 0
fi
mkfifo "$work/held.in"
sleep 600 >"$work/held.in" &
holder_pid=$!
"$cli" gate --stdin - --arch amd64 --image "oci-archive:$samples/clean.tar" --connect "$uri" \
  --connect qemu:///embed --out "$work/lost" <"$work/held.in" >"$out" 2>&1 &
gate_pid=$!
# Until the controls are done and the image's workload runs (on the remote host).
for _ in $(seq 600); do
  grep -aq "airlock-init: workload ended" "$work/lost/amd64/console.log" 2>/dev/null && break
  kill -0 "$gate_pid" 2>/dev/null || break
  sleep 0.2
done
sleep 1
domain=$(virsh -c qemu:///system list --name 2>/dev/null | grep -m1 '^airlock-amd64-')
crashed=no
libvirtd_crash_and_restart && crashed=yes
# Until the new run's workload runs, on the embedded driver; then its stdin ends.
for _ in $(seq 900); do
  [ -d "$work/lost/amd64.attempt-1" ] && grep -aq "airlock-init: workload ended" \
    "$work/lost/amd64/console.log" 2>/dev/null && break
  kill -0 "$gate_pid" 2>/dev/null || break
  sleep 0.2
done
kill "$holder_pid" 2>/dev/null
wait "$gate_pid"
rc=$?
gate_pid=
reason="the connection to libvirt '$uri' was lost before the trailer"
left=$(virsh -c qemu:///system list --name 2>/dev/null | grep -x -- "${domain:-none}")
if [ "$crashed" = yes ] && [ -n "$domain" ] && [ -z "$left" ] && [ "$rc" -eq 0 ] \
   && grep -Eq '^  amd64 .* pass$' "$out" \
   && grep -qF "amd64: hypervisor qemu:///embed?root=" "$out" \
   && grep -qF "after the first was lost mid-run ($uri: lost mid-run: $reason" "$out" \
   && grep -qF "its inconclusive bundle is kept in $work/lost/amd64.attempt-1" "$out" \
   && python3 - "$work/lost" "$uri" >>"$out" 2>&1 <<'PY'
import json, sys
d, uri = sys.argv[1:3]
first = json.load(open(f"{d}/amd64.attempt-1/manifest.json"))
second = json.load(open(f"{d}/amd64/manifest.json"))
assert first["inputs"]["libvirt"]["uri"] == uri, first["inputs"]["libvirt"]
assert second["inputs"]["libvirt"]["uri"].startswith("qemu:///embed?root="), second["inputs"]["libvirt"]
assert json.load(open(f"{d}/amd64.attempt-1/verdict.json"))["verdict"] == "inconclusive"
assert json.load(open(f"{d}/amd64/verdict.json"))["verdict"] == "pass"
s = json.load(open(f"{d}/set.json"))
assert list(s["attempts"]) == ["amd64"] and s["attempts"]["amd64"]["dir"] == "amd64.attempt-1", s
PY
then
  ok /remote/pool-retries-a-host-lost-mid-run
  grep '^amd64: hypervisor' "$out" | sed 's/^/# /'
else
  echo "crashed: $crashed; remote domain: ${domain:-none} (left running: ${left:-no})" >>"$out"
  not_ok /remote/pool-retries-a-host-lost-mid-run "exit $rc, or the run lost with its host was not made again on the embedded driver"
fi

# The set verifies with the lost attempt in it (two bundles); unnamed in
# set.json, or replaced by a passing bundle, it does not.
problems=
if ! "$cli" verify "$work/lost" >"$work/v0" 2>&1 || ! grep -q "verified as one set" "$work/v0" \
   || ! grep -qF "amd64: verified $work/lost/amd64.attempt-1: verdict inconclusive" "$work/v0"; then
  problems="the gate's directory with its lost attempt does not verify as one set;"
fi
cp -a "$work/lost" "$work/lost-unnamed"
python3 - "$work/lost-unnamed/set.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); del s["attempts"]; json.dump(s, open(sys.argv[1], "w"))
PY
if "$cli" verify "$work/lost-unnamed" >"$work/v1" 2>&1 \
   || ! grep -q ": amd64.attempt-1: is not part of the set" "$work/v1"; then
  problems="$problems an attempt set.json does not name is not refused;"
fi
cp -a "$work/lost" "$work/lost-passing"
rm -rf "$work/lost-passing/amd64.attempt-1"
cp -a "$work/lost/amd64" "$work/lost-passing/amd64.attempt-1"
python3 - "$work/lost-passing/set.json" <<'PY'
import hashlib, json, os, sys
p = sys.argv[1]; s = json.load(open(p))
m = os.path.join(os.path.dirname(p), "amd64.attempt-1", "manifest.json")
s["attempts"]["amd64"]["manifest_sha256"] = hashlib.sha256(open(m, "rb").read()).hexdigest()
json.dump(s, open(p, "w"))
PY
if "$cli" verify "$work/lost-passing" >"$work/v2" 2>&1 \
   || ! grep -q ": amd64.attempt-1: is a first attempt whose verdict is 'pass', not inconclusive" "$work/v2"; then
  problems="$problems a passing bundle as the lost attempt is not refused;"
fi
cat "$work/v0" "$work/v1" "$work/v2" >"$out" 2>/dev/null
if [ -z "$problems" ]; then ok /remote/lost-attempt-is-part-of-the-set
else not_ok /remote/lost-attempt-is-part-of-the-set "$problems"; fi
