#!/bin/bash
# The sinkhole (issue 20) per detected protocol, on both arches: each net-*
# client of tests/guest (net.c) runs under `airlock run --out` and must
# find the network answering — its name resolved, its connection accepted,
# so it exits 0 — and the bundle's sinkhole records must show, host-side,
# the name asked, the address handed out for it (from the sinkhole's
# ranges) and what the client sent: the HTTP method, path, Host and
# User-Agent (over IPv4 and IPv6), the TLS SNI, ALPN and version, DNS
# questions over UDP and over TCP (A and AAAA), raw bytes as sent, a UDP
# datagram, an SSH identification line.  TAP output.
set -u

cli="${AIRLOCK_CLI:?run through meson test}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=sinkhole-lib.sh
source "$(dirname "$0")/sinkhole-lib.sh"
sinkhole_require

raw_hex=4149524c4f434b2d524157200001027f80feff0d0a
udp_hex=$(printf 'airlock net-udp datagram' | od -An -tx1 | tr -d ' \n')

# protocol_case NAME "COMMAND [ARGS]" CHECK…: one run of a net-* client on
# both arches (the defaults of its arguments are in net.c), then per arch:
# it exited 0, and every CHECK (as expect_records takes them) holds.
protocol_case () {
  local name="$1" argv arch
  read -r -a argv <<<"$2"
  shift 2
  run_status run --arch all --guest-program "${argv[0]}" --out "$work/$name" -- "${argv[@]:1}"
  for arch in "${arches[@]}"; do
    # 0: the client's name was answered and its connection accepted (3 is
    # "no answer", 4 "refused": net.c).
    if [ "$status" -ne 0 ] || ! grep -q "^$arch: workload exited 0$" "$out"; then
      not_ok "/sinkhole/$arch/$name" "run exit $status, or the client did not exit 0: the network did not answer"
      continue
    fi
    expect_records "/sinkhole/$arch/$name" "$work/$name/$arch" "$@"
  done
}

echo "1..14"

protocol_case http "net-http" \
  'dns|http.airlock.test|udp|A' \
  'tcp|http.airlock.test|80|protocol=http|http.method=GET|http.path=/sinkhole/net-http?probe=1|http.host=http.airlock.test|http.user_agent=airlock-net-http/1'
protocol_case http-ipv6 "net-http -6 six.airlock.test 80 /over/ipv6" \
  'dns|six.airlock.test|udp|AAAA' \
  'tcp|six.airlock.test|80|family=inet6|protocol=http|http.path=/over/ipv6|http.host=six.airlock.test'
protocol_case tls "net-tls" \
  'dns|tls.airlock.test|udp|A' \
  'tcp|tls.airlock.test|443|protocol=tls|tls.sni=tls.airlock.test|tls.alpn=h2,http/1.1|tls.version=1.3'
protocol_case dns-tcp "net-dns-tcp" \
  'dns|dns-tcp.airlock.test|tcp|A' 'dns|dns-tcp.airlock.test|tcp|AAAA'
protocol_case raw "net-raw" \
  'dns|raw.airlock.test|udp|A' \
  "tcp|raw.airlock.test|4444|protocol=raw|client_bytes=$raw_hex"
protocol_case udp "net-udp" \
  'dns|udp.airlock.test|udp|A' "udp|udp.airlock.test|9999|client_bytes=$udp_hex"
protocol_case ssh "net-ssh" \
  'dns|ssh.airlock.test|udp|A' \
  'tcp|ssh.airlock.test|22|protocol=ssh|ssh.banner=SSH-2.0-airlock_net-ssh_1 sinkhole-probe'
