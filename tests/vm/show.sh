#!/bin/bash
# `airlock show` on a real bundle: the egress sample gated on amd64 with
# --out (one boot), then show lists its five egress attempts (the DNS
# query to 10.0.2.3:53 for example.com., then a connect and a send to
# 198.18.243.18 — the address the sinkhole hands out for example.com. — on
# :80 and on :443, all by /usr/local/bin/egress-probe), the verdict fail
# with every reason, the controls, the capture and the network the
# sinkhole served; --dest and --process filter the attempts; --json says the same for scripts; a bundle marked INCOMPLETE,
# one lacking files and one without a manifest are shown as far as they go
# (exit 1 for the last); usage errors exit 2.  TAP output.
set -u

# shellcheck source=tap-lib.sh
. "$(dirname "$0")/tap-lib.sh"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"

# The attempts table's rows: lines under "amd64: attempts (" up to the
# next "amd64: " line, without the header and the note under the table.
attempt_rows () {
  sed -n '/^amd64: attempts (/,/^amd64: processes/p' "$out" \
    | grep -v -e '^amd64: ' -e '^  process ' -e '^  (not attempts'
}

echo "1..16"

"$cli" gate --image "oci-archive:$samples/egress.tar" --arch amd64 --out "$work/gate" >"$out" 2>&1
status=$?
if [ "$status" -eq 1 ] && [ -f "$work/gate/amd64/manifest.json" ] && [ ! -e "$work/gate/amd64/INCOMPLETE" ]; then
  ok "/show/gate-writes-the-bundle"
else
  not_ok "/show/gate-writes-the-bundle" "gate exit $status (want 1: the egress sample fails), or no finished bundle"
  exit 0
fi
bundle="$work/gate/amd64"

# The --out directory (ARCH/ bundles under it), as verify takes it.
"$cli" show "$work/gate" >"$out" 2>&1
status=$?
rows=$(attempt_rows)
probe='^  /usr/local/bin/egress-probe\[[0-9]+\] +'
if [ "$status" -eq 0 ] && grep -q '^amd64: attempts (5)$' "$out" && [ "$(echo "$rows" | wc -l)" -eq 5 ] \
   && echo "$rows" | grep -Eq "${probe}sendto +inet +dgram/udp +10\.0\.2\.3:53 +53 +example\.com\. +sent$" \
   && echo "$rows" | grep -Eq "${probe}connect +inet +stream/tcp +198\.18\.243\.18:80 +80 +- " \
   && echo "$rows" | grep -Eq "${probe}sendto +inet +stream/tcp +198\.18\.243\.18:80 +80 +- " \
   && echo "$rows" | grep -Eq "${probe}connect +inet +stream/tcp +198\.18\.243\.18:443 +443 +- " \
   && echo "$rows" | grep -Eq "${probe}sendto +inet +stream/tcp +198\.18\.243\.18:443 +443 +- " \
   && grep -q '^amd64: network, as the sinkhole served it (1 lookup, 2 connections' "$out"; then
  ok "/show/lists-the-five-attempts-and-the-network"
else not_ok "/show/lists-the-five-attempts-and-the-network" "exit $status, or the attempts table is not the sample's five"; fi

# Every reason verdict.json gives, under the verdict.
if python3 - "$bundle/verdict.json" "$out" <<'EOF'
import json, sys
v = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read().splitlines()
assert v["verdict"] == "fail" and len(v["reasons"]) == 5, v
i = text.index("amd64: verdict fail")
assert text[i + 1:i + 1 + len(v["reasons"])] == ["  " + r for r in v["reasons"]], text[i:i + 4]
assert any(r.startswith("egress not admitted by the policy: connect ") and "198.18.243.18:443" in r
           for r in v["reasons"])
EOF
then ok "/show/verdict-fail-with-every-reason"
else not_ok "/show/verdict-fail-with-every-reason" "the verdict or its reasons are not shown as verdict.json has them"; fi

manifest_digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["inputs"]["image"]["manifest"])' \
  "$bundle/manifest.json")
if grep -Eq "^  manifest +$manifest_digest$" "$out" && grep -Eq '^  kernel +6\.[0-9.]+-[0-9]+-amd64 sha256:[0-9a-f]{64}$' "$out" \
   && grep -Eq '^  supervisor +sha256:[0-9a-f]{64} \(build id [0-9a-f]+; recorder bpf-lsm\+seccomp\)$' "$out" \
   && grep -Eq '^  evidence +complete$' "$out" \
   && grep -Fq "tshark -r $bundle/net.pcap" "$out" \
   && grep -q '^amd64: negative controls (12 of 12 ' "$out" \
   && grep -Eq '^  dns-udp +inet/dgram/udp 192\.0\.2\.53:53 +seen +seen$' "$out" \
   && grep -Eq '^  2 +[0-9]+ +[0-9]+ +/usr/local/bin/egress-probe ' "$out" \
   && grep -q '^amd64: unattributed flows (0' "$out" \
   && grep -q '^amd64: console.log, last [0-9]* lines:$' "$out"; then
  ok "/show/digests-controls-processes-console"
