#!/bin/sh
# tests/consumer/run.sh [BUILD-DIR]: airlock as a user gets it.  Builds this
# checkout afresh and installs it staged, as a package build does
# (`meson install --destdir STAGE` of a temporary prefix), builds the
# consumer project (this directory) against the staged tree with nothing but
# pkg-config (the .pc file as installed, its prefix relative to itself),
# then moves the tree to its prefix and gates the installed `clean` sample
# on amd64 with it, with a fresh cache and none of the AIRLOCK_* variables a
# build tree sets.  TAP on stdout; exit 77 when a tool it needs is missing.
#
# BUILD-DIR (optional; `meson test` passes this project's build directory)
# is only a source of downloads, checked against their pins like any
# download: the sample images' busybox-static packages
# (images/sample/downloads/) and the pinned guest kernel package
# (test-cache/downloads/, or the user's airlock cache).  Its guest compiler
# and QEMU options are used too.  Nothing it built is reused.
set -u

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
seed_build=${1:-}
user_cache=${AIRLOCK_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/airlock}

skip_all () { echo "1..0 # SKIP $1"; exit 77; }

for tool in meson ninja pkg-config python3; do
  command -v "$tool" > /dev/null 2>&1 || skip_all "$tool is not installed"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/airlock-consumer.XXXXXX") || { echo "Bail out! cannot create a temporary directory"; exit 1; }
trap 'rm -rf "$tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

prefix=$tmp/prefix
stage=$tmp/stage
# The prefix as installed under --destdir: what a package holds.
staged=$stage$prefix
build=$tmp/build
consumer_build=$tmp/consumer-build
export AIRLOCK_CACHE_DIR="$tmp/cache"
# What a build tree or `meson devenv` would point elsewhere: the installed
# airlock must find its own files.
unset AIRLOCK_GUEST_DIR AIRLOCK_DATA_DIR AIRLOCK_CLI DESTDIR

n=0
failed=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
# The last lines of a log, as TAP comments.
diag () { tail -n "${2:-30}" "$1" | sed 's/^/# /'; }
bail () { echo "Bail out! $1"; exit 1; }
now () { date +%s; }

echo "1..6"

# ---- 1: build and install this checkout ----------------------------------

# The options a user of this build chose for its guest compilers and QEMU.
setup_args=
if [ -n "$seed_build" ] && [ -f "$seed_build/meson-info/intro-buildoptions.json" ]; then
  setup_args=$(python3 - "$seed_build/meson-info/intro-buildoptions.json" <<'EOF'
import json, shlex, sys
options = {o['name']: o['value'] for o in json.load(open(sys.argv[1]))}
names = ('guest_cc_x86_64', 'guest_cc_aarch64', 'qemu_x86_64', 'qemu_aarch64')
print(' '.join(shlex.quote('-D%s=%s' % (n, options[n])) for n in names if options.get(n)))
EOF
  )
fi

