#!/bin/bash
# `airlock policy suggest` as a script calls it: its exit statuses (2 usage,
# 1 nothing to learn from, 0 written), --output never overwriting, and a
# bundle of a run without egress suggesting no rule (the bundle of
# tests/unit/data, written by an earlier airlock).  The rules themselves and
# their round trip are test-bundle's (/bundle/policy/…).  No VM.  TAP.
set -u
cli="${AIRLOCK_CLI:?run through meson test}"
data="${1:?give tests/unit/data}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0
result () {   # result OK NAME: one TAP line, and the output when it failed
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then
    echo "ok $n $2"
  else
    echo "not ok $n $2"
    sed 's/^/# /' "$dir/out"
  fi
}

"$cli" policy >"$dir/out" 2>&1
[ $? -eq 2 ] && grep -q "give a subcommand: suggest" "$dir/out"
result $? /cli/policy/no-subcommand-is-usage

"$cli" policy suggest >"$dir/out" 2>&1
[ $? -eq 2 ]
result $? /cli/policy/suggest-without-bundle-is-usage

mkdir "$dir/empty"
"$cli" policy suggest "$dir/empty" >"$dir/out" 2>&1
[ $? -eq 1 ] && grep -q "'$dir/empty' is not a bundle" "$dir/out"
result $? /cli/policy/not-a-bundle-exits-1

"$cli" policy suggest "$data/bundle-before-sinkhole" >"$dir/out" 2>&1
[ $? -eq 0 ] && grep -q "^# No egress was recorded" "$dir/out" && ! grep -q "^allow" "$dir/out"
result $? /cli/policy/no-egress-no-rule

echo "keep me" >"$dir/policy.txt"
"$cli" policy suggest "$data/bundle-before-sinkhole" -o "$dir/policy.txt" >"$dir/out" 2>&1
[ $? -eq 1 ] && grep -q "cannot write '$dir/policy.txt'" "$dir/out" && [ "$(cat "$dir/policy.txt")" = "keep me" ]
result $? /cli/policy/output-never-overwritten

"$cli" policy suggest "$data/bundle-before-sinkhole" --output "$dir/new.txt" >"$dir/out" 2>&1
[ $? -eq 0 ] && [ ! -s "$dir/out" ] && grep -q "^# airlock policy suggest" "$dir/new.txt"
result $? /cli/policy/output-written

# The bundle is amd64's: --arch arm64 leaves nothing to learn from.
"$cli" policy suggest "$data/bundle-before-sinkhole" --arch arm64 >"$dir/out" 2>&1
[ $? -eq 1 ] && grep -q "no bundle of arch arm64" "$dir/out"
result $? /cli/policy/arch-filters-bundles

"$cli" policy suggest "$data/bundle-before-sinkhole" --arch amd64 >"$dir/out" 2>&1
[ $? -eq 0 ] && grep -q "bundle-before-sinkhole: amd64" "$dir/out"
result $? /cli/policy/arch-keeps-its-own

"$cli" policy suggest "$data/bundle-before-sinkhole" --arch mips >"$dir/out" 2>&1
[ $? -eq 2 ]
result $? /cli/policy/unknown-arch-is-usage

echo "1..$n"