else not_ok "/show/digests-controls-processes-console" "a section is missing or wrong"; fi

"$cli" show "$bundle" --dest 198.18.0.0/15 >"$out" 2>&1
status=$?
rows=$(attempt_rows)
if [ "$status" -eq 0 ] && grep -q '^amd64: attempts (4 of 5, --dest 198.18.0.0/15)$' "$out" \
   && [ "$(echo "$rows" | grep -c ' connect ')" -eq 2 ] && ! echo "$rows" | grep -q 'dgram/udp' \
   && grep -q '^  (--process and --dest filter the attempts, not these records)$' "$out"; then
  ok "/show/dest-keeps-the-connections"
else not_ok "/show/dest-keeps-the-connections" "exit $status, or --dest did not keep exactly the two connections' calls"; fi

"$cli" show "$bundle" --dest 10.0.2.3 >"$out" 2>&1
status=$?
rows=$(attempt_rows)
if [ "$status" -eq 0 ] && [ "$(echo "$rows" | wc -l)" -eq 1 ] && echo "$rows" | grep -q ' sendto .*example\.com\.'; then
  ok "/show/dest-one-host"
else not_ok "/show/dest-one-host" "--dest 10.0.2.3 did not keep the DNS query alone"; fi

"$cli" show "$bundle" --process egress-probe >"$out" 2>&1
status=$?
if [ "$status" -eq 0 ] && grep -q '^amd64: attempts (5 of 5, --process egress-probe)$' "$out" \
   && [ "$(attempt_rows | wc -l)" -eq 5 ]; then
  ok "/show/process-basename-keeps-all"
else not_ok "/show/process-basename-keeps-all" "exit $status, or --process egress-probe dropped an attempt"; fi

"$cli" show "$bundle" --process /usr/local/bin/egress-probe >"$out" 2>&1
a=$?
c1=$(attempt_rows | wc -l)
"$cli" show "$bundle" --process /bin/none >"$out" 2>&1
b=$?
if [ "$a" -eq 0 ] && [ "$c1" -eq 5 ] && [ "$b" -eq 0 ] && grep -q '^amd64: attempts (0 of 5, --process /bin/none)$' "$out" \
   && [ -z "$(attempt_rows)" ]; then
  ok "/show/process-path-exact"
else not_ok "/show/process-path-exact" "the full path kept $c1 of 5, or /bin/none kept some"; fi

"$cli" show "$work/gate" --json >"$out" 2>&1
status=$?
if [ "$status" -eq 0 ] && python3 - "$out" "$bundle" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
v = json.load(open(sys.argv[2] + "/verdict.json"))
m = json.load(open(sys.argv[2] + "/manifest.json"))
assert d["filter"] == {"process": None, "dest": None}
assert len(d["bundles"]) == 1
b = d["bundles"][0]
assert b["arch"] == "amd64" and b["readable"] is True and b["incomplete"] is None
assert b["missing"] == [] and b["unreadable"] == []
assert b["image"]["manifest"] == m["inputs"]["image"]["manifest"]
assert b["supervisor"]["sha256"] == m["inputs"]["supervisor"]["sha256"]
assert b["complete"] is True and b["verdict"] == "fail" and b["reasons"] == v["reasons"]
assert b["controls"]["observed"] == 12 and len(b["controls"]["each"]) == 12
assert b["capture"]["path"].endswith("/net.pcap")
got = sorted((a["syscall"], a["destination"], a["port"], tuple(a["dns"]), a["exe"]) for a in b["attempts"])
want = sorted([
    ("sendto", "10.0.2.3:53", 53, ("example.com.",), "/usr/local/bin/egress-probe"),
    ("connect", "198.18.243.18:80", 80, (), "/usr/local/bin/egress-probe"),
    ("sendto", "198.18.243.18:80", 80, (), "/usr/local/bin/egress-probe"),
    ("connect", "198.18.243.18:443", 443, (), "/usr/local/bin/egress-probe"),
    ("sendto", "198.18.243.18:443", 443, (), "/usr/local/bin/egress-probe"),
])
assert got == want, got
assert b["attempts_total"] == 5
assert [(c["name"], c["port"], c["protocol"]) for c in b["network"]["connections"] if not c["control"]] \
    == [("example.com", 80, "http"), ("example.com", 443, "tls")], b["network"]
