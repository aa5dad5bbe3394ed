#!/bin/bash
# A build tree's airlock run directly, without `meson devenv`, looks for its
# recipe and guest programs where they would be installed; an uninstalled
# checkout has none there.  The error must say what to do (run it through
# `meson devenv -C BUILD airlock …`, or point AIRLOCK_DATA_DIR /
# AIRLOCK_GUEST_DIR at the files), not only "No such file or directory".
# `images build` reads the recipe and the guest programs before it
# downloads anything; `doctor` checks the cached image only.  No VM, no
# network.  TAP.
#
#   uninstalled-cli.sh INSTALLED-DATADIR   (datadir/airlock of this build)
set -u
cli="${AIRLOCK_CLI:?run through meson test}"
installed_data_dir="${1:?usage: uninstalled-cli.sh INSTALLED-DATADIR}"
devenv_hint='run a build tree'"'"'s airlock as `meson devenv -C BUILD airlock …`'
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/empty" "$dir/cache"
echo "1..4"

# $1: test number and name; $2: the file the message must name; $3: the
# variable it must offer; the rest: the environment of the run.
check_hint () {
  local what=$1 file=$2 var=$3 status
  shift 3
  env "$@" AIRLOCK_CACHE_DIR="$dir/cache" "$cli" images build --arch amd64 >"$dir/out" 2>&1
  status=$?
  if [ "$status" -ne 0 ] && grep -qF "'$file'" "$dir/out" && grep -qF "$devenv_hint" "$dir/out" \
     && grep -qF "point \$$var at the directory holding $(basename "$file")" "$dir/out"; then
    echo "ok $what"
  else
    echo "not ok $what # exit $status"
    sed 's/^/# /' "$dir/out"
  fi
}

check_hint "1 /cli/uninstalled/empty-data-dir-says-how-to-run" \
  "$dir/empty/kernels.ini" AIRLOCK_DATA_DIR AIRLOCK_DATA_DIR="$dir/empty"

# What a user gets from build/harness/airlock: the compiled-in datadir.
if [ -e "$installed_data_dir/kernels.ini" ]; then
  echo "ok 2 /cli/uninstalled/no-data-dir-says-how-to-run # SKIP airlock is installed in '$installed_data_dir'"
else
  check_hint "2 /cli/uninstalled/no-data-dir-says-how-to-run" \
    "$installed_data_dir/kernels.ini" AIRLOCK_DATA_DIR -u AIRLOCK_DATA_DIR
fi

# The recipe found, the guest programs not.
check_hint "3 /cli/uninstalled/empty-guest-dir-says-how-to-run" \
  "$dir/empty/init-amd64" AIRLOCK_GUEST_DIR AIRLOCK_GUEST_DIR="$dir/empty"

# doctor's fix for the guest image: not `airlock images build`, which
# fails the same way without the recipe.
AIRLOCK_DATA_DIR="$dir/empty" AIRLOCK_CACHE_DIR="$dir/cache" "$cli" doctor >"$dir/out" 2>&1
status=$?
if [ "$status" -ne 0 ] && grep -qF "guest image (amd64)" "$dir/out" \
   && grep -A1 -F "guest image (amd64)" "$dir/out" | grep -qF "fix: reinstall airlock, run a build tree's airlock as \`meson devenv -C BUILD airlock doctor\`" \
   && ! grep -qF "fix: airlock images build" "$dir/out"; then
  echo "ok 4 /cli/uninstalled/doctor-says-how-to-run"
else
  echo "not ok 4 /cli/uninstalled/doctor-says-how-to-run # exit $status"
  sed 's/^/# /' "$dir/out"
fi
