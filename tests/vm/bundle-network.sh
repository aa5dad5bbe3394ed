#!/bin/bash
# The sinkhole's records as a file of the evidence bundle, end to end (one
# boot, amd64): `airlock gate --out --key-file` of the egress sample writes
# network.jsonl, listed in the signed manifest, holding example.com's DNS
# question and the address handed out, the HTTP connection to it on 80
# (GET / with Host example.com) and the TLS one on 443 (SNI example.com);
# the gate's report, `airlock show` (text and --json), summary.md and the
# statement say the same; `airlock verify` passes, and fails naming the
# record (or the capture's flow) when a line is removed or a record edited
# with the manifest made to match, when a byte changes, when the file is
# deleted.  TAP output.
set -u

# shellcheck source=tap-lib.sh
. "$(dirname "$0")/tap-lib.sh"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"

# expect_fail NAME DIR PATTERN: verify must exit 1 and print a line
# matching PATTERN.
expect_fail () {
  local name="$1" dir="$2" pattern="$3" status
  "$cli" verify "$dir" >"$out" 2>&1
  status=$?
  if [ "$status" -ne 1 ]; then not_ok "$name" "verify exit status $status, want 1"; return; fi
  if ! grep -Eq -- "$pattern" "$out"; then not_ok "$name" "no line matches '$pattern'"; return; fi
  ok "$name"
}

copy () { local d="$work/t$RANDOM$RANDOM"; cp -a "$1" "$d"; rm -f "$d/manifest.hmac"; echo "$d"; }

# Rewrites network.jsonl of bundle $1 with python code $2 over its lines
# (`lines`, a list of str with their newlines), then the manifest's digest
# and size of it to match: what an attacker without the key can do.
edit_records () {
  python3 - "$1" "$2" <<'EOF'
import hashlib, json, os, sys
d, code = sys.argv[1], sys.argv[2]
p = os.path.join(d, "network.jsonl")
lines = open(p).read().splitlines(True)
exec(code)
open(p, "w").write("".join(lines))
m = json.load(open(os.path.join(d, "manifest.json")))
data = open(p, "rb").read()
m["files"]["network.jsonl"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
open(os.path.join(d, "manifest.json"), "w").write(json.dumps(m, indent=2) + "\n")
EOF
}

echo "1..11"
head -c 32 /dev/urandom >"$work/key"

"$cli" gate --arch amd64 --image "oci-archive:$samples/egress.tar" --out "$work/gate" \
  --key-file "$work/key" >"$work/gate.txt" 2>&1
status=$?
bundle="$work/gate/amd64"
cp "$work/gate.txt" "$out"
if [ "$status" -eq 1 ] && [ -f "$bundle/network.jsonl" ] && [ ! -e "$bundle/INCOMPLETE" ] \
   && python3 - "$bundle" <<'EOF'
import hashlib, json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
data = open(d + "/network.jsonl", "rb").read()
assert m["files"]["network.jsonl"] == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
assert "sinkhole_error" not in m["run"], m["run"]
EOF
then ok "/bundle-network/gate-writes-network-jsonl-under-the-manifest"
else
  # Why the run has no records, when it says.
  python3 -c 'import json, sys; print("# run.sinkhole_error:", json.load(open(sys.argv[1]))["run"].get("sinkhole_error"))' \
    "$bundle/manifest.json" >>"$out" 2>&1
  not_ok "/bundle-network/gate-writes-network-jsonl-under-the-manifest" \
    "gate exit $status (want 1), or no network.jsonl listed with its digest"
  exit 0
fi

# What the sinkhole recorded of the probe: the question and the address
# handed out, then a connection to that address on 80 and on 443, each
# naming example.com and saying what the probe sent.
if python3 - "$bundle/network.jsonl" >"$out" 2>&1 <<'EOF'
import ipaddress, json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert lines[-1]["end"] is True and lines[-1]["records_dropped"] == 0, lines[-1]
recs = lines[:-1]
dns = [r for r in recs if r["kind"] == "dns" and r.get("question") == "example.com."]
assert len(dns) == 1 and dns[0]["qtype"] == 1 and dns[0]["transport"] == "udp", dns
addr = dns[0]["answers"][0]
assert ipaddress.ip_address(addr) in ipaddress.ip_network("198.18.0.0/15"), addr
tcp = {r["port"]: r for r in recs if r["kind"] == "tcp" and r["address"] == addr}
assert set(tcp) == {80, 443}, tcp
http, tls = tcp[80], tcp[443]
assert http["name"] == "example.com." and http["protocol"] == "http", http
assert http["http"]["method"] == "GET" and http["http"]["path"] == "/" and http["http"]["host"] == "example.com", http
assert http["bytes_in"] > 0 and http["response"] == "closed", http
assert tls["name"] == "example.com." and tls["protocol"] == "tls" and tls["tls"]["sni"] == "example.com", tls
print(addr)
EOF
then ok "/bundle-network/records-name-example-com"; addr=$(cat "$out")
else not_ok "/bundle-network/records-name-example-com" "network.jsonl lacks the probe's records"; addr="198.18.0.0"; fi
a=${addr//./\\.}

"$cli" verify "$work/gate" --key-file "$work/key" >"$out" 2>&1
if [ $? -eq 0 ] && grep -Eq '^amd64: verified .*verdict fail.*HMAC checked$' "$out"; then
  ok "/bundle-network/verifies-with-key"
else not_ok "/bundle-network/verifies-with-key" "verify did not pass the bundle"; fi

# The gate's report: the host-side table after the attempts.
cp "$work/gate.txt" "$out"
if grep -Eq '^amd64: network, as the sinkhole served it \(1 lookup, 2 connections; the negative controls. [0-9]+ records not listed\)$' "$out" \
   && grep -Eq "^  example\.com\. +A +$a +udp +10\.0\.2\.3\$" "$out" \
   && grep -Eq "^  example\.com +$a +80 +http +GET / Host: example\.com .* closed\$" "$out" \
   && grep -Eq "^  example\.com +$a +443 +tls +SNI example\.com .* closed\$" "$out"; then
  ok "/bundle-network/gate-report-shows-the-network"
else not_ok "/bundle-network/gate-report-shows-the-network" "no network table, or not the probe's"; fi

"$cli" show "$bundle" >"$out" 2>&1
if [ $? -eq 0 ] && grep -Eq '^amd64: network, as the sinkhole served it \(1 lookup, 2 connections' "$out" \
   && grep -Eq "^  example\.com\. +A +$a +udp +10\.0\.2\.3\$" "$out" \
   && grep -Eq "^  example\.com +$a +80 +http +GET / Host: example\.com " "$out" \
   && grep -Eq "^  example\.com +$a +443 +tls +SNI example\.com" "$out"; then
  ok "/bundle-network/show-lists-the-lookup-and-connections"
else not_ok "/bundle-network/show-lists-the-lookup-and-connections" "show's network section is not the probe's"; fi

"$cli" show --json "$bundle" >"$out" 2>&1
if python3 - "$out" "$addr" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))["bundles"][0]
net = b["network"]
work = [c for c in net["connections"] if not c["control"]]
assert [(c["name"], c["address"], c["port"], c["protocol"]) for c in work] == \
    [("example.com", sys.argv[2], 80, "http"), ("example.com", sys.argv[2], 443, "tls")], work
