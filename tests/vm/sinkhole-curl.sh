#!/bin/bash
# A real program through the sinkhole (issue 20), on both arches: Debian's
# curl, in an image built here from Debian's packages (debian-image.py,
# cached under $AIRLOCK_TEST_IMAGE_DIR), resolves through glibc and speaks
# HTTP and TLS with its own libraries.  The bundle's sinkhole records must
# show the name asked (A and AAAA over UDP), the connection to an address
# handed out for it, and for http:// the method, path, Host and
# User-Agent; for https:// the SNI, ALPN h2,http/1.1 and TLS 1.3.  What
# curl prints after that (the sinkhole closes) does not matter.  TAP
# output.
set -u

cli="${AIRLOCK_CLI:?run through meson test}"
images="${AIRLOCK_TEST_IMAGE_DIR:?run through meson test}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=sinkhole-lib.sh
source "$(dirname "$0")/sinkhole-lib.sh"
sinkhole_require

echo "1..5"

# The image: curl and its dependencies for both arches (about 13 MB
# compressed per arch).  Built once; delete the file to build it again
# with the archive's current versions.
image="$images/debian-curl.tar"
if [ -f "$image" ]; then
  echo "# $image: built before"
  ok "/sinkhole/curl/image"
else
  mkdir -p "$images"
  start=$(date +%s)
  if python3 "$here/debian-image.py" --package curl --entrypoint /usr/bin/curl --cmd '["--version"]' \
       --layout "$images/debian-curl" --archive "$image" >"$out" 2>&1; then
    echo "# $image: built in $(( $(date +%s) - start )) s"
    ok "/sinkhole/curl/image"
  else
    not_ok "/sinkhole/curl/image" "debian-image.py failed"
    exit 0
  fi
fi

# curl_case NAME "CURL ARGS" CHECK…: one run of the image on both arches,
# then per arch: the run is complete and every CHECK holds.
curl_case () {
  local name="$1" argv arch
  read -r -a argv <<<"$2"
  shift 2
  run_status run --arch all --image "oci-archive:$image" --timeout 60 --out "$work/$name" \
    -- "${argv[@]}"
  for arch in "${arches[@]}"; do
    if [ "$status" -ne 0 ]; then
      not_ok "/sinkhole/curl/$arch/$name" "run exit $status, want 0 (a complete run)"
      continue
    fi
    expect_records "/sinkhole/curl/$arch/$name" "$work/$name/$arch" "$@"
  done
}

# glibc asks A and AAAA at once; curl connects to what came back.
curl_case http "-sS -m 10 -A airlock-curl-test http://files.airlock.test/dist/pkg-1.0.tar.gz" \
  'dns|files.airlock.test|udp|A' 'dns|files.airlock.test|udp|AAAA' \
  'tcp|files.airlock.test|80|protocol=http|http.method=GET|http.path=/dist/pkg-1.0.tar.gz|http.host=files.airlock.test|http.user_agent=airlock-curl-test'
curl_case https "-sS -m 10 https://secure.airlock.test/login" \
  'dns|secure.airlock.test|udp|A' \
  'tcp|secure.airlock.test|443|protocol=tls|tls.sni=secure.airlock.test|tls.alpn=h2,http/1.1|tls.version=1.3'
