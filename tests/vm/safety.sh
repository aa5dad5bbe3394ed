#!/bin/bash
# Host safety: a workload that reaches for the network (the egress sample:
# DNS to QEMU's resolver, HTTP and HTTPS to a public-looking address) must
# make nothing leave the host.  The run happens in a network namespace with
# only loopback, and every network system call of airlock and of the QEMU
# it starts is traced: none may name an inet address other than loopback.
# TAP output.
set -u

cli="${AIRLOCK_CLI:?run through meson test}"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"
echo "1..1"
name=/safety/egress-sample-sends-nothing-out
command -v strace >/dev/null || { echo "ok 1 $name # SKIP strace is not installed"; exit 0; }
command -v unshare >/dev/null || { echo "ok 1 $name # SKIP unshare is not installed"; exit 0; }
[ "$(id -u)" -eq 0 ] || { echo "ok 1 $name # SKIP needs root for a network namespace"; exit 0; }

log=$(mktemp) out=$(mktemp)
trap 'rm -f "$log" "$out"' EXIT

# LeakSanitizer stops the world with ptrace and cannot under strace: in a
# sanitized build, the leak check is left to the other suites.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  unshare -n -- strace -f -qq --seccomp-bpf -e trace=connect,sendto,sendmsg,sendmmsg,bind -o "$log" \
  "$cli" run --arch amd64 --image "oci-archive:$samples/egress.tar" >"$out" 2>&1
status=$?

fail () { echo "not ok 1 $name # $1"; sed 's/^/# /' "$out"; exit 0; }
[ "$status" -eq 0 ] || fail "the run exited $status"
# The workload did try: its attempts are in the report.
grep -Eq 'connect +inet +stream/tcp +198\.51\.100\.80:443' "$out" || fail "no HTTPS attempt in the report"
grep -Eq 'sendto +inet +dgram/udp +10\.0\.2\.3:53' "$out" || fail "no DNS attempt in the report"
# Nothing named an inet address but loopback.
leaks=$(grep -E 'sa_family=AF_INET6?' "$log" \
        | grep -Ev 'inet_addr\("127\.|inet_pton\(AF_INET6, "::1"' || true)
[ -z "$leaks" ] || fail "system calls naming a non-loopback address: $(echo "$leaks" | head -5 | tr '\n' ' ')"
echo "ok 1 $name"
