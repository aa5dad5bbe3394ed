#!/bin/bash
# The net-* clients (net.c) and the rpc sample's update check, run on the
# host's arch against a stand-in for the sinkhole (fake-network.py), with
# no VM: in a network namespace and a mount namespace of this test's own,
# with only loopback and a resolv.conf naming 127.0.0.1.  Each client must
# exit 0 and the stand-in must have seen what the sinkhole is to record:
# the names asked (A and AAAA, UDP and TCP), the HTTP request line, Host
# and User-Agent, a ClientHello (SNI, ALPN h2,http/1.1, TLS 1.3 and 1.2
# offered) a real TLS server (Python's ssl) answers with a ServerHello, the raw bytes and datagram as sent, the SSH line.
# Then the exit statuses that tell "refused" (4) and "no answer" (3) from
# an exchange.  TAP output.
#
#   net-clients.sh TESTPROG [RPC-SERVER]
set -u

testprog="${1:?usage: net-clients.sh TESTPROG [RPC-SERVER]}"
rpc_server="${2:-}"
here="$(cd "$(dirname "$0")" && pwd)"

if [ -z "${NET_CLIENTS_INNER:-}" ]; then
  for tool in unshare ip openssl python3; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
  done
  [ "$(id -u)" -eq 0 ] || { echo "1..0 # SKIP needs root for its network and mount namespaces"; exit 0; }
  # Nothing here can reach past loopback: a new network namespace.
  exec unshare --net --mount --propagation private -- env NET_CLIENTS_INNER=1 "$0" "$@"
fi