assert b["sinkhole_error"] is None
assert [p["path"] for p in b["processes"]] == ["/usr/local/bin/egress-probe"]
assert b["unattributed"] == [] and len(b["console_tail"]) > 0
EOF
then ok "/show/json-has-the-same-attempts"
else not_ok "/show/json-has-the-same-attempts" "exit $status, or the JSON does not say what the tables say"; fi

"$cli" show "$bundle" --json --dest 198.18.0.0/15 --process egress-probe >"$out" 2>&1
if [ $? -eq 0 ] && python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))["bundles"][0]
assert sorted(a["port"] for a in b["attempts"]) == [80, 80, 443, 443], b["attempts"]
' "$out"; then ok "/show/json-filters"
else not_ok "/show/json-filters" "--json with --dest and --process is not the two connections calls"; fi

# INCOMPLETE: what a run that failed while writing leaves.  A copy, with
# the marker (and a control character that must come out escaped).
inc="$work/incomplete"
cp -a "$bundle" "$inc"
printf 'airlock test started this bundle; it is incomplete until this file is removed.\nnot finished: disk full \033[31m\n' \
  >"$inc/INCOMPLETE"
"$cli" show "$inc" >"$out" 2>&1
status=$?
if [ "$status" -eq 0 ] && grep -q '^amd64: INCOMPLETE: ' "$out" && grep -Fq '  | not finished: disk full \x1b[31m' "$out" \
   && ! grep -q $'\033' "$out" && grep -q '^amd64: attempts (5)$' "$out"; then
  ok "/show/incomplete-says-so"
else not_ok "/show/incomplete-says-so" "exit $status, or INCOMPLETE not shown (escaped), or the rest not shown"; fi

# Files missing: each named, the rest still shown.
lack="$work/lacking"
cp -a "$bundle" "$lack"
rm "$lack/events.jsonl" "$lack/net.pcap"
"$cli" show "$lack" >"$out" 2>&1
status=$?
if [ "$status" -eq 0 ] && grep -q '^amd64: missing: events.jsonl$' "$out" && grep -q '^amd64: missing: net.pcap$' "$out" \
   && grep -q '^amd64: attempts and processes unknown (events.jsonl is missing)$' "$out" \
   && grep -q '^amd64: verdict fail$' "$out"; then
  ok "/show/missing-files-named"
else not_ok "/show/missing-files-named" "exit $status, or a missing file not named"; fi

# No manifest (a run killed before its end): what is there, exit 1.
killed="$work/killed"
mkdir "$killed"
cp "$bundle/console.log" "$bundle/evidence.bin" "$killed/"
echo "airlock test started this bundle" >"$killed/INCOMPLETE"
"$cli" show "$killed" >"$out" 2>&1
status=$?
if [ "$status" -eq 1 ] && grep -q 'missing: manifest.json$' "$out" \
   && grep -q 'it holds: INCOMPLETE, console.log, evidence.bin$' "$out" && grep -q ': INCOMPLETE: ' "$out"; then
  ok "/show/no-manifest-exits-1"
else not_ok "/show/no-manifest-exits-1" "exit $status (want 1), or what it holds not said"; fi

# Usage: exit 2 and a message naming the problem.
usage_ok=1
for args in "" "--bogus $bundle" "--dest 10.0.0.1/8 $bundle" "--dest example.com $bundle" \
            "--dest any $bundle" "--process= $bundle" "$work/no-such-dir"; do
  # shellcheck disable=SC2086
  "$cli" show $args >"$out" 2>&1
  status=$?
  if [ "$status" -ne 2 ] || ! grep -q '^airlock show: ' "$out"; then
    usage_ok=0
    echo "# 'airlock show $args' exited $status"
  fi
done
if [ "$usage_ok" -eq 1 ]; then ok "/show/usage-exits-2"
else not_ok "/show/usage-exits-2" "a usage error did not exit 2"; fi

"$cli" show --help >"$out" 2>&1
if [ $? -eq 0 ] && grep -q "airlock verify' is for checking" "$out" && grep -q -- '--process=EXE' "$out" \
   && grep -q -- '--dest=CIDR' "$out"; then
  ok "/show/help-says-verify-checks"
else not_ok "/show/help-says-verify-checks" "the help does not say show reads and verify checks"; fi

# show never needs the key: a signed bundle reads the same, and show on a
# bundle does not change a byte of it (verify still passes).
"$cli" verify "$bundle" >"$out" 2>&1
if [ $? -eq 0 ]; then ok "/show/leaves-the-bundle-as-it-was"
else not_ok "/show/leaves-the-bundle-as-it-was" "verify fails after show"; fi
