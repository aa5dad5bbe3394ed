#!/bin/bash
# libairlock.so exports exactly what its headers declare AIRLOCK_PUBLIC.
# The library is built with hidden visibility, and the airlock command links
# the shared library alone (harness/meson.build): a declaration without an
# exported definition is a link error for every user, and an exported symbol
# no header declares is API nobody documented.  And no *-private.h declares
# anything public.  TAP.
set -u
src="${1:?usage: public-symbols.sh SOURCE-ROOT LIBAIRLOCK.SO}"
lib="${2:?usage: public-symbols.sh SOURCE-ROOT LIBAIRLOCK.SO}"

declared=$(grep -rhoE --include='*.h' 'AIRLOCK_PUBLIC[^;(]*\bairlock_[a-z0-9_]+ ?\(' "$src/lib" \
           | grep -oE 'airlock_[a-z0-9_]+ ?\($' | tr -d ' (' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '$3 ~ /^airlock_/ {print $3}' | sort -u)
private=$(grep -rlE --include='*-private.h' 'AIRLOCK_PUBLIC' "$src/lib")

echo "1..4"
n_declared=$(wc -w <<<"$declared")
if [ "$n_declared" -gt 100 ]; then
  echo "ok 1 /public-symbols/headers-declare ($n_declared functions)"
else
  echo "not ok 1 /public-symbols/headers-declare # only $n_declared AIRLOCK_PUBLIC functions found"
fi
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
if [ -z "$missing" ]; then
  echo "ok 2 /public-symbols/every-declared-function-is-exported"
else
  echo "not ok 2 /public-symbols/every-declared-function-is-exported"
  sed 's/^/# declared, not exported: /' <<<"$missing"
fi
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
if [ -z "$extra" ]; then
  echo "ok 3 /public-symbols/every-exported-function-is-declared"
else
  echo "not ok 3 /public-symbols/every-exported-function-is-declared"
  sed 's/^/# exported, declared in no header: /' <<<"$extra"
fi
if [ -z "$private" ]; then
  echo "ok 4 /public-symbols/no-private-header-declares-public"
else
  echo "not ok 4 /public-symbols/no-private-header-declares-public"
  sed 's/^/# /' <<<"$private"
fi
