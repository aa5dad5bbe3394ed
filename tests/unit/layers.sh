#!/bin/bash
# The architecture picture (CONTRIBUTING.md) held against the code: which
# library area may include which.  Data flows one way — image → disk → VM →
# recorder → frames → run record → verdict → bundle — and an include that
# runs against it (the verdict reaching into the VM, a decoder into the
# policy) fails here with the file and the line.  TAP.
set -u
src="${1:?usage: layers.sh SOURCE-ROOT}"
cd "$src" || exit 1

# area: the areas it may include (besides itself and the top-level headers).
declare -A allowed=(
  [evidence]=""
  [policy]=""
  [guestimg]=""
  [net]="evidence"
  # The sinkhole's pure part reuses the DNS decoder and the first-payload
  # parsers; the run record reads its record file.
  [sinkhole]="evidence net"
  [record]="evidence net sinkhole"
  [gate]="evidence net policy record sinkhole"
  [vm]="evidence guestimg net record sinkhole"
  [image]=""
  # The bundle holds the sinkhole's record file and checks it against the capture.
  [bundle]="evidence gate guestimg image net policy record sinkhole vm"
  [case]="bundle evidence gate image net record vm"
  [testing]="case policy"
)

n=0
fail=0
echo "1..$(( ${#allowed[@]} + 1 ))"
for area in $(printf '%s\n' "${!allowed[@]}" | sort); do
  n=$((n + 1))
  bad=""
  while IFS= read -r hit; do
    [ -n "$hit" ] || continue
    inc=$(sed -E 's/.*#include "(\.\.\/)?([a-z]+)\/.*/\2/' <<<"$hit")
    [ "$inc" = "$area" ] && continue
    if ! grep -qw -- "$inc" <<<"${allowed[$area]}"; then
      bad+="$hit"$'\n'
    fi
  # Public headers name another area relative to themselves ("../vm/vm.h",
  # lib/meson.build says why); the rest through -I lib ("vm/vm.h").
  done < <(grep -Hn -E '^#include "(\.\./)?[a-z]+/' lib/"$area"/*.[ch] 2>/dev/null)
  if [ -z "$bad" ]; then
    echo "ok $n /layers/$area-includes-only-below-it"
  else
    echo "not ok $n /layers/$area-includes-only-below-it # may include: ${allowed[$area]:-nothing}"
    sed 's/^/# /' <<<"$bad"
    fail=1
  fi
done

# The trusted guest programs are static C of their own: nothing of the
# host library, nothing of GLib.
n=$((n + 1))
bad=$(grep -Hn -E '^#include [<"](glib|gio|json-glib|libvirt|evidence/|gate/|vm/|record/)' guest/*.[ch])
if [ -z "$bad" ]; then
  echo "ok $n /layers/guest-includes-nothing-of-the-host"
else
  echo "not ok $n /layers/guest-includes-nothing-of-the-host"
  sed 's/^/# /' <<<"$bad"
fi
exit 0
