#!/bin/bash
# `airlock gate` end to end on both arches, through the command a release
# pipeline runs: the clean sample passes (every negative control seen by
# the supervisor and in the capture, no attempt), the egress sample fails
# with each attempt named and the exit status 1, and the same image passes
# once its three destinations are on the allow-list.  An image that never
# ran is never a pass: one whose setup fails in the guest (a named User with
# an /etc/passwd over the supervisor's bound) and an entrypoint that does
# not exist are inconclusive on both arches, with the reason.  TAP output.
set -u

# shellcheck source=tap-lib.sh
. "$(dirname "$0")/tap-lib.sh"
samples="${AIRLOCK_SAMPLE_DIR:?run through meson test}"
echo "1..8"
derived="$work/derived"
mkdir "$derived"

"$cli" gate --image "oci:$samples/clean" >"$out" 2>&1
check /gate/clean-passes 0 $? \
  '^  amd64 +12/12 +0 +0 +0 +0 +exited +pass$' '^  arm64 +12/12 +0 +0 +0 +0 +exited +pass$' \
  '^amd64: bound to manifest sha256:[0-9a-f]{64}$' '^arm64: bound to manifest sha256:[0-9a-f]{64}$'

"$cli" gate --image "oci-archive:$samples/egress.tar" >"$out" 2>&1
check /gate/egress-fails 1 $? \
  '^  amd64 +12/12 +5 +0 +0 +0 +exited +fail$' '^  arm64 +12/12 +5 +0 +0 +0 +exited +fail$' \
  '^arm64: egress not admitted by the policy: sendto emulate inet/dgram/udp 10\.0\.2\.3:53 dns=example\.com\. by /usr/local/bin/egress-probe' \
  '^amd64: egress not admitted by the policy: connect continue inet/stream/tcp 198\.18\.243\.18:443 \(example\.com, SNI example\.com\) by /usr/local/bin/egress-probe'

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

python3 "$(dirname "$0")/derive-image.py" "$samples/clean" "$derived/no-entry" \
  --config 'Entrypoint=["/nonexistent/entry"]'
"$cli" gate --image "oci:$derived/no-entry" >"$out" 2>&1
check /gate/missing-entrypoint-is-inconclusive 3 $? \
  '^  amd64 .* inconclusive$' '^  arm64 .* inconclusive$' \
  '^amd64: the entrypoint could not be executed: /nonexistent/entry: ENOENT' \
  '^arm64: the entrypoint could not be executed: /nonexistent/entry: ENOENT'
