#!/bin/bash
# Host safety.  Two proofs that nothing airlock runs for a guest reaches
# anything but the VM's backend:
#
#  1. The trace.  A workload that reaches for the network (the egress
#     sample: DNS, HTTP and HTTPS to the address the sinkhole hands out for
#     example.com, all answered and accepted; then DNS over TCP and a
#     datagram to a port of no service, net-dns-tcp and net-udp of
#     tests/guest, so every listener is used) runs on both arches inside a
#     network namespace with only loopback, and every network system call of
#     airlock, of the QEMU it starts and of the sinkhole process is traced.
#     airlock and QEMU may name no inet address but loopback.  The sinkhole
#     may make no connect() at all, bind only the wildcard address on its
#     own ports (53 and 9, inside its private namespace), and send only to
#     the guest's addresses.
#  2. The network's configuration.  The sinkhole process started on its
#     own: inside its namespace there is `lo` and the tap and nothing else,
#     no route but the two on-link prefixes, forwarding off, and its
#     nftables output chain drops everything that is not a reply.
# TAP output.
set -u

cli="${AIRLOCK_CLI:?run through meson test}"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"
sinkhole="${AIRLOCK_SINKHOLE:?run through meson test}"
echo "1..2"
skip_all () { echo "ok 1 $1 # SKIP $2"; echo "ok 2 $1 # SKIP $2"; exit 0; }
command -v strace >/dev/null || skip_all /safety "strace is not installed"
command -v unshare >/dev/null || skip_all /safety "unshare is not installed"
command -v nsenter >/dev/null || skip_all /safety "nsenter is not installed"
[ "$(id -u)" -eq 0 ] || skip_all /safety "needs root for a network namespace"

