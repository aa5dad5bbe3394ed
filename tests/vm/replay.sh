#!/bin/bash
# `airlock replay`, through the command: a gate's bundles of the egress
# sample replay as "same" on both arches; with one layer blob of the image
# changed after the gate, the replay is refused naming the blob and the
# digest the bundle pins; a bundle of an unchanged image still replays
# after the disk was cached (the blob is read through, not trusted to the
# cache); a bundle holding a FIFO where its policy is is refused, not
# waited on; usage errors.  TAP output.
set -u

# shellcheck source=tap-lib.sh
. "$(dirname "$0")/tap-lib.sh"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"

echo "1..7"

"$cli" gate --image "oci-archive:$samples/egress.tar" --out "$work/gate" >"$out" 2>&1
if [ $? -eq 1 ] && [ -f "$work/gate/amd64/manifest.json" ] && [ -f "$work/gate/arm64/manifest.json" ]; then
  ok "/replay/gate-bundles"
else
  not_ok "/replay/gate-bundles" "the gate did not fail with two bundles"; exit 0
fi

"$cli" replay "$work/gate" --out "$work/again" >"$out" 2>&1
status=$?
if [ $status -eq 0 ] && grep -Eq '^amd64: same: 5 attempts \(of [0-9]+ network calls?\), the network.s names and destinations, the controls and the verdict \(fail\) as recorded$' "$out" \
   && grep -Eq '^arm64: same: 5 attempts \(of [0-9]+ network calls?\), the network.s names and destinations, the controls and the verdict \(fail\) as recorded$' "$out"; then
  ok "/replay/egress-is-the-same-on-both-arches"
else not_ok "/replay/egress-is-the-same-on-both-arches" "exit $status"; fi

# The replay's own bundle verifies, and its guest ran at the recorded clock.
if "$cli" verify "$work/again" >"$out" 2>&1 && python3 - "$work" <<'EOF'
import json, sys, datetime
w = sys.argv[1]
for arch in ("amd64", "arm64"):
    old = json.load(open(f"{w}/gate/{arch}/manifest.json"))
    new = json.load(open(f"{w}/again/{arch}/manifest.json"))
    t = datetime.datetime.strptime(old["run"]["started"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    assert new["case"]["clock_ns"] == int(t.timestamp()) * 10**9, (new["case"], old["run"])
    assert new["inputs"]["image"]["manifest"] == old["inputs"]["image"]["manifest"]
EOF
then ok "/replay/bundle-verifies-with-the-recorded-clock"
else not_ok "/replay/bundle-verifies-with-the-recorded-clock" "the replay's bundle does not verify or its clock differs"; fi

# An image whose layer blob changes after the gate.
cp -a "$samples/egress" "$work/image"
"$cli" gate --image "oci:$work/image" --arch amd64 --out "$work/copy" >"$out" 2>&1
blob=$(python3 - "$work/image" <<'EOF'
import json, sys
d = sys.argv[1]
def blob(digest):
    return json.load(open(f"{d}/blobs/sha256/{digest.split(':')[1]}"))
index = json.load(open(f"{d}/index.json"))
for m in index["manifests"]:
    inner = blob(m["digest"]) if m["mediaType"].endswith("index.v1+json") else None
    for e in (inner["manifests"] if inner else [m]):
        if e.get("platform", {}).get("architecture") == "amd64":
            print(blob(e["digest"])["layers"][0]["digest"])
            raise SystemExit
EOF
)
if [ -n "$blob" ] && [ -f "$work/copy/amd64/manifest.json" ]; then
  python3 - "$work/image/blobs/sha256/${blob#sha256:}" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x01
open(p, "wb").write(b)
EOF
  "$cli" replay "$work/copy" >"$out" 2>&1
  status=$?
  if [ $status -eq 5 ] && grep -Fq "layer blob $blob" "$out" && grep -q '^amd64: not replayed: 1 pinned input is missing or changed$' "$out"; then
    ok "/replay/changed-blob-is-refused-naming-it"
  else not_ok "/replay/changed-blob-is-refused-naming-it" "exit $status, want 5 naming $blob"; fi
else
  not_ok "/replay/changed-blob-is-refused-naming-it" "could not gate the copied image or find its layer"
fi

"$cli" replay "$work" >"$out" 2>&1
if [ $? -eq 2 ] && grep -q "holds no manifest.json" "$out"; then ok "/replay/not-a-bundle-is-usage"
else not_ok "/replay/not-a-bundle-is-usage" "want exit 2"; fi

"$cli" replay "$work/gate" --key-file "$work/out.txt" >"$out" 2>&1
if [ $? -eq 2 ] && grep -q "give --out too" "$out"; then ok "/replay/key-needs-out"
else not_ok "/replay/key-needs-out" "want exit 2"; fi

# A bundle from anywhere: a FIFO where policy.txt should be must not hold
# replay until someone writes it (timeout: a hang fails the case).
cp -a "$work/gate/amd64" "$work/fifo"
rm -f "$work/fifo/policy.txt" && mkfifo "$work/fifo/policy.txt"
timeout 300 "$cli" replay "$work/fifo" >"$out" 2>&1
status=$?
if [ $status -eq 5 ] && grep -q "policy.txt' is not a regular file" "$out"; then
  ok "/replay/fifo-in-bundle-is-refused"
else not_ok "/replay/fifo-in-bundle-is-refused" "exit $status, want 5 saying policy.txt is not a regular file"; fi
