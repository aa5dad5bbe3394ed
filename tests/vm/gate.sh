#!/bin/bash
# `airlock gate` end to end on both arches, through the command a release
# pipeline runs, over the three samples at once (--image twice and an
# --images list; the table of images, a set of bundles per image, one JUnit
# file, the --json summaries): the clean sample passes (every negative control seen by
# the supervisor and in the capture, no attempt), the egress sample fails
# with each attempt named and the exit status 1, and the same image passes
# once its three destinations are on the allow-list.  An image that never
# ran is never a pass: one whose setup fails in the guest (a named User with
# an /etc/passwd over the supervisor's bound, or a FIFO in its place) and an
# entrypoint that does not exist are inconclusive on both arches, with the
# reason.  TAP output.
set -u

# shellcheck source=tap-lib.sh
. "$(dirname "$0")/tap-lib.sh"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"
echo "1..11"
derived="$work/derived"
mkdir "$derived"

# The three samples in one command, as a release gates its images: two
# --image and a list file (a comment, a blank line).  Each image's gate
# prints its own tables (in list order: clean, egress, rpc), then the
# table of images; the exit status is the highest (egress's 1).
printf '# the third sample\n\n  oci-archive:%s/rpc.tar\n' "$samples" >"$work/images.txt"
"$cli" gate --image "oci:$samples/clean" --image "oci-archive:$samples/egress.tar" \
  --images "$work/images.txt" --out "$work/list" --junit "$work/list.xml" --json \
  >"$work/list.jsonl" 2>"$out"
list_status=$?
# The first table of each kind is clean's (it runs first), egress's the
# only failing one.
check /gate/clean-passes 1 $list_status \
  '^  amd64 +12/12 +0 +0 +0 +0 +exited +pass$' '^  arm64 +12/12 +0 +0 +0 +0 +exited +pass$' \
  '^amd64: bound to manifest sha256:[0-9a-f]{64}$' '^arm64: bound to manifest sha256:[0-9a-f]{64}$' \
  "^airlock gate: image 1 of 3: oci:$samples/clean: pass \\(exit 0\\)$"
check /gate/egress-fails 1 $list_status \
  '^  amd64 +12/12 +5 +0 +0 +0 +exited +fail$' '^  arm64 +12/12 +5 +0 +0 +0 +exited +fail$' \
  '^arm64: egress not admitted by the policy: sendto continue inet/dgram/udp 10\.0\.2\.3:53 dns=example\.com\. by /usr/local/bin/egress-probe' \
  '^amd64: egress not admitted by the policy: connect continue inet/stream/tcp 198\.18\.243\.18:443 \(example\.com, SNI example\.com\) by /usr/local/bin/egress-probe' \
  "^airlock gate: image 2 of 3: oci-archive:$samples/egress\\.tar: fail \\(exit 1\\)$"
check /gate/list/table-of-images 1 $list_status \
  "^airlock gate: image 3 of 3: oci-archive:$samples/rpc\\.tar: pass \\(exit 0\\)$" \
  "^  oci:$samples/clean +pass +pass +0 +$work/list/01-clean$" \
  "^  oci-archive:$samples/egress\\.tar +fail +fail +1 +$work/list/02-egress\\.tar$" \
  "^  oci-archive:$samples/rpc\\.tar +pass +pass +0 +$work/list/03-rpc\\.tar$"
# Each image's bundles a set of their own that verifies, bound to its
# image; one JUnit file, a testsuite per image; under --json an
# image-summary per image and last the list's summary.
n=$((n + 1))
p=""
"$cli" verify "$work/list"/*/ >"$work/verify.out" 2>&1 || p="airlock verify DIR/*/ failed: $(tail -3 "$work/verify.out")"
for d in 01-clean 02-egress.tar 03-rpc.tar; do
  [ -n "$p" ] || [ -f "$work/list/$d/set.json" ] || p="no set record in $work/list/$d"
done
[ -n "$p" ] || python3 - "$work/list.jsonl" "$work/list.xml" "$samples" "$work/list" >"$work/py.out" 2>&1 <<'PY' || p="$(cat "$work/py.out")"
import json, sys, xml.etree.ElementTree as ET
lines = [json.loads(l) for l in open(sys.argv[1])]
samples, out = sys.argv[3], sys.argv[4]
refs = ["oci:" + samples + "/clean", "oci-archive:" + samples + "/egress.tar",
        "oci-archive:" + samples + "/rpc.tar"]
per = [l for l in lines if l["type"] == "image-summary"]
assert [p["verdict"] for p in per] == ["pass", "fail", "pass"], per
last = lines[-1]
assert last["type"] == "summary" and last["exit_status"] == 1 and last["verdict"] == "fail", last
assert [i["reference"] for i in last["images"]] == refs, last
assert [i["verdict"] for i in last["images"]] == ["pass", "fail", "pass"], last
assert [i["out"] for i in last["images"]] == [out + "/01-clean", out + "/02-egress.tar",
                                               out + "/03-rpc.tar"], last