work=$(mktemp -d)
sinkhole_pid=
cleanup () {
  [ -n "$sinkhole_pid" ] && kill "$sinkhole_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# ---- 1. the trace -----------------------------------------------------------
name=/safety/egress-sample-sends-nothing-out
log="$work/trace" out="$work/out"
# The guest programs' initramfs (the testroot) is made, and its pinned
# packages fetched, on first use: inside the namespace below there is no
# archive to fetch from.  Made here, outside it, so this suite does not
# depend on another having run first (run alone on a fresh cache, it failed).
"$cli" run --arch amd64 --guest-program noop >"$work/warm" 2>&1
warm=$?
# LeakSanitizer stops the world with ptrace and cannot under strace: in a
# sanitized build, the leak check is left to the other suites.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  unshare -n -- strace -f -qq -e trace=execve,socket,connect,sendto,sendmsg,sendmmsg,bind \
  -o "$log" sh -c '"$1" run --arch all --image "oci-archive:$2/egress.tar" \
                   && "$1" run --arch amd64 --guest-program net-dns-tcp \
                   && "$1" run --arch amd64 --guest-program net-udp' \
  safety "$cli" "$samples" >"$out" 2>&1
status=$?

fail () { echo "not ok $1 $2 # $3"; sed 's/^/# /' "$out"; }
one () {
  [ "$warm" -eq 0 ] || { out="$work/warm" fail 1 "$name" "the testroot could not be made first (exit $warm)"; return; }
  [ "$status" -eq 0 ] || { fail 1 "$name" "the run exited $status"; return; }
  # The workload did try, and the network answered: on both arches the
  # name was resolved and both connections made it to the sinkhole.
  for arch in amd64 arm64; do
    grep -Eq "^  \| dns: example\.com A 198\.1[89]\." "$out" \
      || { fail 1 "$name" "no DNS answer from the sinkhole in the report"; return; }
    grep -Eq "connect +inet +stream/tcp +198\.1[89]\.[0-9.]+:443" "$out" \
      || { fail 1 "$name" "no HTTPS attempt in the report"; return; }
  done
  [ "$(grep -c '| https: connected to 198\.1[89]\.' "$out")" -eq 2 ] \
    || { fail 1 "$name" "the HTTPS connection was not accepted on both arches"; return; }
  # Which traced processes are the sinkhole.
  sinks=$(grep -E 'execve\("[^"]*airlock-sinkhole"' "$log" | grep -v ENOENT | awk '{print $1}' | sort -u)
  [ "$(echo "$sinks" | grep -c .)" -eq 4 ] \
    || { fail 1 "$name" "expected one sinkhole process per run and arch (4), traced: '$sinks'"; return; }
  # The other listeners were exercised too: DNS over TCP and a datagram to
  # a port of no service, each answered or taken in (the clients exit 0).
  [ "$(grep -c '^amd64: workload exited 0$' "$out")" -eq 3 ] \
    || { fail 1 "$name" "net-dns-tcp or net-udp did not find the network answering"; return; }
  pattern=$(echo "$sinks" | sed 's/^/^/; s/$/ /' | paste -sd'|')
  others=$(grep -Ev "$pattern" "$log")
  mine=$(grep -E "$pattern" "$log")
  # airlock and QEMU: nothing named an inet address but loopback.
  leaks=$(echo "$others" | grep -E 'sa_family=AF_INET6?' \
          | grep -Ev 'inet_addr\("127\.|inet_pton\(AF_INET6, "::1"' || true)
  [ -z "$leaks" ] || { fail 1 "$name" "airlock or QEMU named a non-loopback address: $(echo "$leaks" | head -5 | tr '\n' ' ')"; return; }
  # The sinkhole: no connect at all; binds only the wildcard address on 53
  # and 9; sends only to the guest.
  bad=$(echo "$mine" | grep -E ' connect\(' || true)
  [ -z "$bad" ] || { fail 1 "$name" "the sinkhole called connect: $(echo "$bad" | head -3 | tr '\n' ' ')"; return; }
  bad=$(echo "$mine" | grep -E ' bind\(.*sa_family=AF_INET' \
        | grep -Ev 'htons\((53|9)\), (sin_addr=inet_addr\("0\.0\.0\.0"\)|sin6_flowinfo=htonl\(0\), inet_pton\(AF_INET6, "::")' || true)
  [ -z "$bad" ] || { fail 1 "$name" "the sinkhole bound something else: $(echo "$bad" | head -3 | tr '\n' ' ')"; return; }
  bad=$(echo "$mine" | grep -E ' send(to|msg|mmsg)\(.*sa_family=AF_INET' \
        | grep -Ev 'inet_addr\("10\.0\.2\.15"\)|inet_pton\(AF_INET6, "fec0::15"' || true)
  [ -z "$bad" ] || { fail 1 "$name" "the sinkhole sent to someone but the guest: $(echo "$bad" | head -3 | tr '\n' ' ')"; return; }
  # It did answer: a DNS reply went to the guest.
  echo "$mine" | grep -Eq ' sendto\(.*inet_addr\("10\.0\.2\.15"\)' \
    || { fail 1 "$name" "the trace shows no DNS answer from the sinkhole"; return; }
  echo "ok 1 $name"
}
one

# ---- 2. the network's configuration ----------------------------------------
name=/safety/sinkhole-network-reaches-nothing-else
out="$work/out2"
: >"$out"
mkfifo "$work/ready"
"$sinkhole" --socket "$work/net.sock" --pcap "$work/net.pcap" --records "$work/records.jsonl" \
  <"$work/ready" >"$work/stdout" 2>>"$out" &
sinkhole_pid=$!
exec 9>"$work/ready"     # its stdin: held open, as airlock does
two () {
  for _ in $(seq 100); do grep -q ready "$work/stdout" 2>/dev/null && break; sleep 0.1; done
  grep -q ready "$work/stdout" || { fail 2 "$name" "the sinkhole did not start"; return; }
  ns () { nsenter -t "$sinkhole_pid" -n "$@"; }
  [ "$(readlink /proc/$sinkhole_pid/ns/net)" != "$(readlink /proc/self/ns/net)" ] \
    || { fail 2 "$name" "the sinkhole is in the host's network namespace"; return; }
  links=$(ns ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort | paste -sd' ')
  [ "$links" = "airlock0 lo" ] || { fail 2 "$name" "interfaces: '$links'"; return; }
  routes=$(ns ip -o route show table all | grep -Ev '^(local|broadcast|multicast|anycast) ' \
           | grep -Ev '^fe80::/64 ' | awk '{print $1}' | sort | paste -sd' ')
  [ "$routes" = "10.0.2.0/24 fec0::/64" ] || { fail 2 "$name" "routes: '$routes'"; return; }
  [ "$(ns cat /proc/sys/net/ipv4/ip_forward)" = 0 ] || { fail 2 "$name" "IPv4 forwarding is on"; return; }
  [ "$(ns cat /proc/sys/net/ipv6/conf/all/forwarding)" = 0 ] || { fail 2 "$name" "IPv6 forwarding is on"; return; }
  rules=$(ns nft list ruleset 2>&1)
  echo "$rules" | grep -q 'chain output' && echo "$rules" | grep -Eq 'type filter hook output priority filter; policy drop;' \
    || { fail 2 "$name" "no output chain that drops: $rules"; return; }
  # From inside its namespace, nothing outside is reachable at all.
  if ns timeout 5 bash -c 'exec 3<>/dev/tcp/192.0.2.1/80' 2>/dev/null; then
    fail 2 "$name" "a connection from the sinkhole's namespace to 192.0.2.1:80 succeeded"; return
  fi
  # Its stdin closing (airlock gone) ends it with the final line.
  exec 9>&-
  for _ in $(seq 50); do kill -0 "$sinkhole_pid" 2>/dev/null || break; sleep 0.1; done
  ! kill -0 "$sinkhole_pid" 2>/dev/null || { fail 2 "$name" "the sinkhole outlived its parent's pipe"; return; }
  sinkhole_pid=
  tail -n1 "$work/records.jsonl" | grep -q '"end":true' \
    || { fail 2 "$name" "no final line: $(tail -n1 "$work/records.jsonl")"; return; }
  echo "ok 2 $name"
}
two