work=$(mktemp -d)
out="$work/out.txt"
err="$work/err.txt"
records="$work/records.jsonl"
fake_pid=
cleanup () {
  [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

n=0
ok () { n=$((n + 1)); echo "ok $n $1"; }
not_ok () {
  n=$((n + 1))
  echo "not ok $n $1 # $2"
  sed 's/^/# out: /' "$out"
  sed 's/^/# err: /' "$err"
  sed 's/^/# record: /' "$records"
}

echo "1..16"

ip link set lo up || { echo "Bail out! cannot bring loopback up"; exit 1; }
echo "nameserver 127.0.0.1" >"$work/resolv.conf"
# The bind mount is this namespace's alone (private propagation above).
mount --bind "$work/resolv.conf" /etc/resolv.conf || { echo "Bail out! cannot mount resolv.conf"; exit 1; }
: >"$records"
python3 "$here/fake-network.py" --records "$records" >"$work/fake.out" 2>&1 &
fake_pid=$!
for _ in $(seq 100); do grep -q '^ready$' "$work/fake.out" && break; sleep 0.1; done
grep -q '^ready$' "$work/fake.out" || { echo "Bail out! the stand-in network did not start: $(cat "$work/fake.out")"; exit 1; }

# The program as the testroot runs it: a link named after the command.
mkdir "$work/bin"
for c in net-http net-tls net-dns-tcp net-raw net-udp net-ssh; do
  ln -s "$(realpath "$testprog")" "$work/bin/$c"
done

# run COMMAND [ARGS]: runs a client with empty records; sets $status.
run () {
  : >"$records"
  "$work/bin/$1" "${@:2}" >"$out" 2>"$err"
  status=$?
}

# has_record FIELD=VALUE...: some record has every field (waits up to 3 s:
# the stand-in writes a record when its side of the exchange ends, which
# may be just after the client exits).
has_record () {
  python3 - "$records" "$@" <<'EOF'
import json, sys, time
path, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
for _ in range(30):
    for line in open(path):
        r = json.loads(line)
        if all(str(r.get(k)) == v for k, v in want.items()):
            sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
EOF
}

# check NAME WANT_STATUS [record FIELD=VALUE...|out PATTERN]...: one TAP line.
check () {
  local name="$1" want="$2" args=()
  shift 2
  if [ "$status" -ne "$want" ]; then not_ok "$name" "exit status $status, want $want"; return; fi
  while [ $# -gt 0 ]; do
    case "$1" in
      record)
        shift
        args=()
        while [ $# -gt 0 ] && [ "$1" != record ] && [ "$1" != out ]; do args+=("$1"); shift; done
        has_record "${args[@]}" || { not_ok "$name" "no record with ${args[*]}"; return; } ;;
      out)
        grep -Eq -- "$2" "$out" "$err" || { not_ok "$name" "no line matches '$2'"; return; }
        shift 2 ;;
    esac
  done
  ok "$name"
}

run net-http
check /net-clients/http 0 \
  record kind=dns transport=udp name=http.airlock.test. qtype=1 \
  record kind=http port=80 'request_line=GET /sinkhole/net-http?probe=1 HTTP/1.1' \
         host=http.airlock.test user_agent=airlock-net-http/1 \
  out '^testprog: net-http: < HTTP/1\.1 200 OK$' out ': received [0-9]+ bytes, then the server closed$'

run net-http -6 six.airlock.test 80 /over/ipv6
check /net-clients/http-ipv6 0 \
  record kind=dns name=six.airlock.test. qtype=28 \
  record kind=http 'request_line=GET /over/ipv6 HTTP/1.1' host=six.airlock.test \
  out 'connect ::1 port 80: accepted$'

run net-tls
check /net-clients/tls-hello-a-real-server-answers 0 \
  record kind=dns name=tls.airlock.test. qtype=1 \
  record kind=tls port=443 sni=tls.airlock.test alpn=h2,http/1.1 versions=0304,0303 \
  out 'the server answered [0-9]+ bytes: ServerHello$'

run net-tls -6
check /net-clients/tls-ipv6 0 \
  record kind=dns name=tls.airlock.test. qtype=28 record kind=tls sni=tls.airlock.test \
  out 'connect ::1 port 443: accepted$'

run net-dns-tcp
check /net-clients/dns-over-tcp-a-and-aaaa 0 \
  record kind=dns transport=tcp name=dns-tcp.airlock.test. qtype=1 \
  record kind=dns transport=tcp name=dns-tcp.airlock.test. qtype=28 \
  out 'query over tcp dns-tcp\.airlock\.test AAAA: answered ::1$'

run net-raw
check /net-clients/raw-bytes-as-sent 0 \
  record kind=dns name=raw.airlock.test. \
  record kind=raw port=4444 bytes=4149524c4f434b2d524157200001027f80feff0d0a

run net-raw raw.airlock.test 4444 'hi\x00\xff\r\n'
check /net-clients/raw-bytes-given 0 record kind=raw bytes=686900ff0d0a

run net-udp
check /net-clients/udp-datagram 0 \
  record kind=dns name=udp.airlock.test. \
  record kind=udp port=9999 bytes="$(printf 'airlock net-udp datagram' | od -An -tx1 | tr -d ' \n')" \
  out '< ack$'

run net-ssh
check /net-clients/ssh-identification-lines 0 \
  record kind=ssh port=22 'banner=SSH-2.0-airlock_net-ssh_1 sinkhole-probe' \
  out '< SSH-2\.0-fake_network$'

run net-raw 127.0.0.1 4445
check /net-clients/address-literal-refused-is-4 4 out '127\.0\.0\.1 is an address: no query$' \
  out 'connect 127\.0\.0\.1 port 4445: not accepted: ECONNREFUSED$'

run net-http -x
check /net-clients/usage-is-2 2 out "unknown option '-x'"

# A nameserver that never answers: the query waits its 2 s, no more.
echo "nameserver 127.0.0.2" >"$work/resolv.conf"
start=$(date +%s)
run net-http
elapsed=$(( $(date +%s) - start ))
if [ "$elapsed" -gt 5 ]; then status=99; fi
check /net-clients/no-answer-is-3-within-the-wait 3 \
  out 'query over udp http\.airlock\.test A: no answer: nothing within the wait$'
echo "nameserver 127.0.0.1" >"$work/resolv.conf"

run net-dns-tcp dns-tcp.airlock.test 127.0.0.3
check /net-clients/dns-tcp-refused-is-4 4 out 'connect 127\.0\.0\.3 port 53: not accepted: ECONNREFUSED$'

# The rpc sample's update check (images/sample/rpc-server.c).
initialize='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}'
if [ -z "$rpc_server" ]; then
  for name in update-check-on update-check-flag update-check-off; do
    ok "/net-clients/rpc-$name # SKIP built without the sample images"
  done
  exit 0
fi

: >"$records"
echo "$initialize" | RPC_UPDATE_CHECK=1 "$rpc_server" >"$out" 2>"$err"
status=$?
check /net-clients/rpc-update-check-on 0 \
  record kind=dns transport=udp name=pypi.org. qtype=1 \
  record kind=tls port=443 sni=pypi.org alpn=h2,http/1.1 versions=0304,0303 \
  record kind=http port=80 'request_line=GET /pypi/airlock-rpc-sample/json HTTP/1.1' host=pypi.org \
         user_agent=airlock-rpc-sample/1 \
  out '^rpc-server: update check: the latest airlock-rpc-sample is 9\.9\.9 \(this is 1\)$' \
  out '^\{"jsonrpc":"2\.0","id":1,"result":\{"protocolVersion":"2024-11-05",'

: >"$records"
echo "$initialize" | "$rpc_server" --update-check >"$out" 2>"$err"
status=$?
check /net-clients/rpc-update-check-flag 0 record kind=http host=pypi.org \
  out 'https: answered: ServerHello$'

# As built, the server touches nothing: no record, no stderr.
: >"$records"
echo "$initialize" | "$rpc_server" >"$out" 2>"$err"
status=$?
sleep 0.5
if [ "$status" -eq 0 ] && [ ! -s "$records" ] && [ ! -s "$err" ] && grep -q '"result"' "$out"; then
  ok /net-clients/rpc-update-check-off
else
  not_ok /net-clients/rpc-update-check-off "exit $status, or it reached the network or said something on stderr"
fi
