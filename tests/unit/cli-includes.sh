#!/bin/bash
# The command is a client of the library it ships (CONTRIBUTING.md, "Adding
# a subcommand"): no file of harness/ includes a *-private.h.  What the
# command needs from the library is public API, declared, documented and
# exported; a private header here would let it reach what no other user of
# libairlock can.  TAP: one line per harness file.
set -u
src="${1:?usage: cli-includes.sh SOURCE-ROOT}"
cd "$src" || exit 1

files=(harness/*.c harness/*.h)
echo "1..${#files[@]}"
n=0
for f in "${files[@]}"; do
  n=$((n + 1))
  found=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^>"]*-private\.h[>"]' "$f")
  if [ -n "$found" ]; then
    echo "not ok $n /cli-includes/$f # includes a private header"
    sed 's/^/# /' <<<"$found"
  else
    echo "ok $n /cli-includes/$f"
  fi
done
