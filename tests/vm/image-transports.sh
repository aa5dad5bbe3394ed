#!/bin/bash
# Image references beyond files, through `airlock images inspect` (no VM):
# docker:// from a registry this test starts on 127.0.0.1 (Debian's
# docker-registry, distribution v2.8, filesystem storage in a temporary
# directory), pushed the clean sample with skopeo, resolves to the same
# index and manifest digests as the archive, on both arches, and is cached
# by digest; plain HTTP only with AIRLOCK_INSECURE_LOCAL_REGISTRY=1; the
# message when skopeo is missing; the transport suggested for a bare path.
# Nothing but 127.0.0.1 is contacted.  TAP output.
set -u

# shellcheck source=tap-lib.sh
. "$(dirname "$0")/tap-lib.sh"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"
. "$(dirname "$0")/registry-lib.sh"
cleanup () {
  registry_stop
  rm -rf "$work"
}
trap cleanup EXIT
export AIRLOCK_CACHE_DIR="$work/cache"
skip () { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
digests () {  # JSON of `images inspect` → "arch index manifest" lines
  python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
assert lines and lines[-1]["type"] == "summary", lines
for i in lines[:-1]:
    assert i["type"] == "image", i
    print(i["arch"], i["index_digest"], i["manifest_digest"])' "$1"
}

echo "1..7"

# A bare path: the transport it needs is suggested.
"$cli" images inspect "$samples/clean.tar" >"$out" 2>&1
status=$?
if [ $status -eq 10 ] && grep -Fq "names no transport: give it as oci-archive:$samples/clean.tar" "$out"; then
  ok "/image-transports/bare-archive-suggests-oci-archive"
else not_ok "/image-transports/bare-archive-suggests-oci-archive" "exit $status"; fi
"$cli" images inspect "$samples/clean" >"$out" 2>&1
status=$?
if [ $status -eq 10 ] && grep -Fq "names no transport: give it as oci:$samples/clean" "$out"; then
  ok "/image-transports/bare-layout-suggests-oci"
else not_ok "/image-transports/bare-layout-suggests-oci" "exit $status"; fi

# skopeo missing: a PATH without it (the command needs no other program).
mkdir "$work/bin"
PATH="$work/bin" "$cli" images inspect docker://127.0.0.1:1/clean:1 >"$out" 2>&1
status=$?
if [ $status -eq 4 ] && grep -Fq "through skopeo, which is not installed (Debian: apt-get install skopeo)" "$out" \
   && grep -Fq "'skopeo copy --all docker://127.0.0.1:1/clean:1 oci:DIR'" "$out"; then
  ok "/image-transports/skopeo-missing-names-the-package"
else not_ok "/image-transports/skopeo-missing-names-the-package" "exit $status"; fi

if ! registry_available; then
  for t in docker-archive-bare-path registry-needs-tls-unless-told registry-same-digests registry-cached-by-digest; do
    skip "/image-transports/$t" "skopeo or docker-registry is not installed (scripts/setup)"
  done
  exit 0
fi

skopeo copy --quiet "oci-archive:$samples/clean.tar" "docker-archive:$work/clean-docker.tar" >"$out" 2>&1
"$cli" images inspect "$work/clean-docker.tar" >"$out" 2>&1
status=$?
if [ $status -eq 10 ] && grep -Fq "give it as docker-archive:$work/clean-docker.tar" "$out"; then
  ok "/image-transports/docker-archive-bare-path"
else not_ok "/image-transports/docker-archive-bare-path" "exit $status"; fi

# The registry, on loopback only.
if ! registry_start "$work/registry" \
   || ! registry_push "oci-archive:$samples/clean.tar" clean:1 >"$out" 2>&1; then
  cat "$work/registry/log" >>"$out"
  not_ok "/image-transports/registry-needs-tls-unless-told" "could not push the sample to the test registry"
  exit 0
fi
port=$registry_port

"$cli" images inspect "docker://127.0.0.1:$port/clean:1" >"$out" 2>&1
status=$?
if [ $status -eq 11 ] && grep -Fq "docker://127.0.0.1:$port/clean:1: skopeo inspect failed" "$out"; then
  ok "/image-transports/registry-needs-tls-unless-told"
else not_ok "/image-transports/registry-needs-tls-unless-told" "exit $status, want 11 (HTTPS refused)"; fi

export AIRLOCK_INSECURE_LOCAL_REGISTRY=1
"$cli" images inspect "oci-archive:$samples/clean.tar" --json >"$work/archive.json" 2>"$out"
"$cli" images inspect "docker://127.0.0.1:$port/clean:1" --json >"$work/registry.json" 2>"$out"
status=$?
if [ $status -eq 0 ] && [ "$(digests "$work/registry.json")" = "$(digests "$work/archive.json")" ] \
   && [ "$(digests "$work/registry.json" | wc -l)" -eq 2 ] \
   && grep -q '"reference":"docker://127.0.0.1:'"$port"'/clean:1"' "$work/registry.json"; then
  ok "/image-transports/registry-same-digests"
else
  { digests "$work/archive.json"; digests "$work/registry.json"; } >>"$out" 2>&1
  not_ok "/image-transports/registry-same-digests" "exit $status"
fi

# Cached under the digest the tag named; a second resolve copies nothing;
# --cache-dir is where the copy goes.
index=$(digests "$work/archive.json" | awk 'NR == 1 { print $2 }')
cached="$AIRLOCK_CACHE_DIR/oci/sha256-${index#sha256:}"
before=$(stat -c %i "$cached" 2>/dev/null)
"$cli" images inspect "docker://127.0.0.1:$port/clean:1" >"$out" 2>&1
status=$?
"$cli" images inspect "docker://127.0.0.1:$port/clean:1" --cache-dir "$work/other-cache" >>"$out" 2>&1
status2=$?
if [ $status -eq 0 ] && [ -n "$before" ] && [ "$(stat -c %i "$cached")" = "$before" ] \
   && [ "$(ls -A "$AIRLOCK_CACHE_DIR/oci")" = "sha256-${index#sha256:}" ] \
   && [ $status2 -eq 0 ] && [ -f "$work/other-cache/oci/sha256-${index#sha256:}/index.json" ]; then
  ok "/image-transports/registry-cached-by-digest"
else not_ok "/image-transports/registry-cached-by-digest" "exit $status, want $cached kept"; fi
