#!/bin/bash
# `airlock images` around the guest images' fetch and transfer, without a
# VM or the network: its usage errors; export from an empty cache and
# import of a file that is no export, refused (exit 4) with a reason and
# nothing written; and `images build` when apt cannot give the pinned
# kernel (a stand-in apt-get that fails as it does for a pin that left the
# archive): the snapshot archive (off in tests) and the --kernel-dir
# directory are tried after it, in that order, each named with its reason.
# TAP.
set -u
cli="${AIRLOCK_CLI:?run through meson test}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0
ok () { n=$((n + 1)); echo "ok $n $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n $1 # $2"; sed 's/^/# /' "$dir/out"; }

expect_usage () {
  local name=$1; shift
  "$cli" images "$@" >"$dir/out" 2>&1
  local status=$?
  if [ "$status" -eq 2 ]; then ok "$name"; else not_ok "$name" "exit $status, expected 2"; fi
}

expect_usage /cli/images/export-needs-a-file export
expect_usage /cli/images/import-takes-one-file import a b
expect_usage /cli/images/import-takes-no-arch import --arch amd64 "$dir/x.tar"
expect_usage /cli/images/kernel-dir-only-for-build show --kernel-dir "$dir"
expect_usage /cli/images/kernel-dir-not-for-export export --kernel-dir "$dir" "$dir/x.tar"

"$cli" images export --cache-dir "$dir/empty" --arch amd64 "$dir/x.tar" >"$dir/out" 2>&1
status=$?
if [ "$status" -eq 4 ] && grep -q "no usable amd64 guest image" "$dir/out" \
   && [ ! -e "$dir/x.tar" ] && [ -z "$(find "$dir" -name '.airlock-export-*')" ]; then
  ok /cli/images/export-of-nothing-built-writes-nothing
else
  not_ok /cli/images/export-of-nothing-built-writes-nothing "exit $status"
fi

printf 'not a tar archive' >"$dir/junk.tar"
"$cli" images import --cache-dir "$dir/cache" "$dir/junk.tar" >"$dir/out" 2>&1
status=$?
if [ "$status" -eq 4 ] && grep -q "cannot import '$dir/junk.tar'" "$dir/out" \
   && [ -z "$(find "$dir/cache" -mindepth 2)" ]; then
  ok /cli/images/import-of-junk-refused
else
  not_ok /cli/images/import-of-junk-refused "exit $status"
fi

mkdir -p "$dir/bin" "$dir/debs"
printf '#!/bin/sh\necho "E: simulated: the pin left the archive" >&2\nexit 100\n' >"$dir/bin/apt-get"
chmod +x "$dir/bin/apt-get"
PATH="$dir/bin:$PATH" AIRLOCK_SNAPSHOT_URL= \
  "$cli" images build --arch amd64 --cache-dir "$dir/cache" --kernel-dir "$dir/debs" >"$dir/out" 2>&1
status=$?
apt=$(grep -n "the apt archive (.*E: simulated: the pin left the archive" "$dir/out" | cut -d: -f1)
snap=$(grep -n "the snapshot archive: not used" "$dir/out" | cut -d: -f1)
local_dir=$(grep -n "the local directory ('$dir/debs/linux-image-.*_amd64.deb'): no such file" "$dir/out" | cut -d: -f1)
if [ "$status" -eq 4 ] && [ -n "$apt" ] && [ -n "$snap" ] && [ -n "$local_dir" ] \
   && [ "$apt" -lt "$snap" ] && [ "$snap" -lt "$local_dir" ]; then
  ok /cli/images/build-names-every-source-in-order
else
  not_ok /cli/images/build-names-every-source-in-order "exit $status"
fi

echo "1..$n"