assert work[0]["sent"].startswith("GET / Host: example.com"), work[0]
assert [(l["question"], l["answer"]) for l in net["lookups"] if not l["control"]] == \
    [("example.com.", sys.argv[2])], net["lookups"]
assert net["complete"] is True
EOF
then ok "/bundle-network/show-json-says-the-same"
else not_ok "/bundle-network/show-json-says-the-same" "show --json's network is not the probe's"; fi

# summary.md and the statement: the same connections, the name as hostname.
if grep -Eq "^\| example\.com \| $a \| 80 \| http \| GET / Host: example\.com .*\| closed \|\$" "$bundle/summary.md" \
   && grep -Eq "^\| example\.com\. \| A \| $a \| udp \|\$" "$bundle/summary.md" \
   && python3 - "$bundle/attestation.intoto.json" "$addr" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
tcp = [e for e in s["predicate"]["monitorLog"]["network"] if e.get("ip") == sys.argv[2]]
assert tcp and all(e["hostname"] == "example.com." for e in tcp), tcp
assert {e["port"] for e in tcp} == {80, 443}, tcp
EOF
then ok "/bundle-network/summary-and-statement-name-the-host"
else cp "$bundle/summary.md" "$out"; not_ok "/bundle-network/summary-and-statement-name-the-host" "summary.md or the statement lacks the network"; fi

# Tampering, the manifest made to match (no key): what the capture shows
# holds the records to it.
d=$(copy "$bundle")
edit_records "$d" 'lines = [l for l in lines if not (json.loads(l).get("port") == 443 and json.loads(l).get("kind") == "tcp" and json.loads(l).get("name"))]'
expect_fail /bundle-network/tamper/removed-line "$d" \
  "^amd64: network\.jsonl: net\.pcap shows 1 connection\(s\) to inet/stream/tcp $a:443 that the network took .* network\.jsonl records 0: a record is missing\$"

d=$(copy "$bundle")
edit_records "$d" 'lines = [l.replace("\"address\":\"'"$addr"'\",\"port\":80,", "\"address\":\"198.18.0.99\",\"port\":80,") for l in lines]'
expect_fail /bundle-network/tamper/edited-record "$d" \
  "^amd64: network\.jsonl: line [0-9]+ \(tcp to 198\.18\.0\.99:80, example\.com\.\): net\.pcap holds no SYN from the guest to inet/stream/tcp 198\.18\.0\.99:80"

d=$(copy "$bundle")
python3 - "$d/network.jsonl" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x01
open(p, "wb").write(b)
EOF
expect_fail /bundle-network/tamper/changed-byte "$d" '^amd64: network\.jsonl: does not match its digest'

d=$(copy "$bundle"); rm "$d/network.jsonl"
expect_fail /bundle-network/tamper/deleted "$d" '^amd64: network\.jsonl: is missing \(manifest\.json lists it\)'
