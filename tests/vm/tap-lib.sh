# Sourced by the TAP scripts here: the command under test ($cli), a
# scratch directory ($work, removed on exit: a script that cleans up more
# sets its own trap and removes "$work" too), the file each command's
# output goes to ($out), and the TAP lines.  Every helper counts the test
# in $n and, on a failure, shows $out as TAP comments.
# shellcheck shell=bash
cli="${AIRLOCK_CLI:?run through meson test}"
work=$(mktemp -d)
out="$work/out.txt"
trap 'rm -rf "$work"' EXIT
n=0

ok () { n=$((n + 1)); echo "ok $n $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n $1 # $2"; sed 's/^/# /' "$out"; }

# check NAME WANT_STATUS STATUS [grep -E patterns that must match]...
check () {
  local name="$1" want="$2" status="$3"
  shift 3
  n=$((n + 1))
  if [ "$status" -ne "$want" ]; then
    echo "not ok $n $name # exit status $status, want $want"
    sed 's/^/# /' "$out"
    return
  fi
  for pattern in "$@"; do
    if ! grep -Eq -- "$pattern" "$out"; then
      echo "not ok $n $name # no line matches '$pattern'"
      sed 's/^/# /' "$out"
      return
    fi
  done
  echo "ok $n $name"
}
