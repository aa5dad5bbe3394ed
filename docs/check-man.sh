#!/bin/sh
# check-man.sh AIRLOCK MANPAGE VERSION README: the man page and README
# document what the command says it has.  Every command of `airlock --help`
# has its own section, every option of each `airlock CMD --help` appears
# (long and short spelling) in the page and, long, in README's row for the
# command (the lines of its command table that start "| `airlock CMD"), the
# title carries this build's version, and groff renders it without a
# warning.  TAP on stdout.
set -u

airlock=$1
page=$2
version=$3
readme=$4
n=0
failed=0

ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }

# The roff spelling of an option: every '-' escaped.
roff () { printf '%s' "$1" | sed 's/-/\\\\-/g'; }

commands=$("$airlock" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
if [ -z "$commands" ]; then
  echo "1..1"
  echo "not ok 1 - 'airlock --help' lists no command"
  exit 1
fi

for cmd in $commands; do
  if grep -q "^\.SS \"airlock $cmd[ \"]" "$page"; then
    ok "command '$cmd' has a section"
  else
    not_ok "command '$cmd' has a section (.SS \"airlock $cmd ...\")"
  fi
  # "  -a, --arch=ARCH   …" and "  --json   …"; --help is documented once.
  opts=$("$airlock" "$cmd" --help | sed -n 's/^  *\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\1\2/p' \
         | sed 's/, / /' | grep -v -e '--help$')
  for opt in $(echo "$opts" | tr ' ' '\n' | sed 's/^\(--[a-z-]*\).*/\1/'); do
    pattern=$(roff "$opt")
    case $opt in
      --*) grep -q -e "$pattern\([=\" ]\|\$\)" "$page" ;;
      *) grep -q -e "$pattern\([\" ]\|\$\)" "$page" ;;
    esac
    if [ $? -eq 0 ]; then
      ok "'airlock $cmd $opt' is documented"
    else
      not_ok "'airlock $cmd $opt' is documented"
    fi
    case $opt in
      --*)
        if grep "^| \`airlock $cmd[ \`]" "$readme" | grep -q -e "$opt\([][ =\`|]\|\$\)"; then
          ok "'airlock $cmd $opt' is in README's row for it"
        else
          not_ok "'airlock $cmd $opt' is in README's row for it (| \`airlock $cmd …)"
        fi ;;
    esac
  done
done

if grep -q "^\.TH AIRLOCK 1 [^ ]* \"airlock $version\"" "$page"; then
  ok "the title names version $version"
else
  not_ok "the title names version $version (.TH AIRLOCK 1 DATE \"airlock $version\" …)"
fi

if command -v groff > /dev/null 2>&1; then
  warnings=$(groff -man -ww -z "$page" 2>&1)
  if [ -z "$warnings" ]; then
    ok "groff -man -ww renders it without a warning"
  else
    not_ok "groff -man -ww renders it without a warning"
    echo "$warnings" | sed 's/^/# /'
  fi
else
  n=$((n + 1))
  echo "ok $n - groff -man -ww renders it without a warning # SKIP groff is not installed"
fi

echo "1..$n"
exit $failed