assert sum(l["type"] == "summary" for l in lines) == 1, "more than one summary line"
root = ET.parse(sys.argv[2]).getroot()
suites = root.findall("testsuite")
assert [s.get("name") for s in suites] == refs, [s.get("name") for s in suites]
assert root.get("tests") == "6" and root.get("failures") == "2" and root.get("errors") == "0", root.attrib
assert [len(s.findall("testcase/failure")) for s in suites] == [0, 2, 0]
PY
if [ -z "$p" ]; then echo "ok $n /gate/list/bundles-junit-json"
else echo "not ok $n /gate/list/bundles-junit-json # $p"; fi

"$cli" gate --image "oci-archive:$samples/egress.tar" \
  --allow 'allow udp any port 53 dns=example.com' \
  --allow 'allow tcp any port 80 host=example.com' --allow 'allow tcp any port 443 host=example.com' >"$out" 2>&1
check /gate/egress-admitted-by-name-passes 0 $? \
  '^  amd64 +12/12 +5 +5 +0 +0 +exited +pass$' '^  arm64 +12/12 +5 +5 +0 +0 +exited +pass$'

# The same rules for another name admit nothing: host= is the name the
# sinkhole handed the address out for, not any name.
"$cli" gate --image "oci-archive:$samples/egress.tar" \
  --allow 'allow udp any port 53 dns=example.com' \
  --allow 'allow tcp any port 80 host=example.org' --allow 'allow tcp any port 443 host=example.org' >"$out" 2>&1
check /gate/egress-other-name-fails 1 $? \
  '^  amd64 +12/12 +5 +1 +0 +0 +exited +fail$' '^  arm64 +12/12 +5 +1 +0 +0 +exited +fail$' \
  '^amd64: egress not admitted by the policy: connect continue inet/stream/tcp 198\.18\.243\.18:443 \(example\.com'

# The detector proven blind on purpose (test-only guest modes): a control
# the probe skips fails the verdict naming it; a workload run outside the
# supervisor leaves flows no record explains.
"$cli" gate --image "oci:$samples/clean" --test-mode skip-control=dns-udp/ipv6 >"$out" 2>&1
check /gate/missing-control-fails 1 $? \
  '^  amd64 +11/12 .* fail$' '^  arm64 +11/12 .* fail$' \
  '^amd64: negative control dns-udp \(inet6/dgram/udp \[2001:db8::53\]:53\) was not seen by the supervisor nor the capture: the detector was blind$'

"$cli" gate --image "oci:$samples/clean" --test-mode unsupervised >"$out" 2>&1
check /gate/bypass-is-unattributed 1 $? \
  '^  amd64 +0/12 .* fail$' '^  arm64 +0/12 .* fail$' \
  '^amd64: unattributed egress inet/stream/tcp 192\.0\.2\.80:443 \(SNI control-https\.airlock\.test\): ' \
  '^arm64: negative control https \(inet6/stream/tcp \[2001:db8::80\]:443\) was not seen by the supervisor: the detector was blind$'

python3 "$(dirname "$0")/derive-image.py" "$samples/clean" "$derived/big-passwd" \
  --file '/etc/passwd=300000:#' --config 'User="app"'
"$cli" gate --image "oci:$derived/big-passwd" >"$out" 2>&1
check /gate/setup-failure-is-inconclusive 3 $? \
  '^  amd64 .* inconclusive$' '^  arm64 .* inconclusive$' \
  "^amd64: the workload never started: .*user 'app': cannot read the image's /etc/passwd: it is over 256 KiB" \
  "^arm64: the workload never started: .*user 'app': cannot read the image's /etc/passwd: it is over 256 KiB"

# FIFOs where the guest writes /etc/hosts, /etc/hostname and
# /etc/resolv.conf (replaced, never opened) and reads /etc/passwd (refused):
# a FIFO opened would hold the guest's setup until the time limit.
python3 "$(dirname "$0")/derive-image.py" "$samples/clean" "$derived/fifos" \
  --fifo /etc/hosts --fifo /etc/hostname --fifo /etc/resolv.conf --fifo /etc/passwd \
  --config 'User="app"'
"$cli" gate --image "oci:$derived/fifos" >"$out" 2>&1
check /gate/fifo-in-image-is-inconclusive-at-once 3 $? \
  '^  amd64 .* inconclusive$' '^  arm64 .* inconclusive$' \
  "^amd64: the workload never started: .*user 'app': cannot read the image's /etc/passwd: it is not a regular file" \
  "^arm64: the workload never started: .*user 'app': cannot read the image's /etc/passwd: it is not a regular file"

python3 "$(dirname "$0")/derive-image.py" "$samples/clean" "$derived/no-entry" \
  --config 'Entrypoint=["/nonexistent/entry"]'
"$cli" gate --image "oci:$derived/no-entry" >"$out" 2>&1
check /gate/missing-entrypoint-is-inconclusive 3 $? \
  '^  amd64 .* inconclusive$' '^  arm64 .* inconclusive$' \
  '^amd64: the entrypoint could not be executed: /nonexistent/entry: ENOENT' \
  '^arm64: the entrypoint could not be executed: /nonexistent/entry: ENOENT'