start=$(now)
# The platform's libdir (lib/x86_64-linux-gnu on Debian), read back below:
# airlock.pc's relative prefix must climb out of it.  The other directories
# explicit, so the paths below do not depend on the platform's defaults;
# the sample images are what the consumer runs.
if eval meson setup "\"$build\"" "\"$src\"" --prefix="\"$prefix\"" \
     --libexecdir=libexec --datadir=share --mandir=share/man \
     -Dsample_images=true -Dfuzzing=false "$setup_args" > "$tmp/setup.log" 2>&1; then
  # Downloads only: build-sample checks each against packages.ini.
  if [ -n "$seed_build" ] && [ -d "$seed_build/images/sample/downloads" ]; then
    mkdir -p "$build/images/sample/downloads"
    cp "$seed_build"/images/sample/downloads/*.deb "$build/images/sample/downloads/" 2> /dev/null
  fi
  if ninja -C "$build" > "$tmp/build.log" 2>&1 \
     && meson install -C "$build" --no-rebuild --destdir "$stage" > "$tmp/install.log" 2>&1; then
    ok "meson setup, build and install with --destdir ($(($(now) - start)) s)"
  else
    not_ok "meson setup, build and install with --destdir"
    diag "$tmp/build.log"
    diag "$tmp/install.log" 10
    bail "nothing is installed"
  fi
else
  not_ok "meson setup, build and install with --destdir"
  diag "$tmp/setup.log"
  bail "nothing is installed"
fi
libdir=$(python3 -c 'import json, sys
print(next(o["value"] for o in json.load(open(sys.argv[1])) if o["name"] == "libdir"))' \
         "$build/meson-info/intro-buildoptions.json") || bail "cannot read the build's libdir"

# ---- 2: the install is whole ---------------------------------------------

inc=include/airlock-1
missing=
for f in bin/airlock "$libdir/libairlock.so" "$libdir/pkgconfig/airlock.pc" \
         $inc/airlock.h $inc/airlock/airlock.h $inc/airlock/airlock-version.h \
         $inc/airlock/vm/vm.h $inc/airlock/case/case.h $inc/airlock/testing/testing.h \
         libexec/airlock/init-amd64 libexec/airlock/init-arm64 \
         libexec/airlock/probe-amd64 libexec/airlock/probe-arm64 \
         share/airlock/kernels.ini share/airlock/modules.list share/airlock/testroot.ini \
         share/airlock/samples/clean.tar share/airlock/samples/clean/index.json \
         share/man/man1/airlock.1; do
  [ -e "$staged/$f" ] || missing="$missing $f"
done
# The -I directory holds airlock.h and airlock/ alone: any other header
# there would hide a system header of its name from every consumer (our
# paths.h did glibc's <paths.h>).
for f in $(ls -A "$staged/$inc"); do
  case $f in airlock.h | airlock) ;; *) missing="$missing $inc/$f(must-not-be-in-the-include-directory)" ;; esac
done
# Every header a public header includes is installed next to the includer,
# at the relative path it names ("../arch.h"): a quoted include that
# resolved only through -I would find whatever the consumer's -I holds.
for h in $(cd "$staged/$inc" && find . -name '*.h' | sed 's|^\./||'); do
  for included in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' \
                    "$staged/$inc/$h"); do
    [ -e "$staged/$inc/$(dirname "$h")/$included" ] \
      || missing="$missing $inc/$(dirname "$h")/$included(included-by-$h)"
  done
done
if [ -z "$missing" ]; then
  ok "the staged tree has the CLI, library, headers, pkg-config file, guest programs, recipe, samples, man page"
else
  not_ok "the staged tree has the CLI, library, headers, pkg-config file, guest programs, recipe, samples, man page"
  for f in $missing; do echo "# missing or misplaced: $f"; done
fi

# ---- 3: pkg-config on the staged tree --------------------------------------

# The .pc file as installed, found through PKG_CONFIG_PATH alone: every
# path it gives must be the staged tree's (relocatable: its prefix is
# ${pcfiledir}/…), none the prefix nothing is installed in yet.
export PKG_CONFIG_PATH="$staged/$libdir/pkgconfig"
if pkg-config --cflags --libs airlock > "$tmp/pkg-config.log" 2>&1; then
  flags=$(cat "$tmp/pkg-config.log")
  include_dir= lib_dir= stray=
  for flag in $flags; do
    case $flag in
      -I*) [ -e "${flag#-I}/airlock.h" ] && include_dir=$(realpath "${flag#-I}") ;;
      -L*) [ -e "${flag#-L}/libairlock.so" ] && lib_dir=$(realpath "${flag#-L}") ;;
    esac
    case $flag in -I"$prefix"/* | -L"$prefix"/* | -I"$prefix" | -L"$prefix") stray="$stray $flag" ;; esac
  done
  if [ "$include_dir" = "$(realpath "$staged/$inc")" ] \
     && [ "$lib_dir" = "$(realpath "$staged/$libdir")" ] && [ -z "$stray" ]; then
    ok "pkg-config --cflags --libs airlock names the staged tree: $flags"
  else
    not_ok "pkg-config --cflags --libs airlock names the staged tree"
    echo "# flags: $flags"
    echo "# -I with airlock.h: '${include_dir}', expected '$staged/$inc'"
    echo "# -L with libairlock.so: '${lib_dir}', expected '$staged/$libdir'"
    [ -n "$stray" ] && echo "# outside the staged tree:$stray"
    diag "$staged/$libdir/pkgconfig/airlock.pc" 12
  fi
else
  not_ok "pkg-config --cflags --libs airlock names the staged tree"
  diag "$tmp/pkg-config.log"
fi

# ---- 4: the consumer builds against the staged tree -----------------------

if meson setup "$consumer_build" "$here" > "$tmp/consumer-setup.log" 2>&1 \
   && ninja -C "$consumer_build" > "$tmp/consumer-build.log" 2>&1; then
  ok "the consumer project (<airlock.h> beside <mntent.h>, <paths.h>, <utmp.h>) builds with dependency('airlock')"
else
  not_ok "the consumer project (<airlock.h> beside <mntent.h>, <paths.h>, <utmp.h>) builds with dependency('airlock')"
  diag "$tmp/consumer-setup.log" 10
  [ -f "$tmp/consumer-build.log" ] && diag "$tmp/consumer-build.log"
  bail "no consumer to run"
fi

# The package unpacked where it was built for: from here on the
# installed airlock runs, and finds its own files under $prefix.
mv "$staged" "$prefix" || bail "cannot move '$staged' to '$prefix'"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
export LD_LIBRARY_PATH="$prefix/$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# ---- 5: the installed airlock finds its own files ------------------------

# A fresh cache has no guest image, so doctor exits 4; what matters is that
# it found the guest programs in libexecdir and computed the guest image's
# key from the recipe in datadir ("not built yet"), not a missing file.
# Without LD_LIBRARY_PATH: the command finds its libairlock by its own
# run path, in the tree as moved.
env -u LD_LIBRARY_PATH "$prefix/bin/airlock" doctor > "$tmp/doctor.log" 2>&1
if grep -q "^  ok   guest init (amd64) *$prefix/libexec/airlock/init-amd64\$" "$tmp/doctor.log" \
   && grep -q "guest image (amd64) .*\(not built yet\|sha256\)" "$tmp/doctor.log"; then
  ok "the installed 'airlock doctor' finds the guest programs and the recipe"
else
  not_ok "the installed 'airlock doctor' finds the guest programs and the recipe"
  diag "$tmp/doctor.log"
fi

# ---- 6: the consumer gates the installed clean sample --------------------

# The pinned amd64 kernel package, if this machine has it already (a
# 70 MB download otherwise); airlock checks it against kernels.ini.
kernel_deb=$(sed -n '/^\[amd64\]/,/^\[/p' "$src/images/guest/kernels.ini" | python3 -c '
import sys
pin = dict(l.strip().split("=", 1) for l in sys.stdin if "=" in l and not l.startswith("#"))
print("%s_%s_amd64.deb" % (pin["package"], pin["version"].replace(":", "%3a")))')
for dir in ${seed_build:+"$seed_build/test-cache/downloads"} "$user_cache/downloads"; do
  if [ -f "$dir/$kernel_deb" ]; then
    mkdir -p "$AIRLOCK_CACHE_DIR/downloads"
    cp "$dir/$kernel_deb" "$AIRLOCK_CACHE_DIR/downloads/" && break
  fi
done

image=oci-archive:$prefix/share/airlock/samples/clean.tar
start=$(now)
"$consumer_build/consumer" amd64 "$image" "$tmp/bundle" > "$tmp/consumer.out" 2> "$tmp/consumer.err"
status=$?
what="the consumer gates '$image' on amd64: verdict pass, no attempt, its bundle verified and read back"
case $status in
  0)
    ok "$what ($(($(now) - start)) s)"
    sed 's/^/# /' "$tmp/consumer.out"
    ;;
  77)
    n=$((n + 1))
    echo "ok $n - $what # SKIP $(tail -n 1 "$tmp/consumer.err")"
    ;;
  *)
    not_ok "$what (exit status $status)"
    sed 's/^/# /' "$tmp/consumer.out"
    diag "$tmp/consumer.err"
    ;;
esac

exit $failed
