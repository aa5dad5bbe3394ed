#!/bin/sh
# tests/consumer/run.sh [BUILD-DIR]: airlock as a user gets it.  Builds this
# checkout afresh and installs it into a temporary prefix, builds the
# consumer project (this directory) against that prefix with nothing but
# pkg-config, and gates the installed `clean` sample on amd64 with it, with
# a fresh cache and none of the AIRLOCK_* variables a build tree sets.  TAP
# on stdout; exit 77 when a tool it needs is missing.
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
build=$tmp/build
consumer_build=$tmp/consumer-build
export AIRLOCK_CACHE_DIR="$tmp/cache"
# What a build tree or `meson devenv` would point elsewhere: the installed
# airlock must find its own files.
unset AIRLOCK_GUEST_DIR AIRLOCK_DATA_DIR AIRLOCK_CLI DESTDIR
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

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
# Explicit directories, so the paths below do not depend on the platform's
# defaults; the sample images are what the consumer runs.
if eval meson setup "\"$build\"" "\"$src\"" --prefix="\"$prefix\"" --libdir=lib \
     --libexecdir=libexec --datadir=share --mandir=share/man \
     -Dsample_images=true -Dfuzzing=false "$setup_args" > "$tmp/setup.log" 2>&1; then
  # Downloads only: build-sample checks each against packages.ini.
  if [ -n "$seed_build" ] && [ -d "$seed_build/images/sample/downloads" ]; then
    mkdir -p "$build/images/sample/downloads"
    cp "$seed_build"/images/sample/downloads/*.deb "$build/images/sample/downloads/" 2> /dev/null
  fi
  if ninja -C "$build" > "$tmp/build.log" 2>&1 \
     && meson install -C "$build" --no-rebuild > "$tmp/install.log" 2>&1; then
    ok "meson setup, build and install into a temporary prefix ($(($(now) - start)) s)"
  else
    not_ok "meson setup, build and install into a temporary prefix"
    diag "$tmp/build.log"
    diag "$tmp/install.log" 10
    bail "nothing is installed"
  fi
else
  not_ok "meson setup, build and install into a temporary prefix"
  diag "$tmp/setup.log"
  bail "nothing is installed"
fi

# ---- 2: the install is whole ---------------------------------------------

missing=
for f in bin/airlock lib/libairlock.so lib/pkgconfig/airlock.pc include/airlock/airlock.h \
         include/airlock/airlock-version.h \
         libexec/airlock/init-amd64 libexec/airlock/init-arm64 \
         libexec/airlock/probe-amd64 libexec/airlock/probe-arm64 \
         share/airlock/kernels.ini share/airlock/modules.list share/airlock/testroot.ini \
         share/airlock/samples/clean.tar share/airlock/samples/clean/index.json \
         share/man/man1/airlock.1; do
  [ -e "$prefix/$f" ] || missing="$missing $f"
done
# Every header a public header includes is installed, at the path it is
# included by ("vm/vm.h" from include/airlock/, or next to the includer).
for h in $(cd "$prefix/include/airlock" && find . -name '*.h' | sed 's|^\./||'); do
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' \
               "$prefix/include/airlock/$h"); do
    [ -e "$prefix/include/airlock/$inc" ] || [ -e "$prefix/include/airlock/$(dirname "$h")/$inc" ] \
      || missing="$missing include/airlock/$inc(included-by-$h)"
  done
done
if [ -z "$missing" ]; then
  ok "the prefix has the CLI, library, headers, pkg-config file, guest programs, recipe, samples, man page"
else
  not_ok "the prefix has the CLI, library, headers, pkg-config file, guest programs, recipe, samples, man page"
  for f in $missing; do echo "# missing: $f"; done
fi

# ---- 3: the installed airlock finds its own files ------------------------

# A fresh cache has no guest image, so doctor exits 4; what matters is that
# it found the guest programs in libexecdir and computed the guest image's
# key from the recipe in datadir ("not built yet"), not a missing file.
"$prefix/bin/airlock" doctor > "$tmp/doctor.log" 2>&1
if grep -q "^  ok   guest init (amd64) *$prefix/libexec/airlock/init-amd64\$" "$tmp/doctor.log" \
   && grep -q "guest image (amd64) .*\(not built yet\|sha256\)" "$tmp/doctor.log"; then
  ok "the installed 'airlock doctor' finds the guest programs and the recipe"
else
  not_ok "the installed 'airlock doctor' finds the guest programs and the recipe"
  diag "$tmp/doctor.log"
fi

# ---- 4: pkg-config ---------------------------------------------------------

if pkg-config --cflags --libs airlock > "$tmp/pkg-config.log" 2>&1; then
  ok "pkg-config --cflags --libs airlock: $(cat "$tmp/pkg-config.log")"
else
  not_ok "pkg-config --cflags --libs airlock"
  diag "$tmp/pkg-config.log"
fi

# ---- 5: the consumer builds against the install ---------------------------

if meson setup "$consumer_build" "$here" > "$tmp/consumer-setup.log" 2>&1 \
   && ninja -C "$consumer_build" > "$tmp/consumer-build.log" 2>&1; then
  ok "the consumer project builds with dependency('airlock')"
else
  not_ok "the consumer project builds with dependency('airlock')"
  diag "$tmp/consumer-setup.log" 10
  [ -f "$tmp/consumer-build.log" ] && diag "$tmp/consumer-build.log"
  bail "no consumer to run"
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
"$consumer_build/consumer" amd64 "$image" > "$tmp/consumer.out" 2> "$tmp/consumer.err"
status=$?
what="the consumer gates '$image' on amd64: verdict pass, no attempt"
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
