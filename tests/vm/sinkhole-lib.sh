# shellcheck shell=bash disable=SC2034,SC2154
# Sourced by the sinkhole's VM tests (sinkhole.sh, sinkhole-rpc.sh,
# sinkhole-curl.sh): TAP helpers, the check that airlock has a sinkhole at
# all, and the record checks (sinkhole-records.py, the one place that knows
# the bundle's record file).  Expects $cli and $work set; the variables it
# sets are the tests' (hence the shellcheck line above).

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
arches=(amd64 arm64)
out="$work/out.txt"
n=0

ok () { n=$((n + 1)); echo "ok $n $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n $1 # $2"; sed 's/^/# /' "$out"; }

# The sinkhole is airlock's network now: nothing here skips for its
# absence (a build without it is broken, and fails).
sinkhole_require () {
  :
}

# expect_records NAME BUNDLE CHECK…: the run wrote BUNDLE, and every CHECK
# (a sinkhole-records.py command line after the bundle, its words joined
# by '|') holds for it; one TAP line.  E.g.
#   expect_records /x "$b" 'dns|example.com|udp|A' 'tcp|example.com|80|http.host=example.com'
expect_records () {
  local name="$1" bundle="$2" check words
  shift 2
  if [ ! -f "$bundle/manifest.json" ] || [ -e "$bundle/INCOMPLETE" ]; then
    not_ok "$name" "no finished bundle at $bundle"
    return 1
  fi
  for check in "$@"; do
    IFS='|' read -r -a words <<<"$check"
    if ! python3 "$here/sinkhole-records.py" "$bundle" "${words[@]}" >"$work/records.txt" 2>&1; then
      not_ok "$name" "the sinkhole's records lack: ${words[*]}"
      sed 's/^/# /' "$work/records.txt"
      return 1
    fi
  done
  ok "$name"
}

# run_status COMMAND…: runs an airlock command with its output in $out;
# sets $status.
run_status () {
  "$cli" "$@" >"$out" 2>&1
  status=$?
}
