#!/bin/bash
# `airlock replay` after the image the gate ran is gone (a CI artifact that
# expired), amd64 only (four boots): the bundle alone is refused naming
# the missing file and suggesting --image; `--image` with a copy of the
# same image at another path replays as "same"; `--image` with another
# image is refused (exit 5) naming both manifest digests; a recorded
# relative reference is found next to the bundle when it is not in the
# working directory; `--image docker://` from a registry the test starts
# on 127.0.0.1 (registry-lib.sh) replays as "same" too (a fourth boot).
# TAP output.
set -u

# shellcheck source=tap-lib.sh
. "$(dirname "$0")/tap-lib.sh"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"
. "$(dirname "$0")/registry-lib.sh"
fetched=  # the registry's copy in the cache, when this test made it
trap 'registry_stop; rm -rf "$work" ${fetched:+"$fetched"}' EXIT
manifest_of () {  # REF: its amd64 manifest digest, as airlock resolves it
  "$cli" images inspect "$1" --arch amd64 --json \
    | python3 -c 'import json, sys; print([json.loads(l) for l in sys.stdin if l.strip()][0]["manifest_digest"])'
}

echo "1..6"

# The gate as a pipeline runs it: a relative reference, from the job's
# working directory.
mkdir "$work/job"
cp "$samples/clean.tar" "$work/job/image.tar"
(cd "$work/job" && "$cli" gate --image oci-archive:image.tar --arch amd64 --out "$work/job/bundle") >"$out" 2>&1
pinned=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["inputs"]["image"]["manifest"])' \
           "$work/job/bundle/amd64/manifest.json" 2>/dev/null)
if [ $? -eq 0 ] && [ -n "$pinned" ]; then
  ok "/replay-image/gate-bundle"
else
  not_ok "/replay-image/gate-bundle" "the gate wrote no bundle"; exit 0
fi
# The image artifact expires; the bundle is downloaded somewhere else.
mv "$work/job/bundle" "$work/bundle"
mv "$work/job/image.tar" "$work/elsewhere.tar"

(cd "$work" && "$cli" replay bundle) >"$out" 2>&1
status=$?
if [ $status -eq 5 ] && grep -Fq "image oci-archive:image.tar (manifest $pinned)" "$out" \
   && grep -Fq "give the image again with --image REF" "$out"; then
  ok "/replay-image/missing-image-suggests-image-option"
else not_ok "/replay-image/missing-image-suggests-image-option" "exit $status, want 5 and the hint"; fi

(cd "$work" && "$cli" replay bundle --image "oci-archive:$work/elsewhere.tar") >"$out" 2>&1
status=$?
if [ $status -eq 0 ] && grep -Eq '^amd64: same: [0-9]+ attempts? \(of [0-9]+ network calls?\), the network.s names and destinations, the controls and the verdict \(pass\) as recorded$' "$out"; then
  ok "/replay-image/same-image-at-another-path-replays"
else not_ok "/replay-image/same-image-at-another-path-replays" "exit $status"; fi

other=$(manifest_of "oci-archive:$samples/egress.tar")
(cd "$work" && "$cli" replay bundle --image "oci-archive:$samples/egress.tar") >"$out" 2>&1
status=$?
if [ $status -eq 5 ] && [ -n "$other" ] && [ "$other" != "$pinned" ] \
   && grep -Fq "resolves to manifest $other for amd64, the bundle pins manifest $pinned" "$out" \
   && grep -q '^amd64: not replayed: 1 pinned input is missing or changed$' "$out" \
   && ! grep -q "replaying" "$out"; then
  ok "/replay-image/other-image-is-refused-naming-both-digests"
else not_ok "/replay-image/other-image-is-refused-naming-both-digests" "exit $status, want 5 naming $other and $pinned"; fi

# Downloaded next to the bundle: the recorded relative path resolves there.
cp "$work/elsewhere.tar" "$work/bundle/image.tar"
(cd / && "$cli" replay "$work/bundle") >"$out" 2>&1
status=$?
if [ $status -eq 0 ] && grep -Fq "using oci-archive:$work/bundle/image.tar" "$out" \
   && grep -Eq '^amd64: same: .*the verdict \(pass\) as recorded$' "$out"; then
  ok "/replay-image/relative-reference-found-next-to-the-bundle"
else not_ok "/replay-image/relative-reference-found-next-to-the-bundle" "exit $status"; fi

# The same image from a registry, by tag: copied by digest, then checked
# against the bundle's manifest digest like any other --image.
if ! registry_available; then
  echo "ok 6 /replay-image/same-image-from-a-registry # SKIP skopeo or docker-registry is not installed (scripts/setup)"
  exit 0
fi
index=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["inputs"]["image"]["index"])' \
          "$work/bundle/amd64/manifest.json")
copy="${AIRLOCK_CACHE_DIR:?}/oci/sha256-${index#sha256:}"
[ -e "$copy" ] || fetched=$copy
if registry_start "$work/registry" && registry_push "oci-archive:$work/elsewhere.tar" app:1 >"$out" 2>&1; then
  (cd "$work" && AIRLOCK_INSECURE_LOCAL_REGISTRY=1 \
     "$cli" replay bundle --image "docker://127.0.0.1:$registry_port/app:1") >"$out" 2>&1
  status=$?
  if [ $status -eq 0 ] && grep -Eq '^amd64: same: .*the verdict \(pass\) as recorded$' "$out" \
     && ! grep -q "note: --image" "$out" && [ -f "$copy/index.json" ]; then
    ok "/replay-image/same-image-from-a-registry"
  else not_ok "/replay-image/same-image-from-a-registry" "exit $status"; fi
else
  cat "$work/registry/log" >>"$out"
  not_ok "/replay-image/same-image-from-a-registry" "could not push the image to the test registry"
fi
