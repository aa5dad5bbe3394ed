#!/bin/bash
# The MCP-like case the sinkhole (issue 20) exists for, on both arches: the
# rpc sample in its update-check mode (images/sample/rpc-server.c,
# `-- --update-check`) gated with a conversation on stdin.  Without rules the
# gate fails and each bundle's sinkhole records name what the server
# wanted: pypi.org asked, its address handed out, a TLS ClientHello with
# SNI pypi.org on 443 and GET /pypi/airlock-rpc-sample/json with Host
# pypi.org on 80.  With host= rules for pypi.org and a fixture answering
# port 80, the gate passes and the server goes on: it read the version the
# fixture gave.  TAP.
set -u

cli="${AIRLOCK_CLI:?run through meson test}"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=sinkhole-lib.sh
source "$(dirname "$0")/sinkhole-lib.sh"
sinkhole_require

echo "1..5"

cat >"$work/stdin" <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"sinkhole-rpc","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"shutdown"}
EOF
body='{"info":{"name":"airlock-rpc-sample","version":"2.0.0"},"releases":{}}'
printf 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
  "${#body}" "$body" >"$work/pypi.http"

wanted=(
  'dns|pypi.org|udp|A'
  'tcp|pypi.org|443|protocol=tls|tls.sni=pypi.org|tls.alpn=h2,http/1.1|tls.version=1.3'
  'tcp|pypi.org|80|protocol=http|http.method=GET|http.path=/pypi/airlock-rpc-sample/json|http.host=pypi.org|http.user_agent=airlock-rpc-sample/1'
)

run_status gate --image "oci-archive:$samples/rpc.tar" --stdin "$work/stdin" --out "$work/denied" \
  -- --update-check
for arch in "${arches[@]}"; do
  name="/sinkhole/rpc/$arch/update-check-fails-naming-host-sni-path"
  if [ "$status" -ne 1 ] || ! grep -Eq "^$arch: egress not admitted by the policy: .*pypi\.org" "$out"; then
    not_ok "$name" "gate exit $status (want 1), or no reason names pypi.org"
    continue
  fi
  expect_records "$name" "$work/denied/$arch" "${wanted[@]}"
done

run_status gate --image "oci-archive:$samples/rpc.tar" --stdin "$work/stdin" --out "$work/admitted" \
  --allow 'allow udp any port 53 dns=pypi.org' \
  --allow 'allow tcp any port 443 host=pypi.org' --allow 'allow tcp any port 80 host=pypi.org' \
  --serve "pypi.org:80=$work/pypi.http" -- --update-check
for arch in "${arches[@]}"; do
  name="/sinkhole/rpc/$arch/host-rules-and-a-fixture-pass"
  if [ "$status" -ne 0 ]; then
    not_ok "$name" "gate exit $status, want 0"
    continue
  fi
  # The server read the fixture's answer and went on.
  if ! grep -q '^rpc-server: update check: the latest airlock-rpc-sample is 2\.0\.0 (this is 1)$' \
         "$work/admitted/$arch/stderr"; then
    not_ok "$name" "the server did not read the fixture's version"
    sed 's/^/# stderr: /' "$work/admitted/$arch/stderr"
    continue
  fi
  expect_records "$name" "$work/admitted/$arch" "${wanted[@]}" \
    'tcp|pypi.org|80|response=fixture pypi.org:80'
done

# A replay serves what the run served: without the fixture it refuses,
# naming it by its digest; given the same bytes it runs the case again and
# finds what the bundle recorded.
name="/sinkhole/rpc/replay-needs-the-same-fixture"
sum=$(sha256sum "$work/pypi.http" | cut -d' ' -f1)
run_status replay "$work/admitted" --arch amd64
if [ "$status" -ne 5 ] || ! grep -q "the run served the fixture pypi\.org\.:80 sha256:$sum" "$out"; then
  not_ok "$name" "replay without --serve exit $status (want 5), or the fixture is not named"
else
  printf 'not the same bytes' >"$work/other.http"
  run_status replay "$work/admitted" --arch amd64 --serve "pypi.org:80=$work/other.http"
  if [ "$status" -ne 5 ]; then
    not_ok "$name" "replay with other bytes exit $status (want 5)"
  else
    run_status replay "$work/admitted" --arch amd64 --serve "pypi.org:80=$work/pypi.http"
    if [ "$status" -ne 0 ]; then
      not_ok "$name" "replay with the same fixture exit $status (want 0)"
    else
      ok "$name"
    fi
  fi
fi
