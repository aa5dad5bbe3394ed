#!/usr/bin/env python3
"""The architecture picture (docs/layers.txt) held against the code.

Reads the picture's parts, arrows, never-arrows and known exceptions, every
#include in lib/, harness/, guest/ and sinkhole/, and prints TAP: one test
per part held to its arrows, one per never-arrow, one for circles of
includes and one for circles of calls between files, one for exceptions the
code no longer needs.  The format is the
picture file's own header; run by layers.sh (suite `unit`).

Usage: layers.py SOURCE-ROOT [PICTURE]
"""

import fnmatch
import glob
import os
import re
import sys

# Where the picture's includes are looked for (lib/meson.build's
# include_directories, in the compiler's order after the includer's own
# directory).
INCLUDE_DIRS = ('.', 'guest', 'lib')
# The trees whose includes are held to the picture, and those whose
# includes may close a circle.
SCANNED = ('lib', 'harness', 'guest', 'sinkhole')
CIRCLE_SCOPE = ('lib', 'harness', 'guest')

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]')


class Picture:
    def __init__(self):
        self.parts = []        # (path, name), longest path first
        self.arrows = {}       # part -> set of parts (held parts only)
        self.arrow_globs = []  # (left glob, set of parts)
        self.nevers = []       # (line, left globs, right targets)
        self.known = {}        # (file, file) -> line number
        self.circles = {}      # frozenset of nodes -> line number
        self.call_circles = {}  # the same, for calls

    def part_of(self, path):
        for prefix, name in self.parts:
            if path == prefix or path.startswith(prefix + '/'):
                return name
        return None

    def held(self, part):
        """The parts @part may include, or None when it has no arrows."""
        allowed = None
        for left, rights in self.arrow_globs:
            if fnmatch.fnmatchcase(part, left):
                allowed = (allowed or set()) | rights
        return allowed


def parse_picture(path):
    pic = Picture()
    errors = []
    names = set()
    with open(path, encoding='utf-8') as f:
        for n, raw in enumerate(f, 1):
            line = raw.split('#', 1)[0].split()
            if not line:
                continue
            kind, rest = line[0], line[1:]
            if kind == 'part' and len(rest) >= 2:
                names.add(rest[0])
                for p in rest[1:]:
                    pic.parts.append((os.path.normpath(p), rest[0]))
            elif kind in ('arrow', 'never', 'known') and '->' in rest:
                i = rest.index('->')
                left, right = rest[:i], rest[i + 1:]
                if not left:
                    errors.append('line %d: nothing left of ->' % n)
                elif kind == 'arrow':
                    for l in left:
                        pic.arrow_globs.append((l, set(right)))
                elif kind == 'never':
                    pic.nevers.append((n, left, right))
                elif len(left) == 1 and len(right) == 1:
                    pic.known[(os.path.normpath(left[0]), os.path.normpath(right[0]))] = n
                else:
                    errors.append('line %d: known takes one file -> one file' % n)
            elif kind == 'circle' and len(rest) >= 2:
                pic.circles[frozenset(rest)] = n
            elif kind == 'call-circle' and len(rest) >= 2:
                pic.call_circles[frozenset(rest)] = n
            else:
                errors.append('line %d: cannot read %r' % (n, raw.strip()))
    pic.parts.sort(key=lambda pn: -len(pn[0]))
    # Every name an arrow or never-arrow uses must be a part (or match one):
    # a typo would silently allow or forbid nothing.
    for left, rights in pic.arrow_globs:
        if not any(fnmatch.fnmatchcase(p, left) for p in names):
            errors.append('arrow: %r names no part' % left)
        for r in rights:
            if r not in names:
                errors.append('arrow %s: %r is not a part' % (left, r))
    for n, left, right in pic.nevers:
        for g in left + [r for r in right if not r.startswith('<')]:
            if not any(fnmatch.fnmatchcase(p, g) for p in names):
                errors.append('line %d: %r names no part' % (n, g))
    for p, _ in pic.parts:
        if not os.path.exists(p):
            errors.append('part path %r does not exist' % p)
    return pic, errors


def public_headers():
    """The installed headers: airlock_public_headers in lib/**/meson.build."""
    out = set()
    for mb in glob.glob('lib/**/meson.build', recursive=True):
        with open(mb, encoding='utf-8') as f:
            text = f.read()
        for m in re.finditer(r'airlock_public_headers\s*\+?=\s*files\(([^)]*)\)', text):
            for h in re.findall(r"'([^']+)'", m.group(1)):
                out.add(os.path.normpath(os.path.join(os.path.dirname(mb), h)))
    return out


def scan_includes():
    """(file, line number, '<' or '"', text, resolved path or None) for every
    #include of the scanned trees."""
    out = []
    for top in SCANNED:
        for d, dirs, files in os.walk(top):
            dirs.sort()
            for fn in sorted(files):
                if not fn.endswith(('.c', '.h')):
                    continue
                f = os.path.join(d, fn)
                with open(f, encoding='utf-8', errors='replace') as fh:
                    for n, line in enumerate(fh, 1):
                        m = INCLUDE_RE.match(line)
                        if not m:
                            continue
                        resolved = None
                        if m.group(1) == '"':
                            for base in (os.path.dirname(f),) + INCLUDE_DIRS:
                                c = os.path.normpath(os.path.join(base, m.group(2)))
                                if os.path.isfile(c):
                                    resolved = c
                                    break
                        out.append((f, n, m.group(1), m.group(2), resolved))
    return out


def node_of(path, public):
    """A file's node for the circle check: foo.c, foo.h and foo-private.h
    beside it are one; an installed header is its own."""
    if path in public:
        return path
    base = path[:-2] if path.endswith(('.c', '.h')) else path
    if base.endswith('-private'):
        base = base[:-len('-private')]
    return base


def strongly_connected(edges):
    """Tarjan's algorithm, iterative: the components of more than one node."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return comps


DEFINITION_RE = re.compile(r'^([A-Za-z_]\w*) \(')
CALL_RE = re.compile(r'\b([A-Za-z_]\w*)\s*\(')


def call_edges(public):
    """Node -> nodes whose functions it calls, over the .c files of
    CIRCLE_SCOPE, with one call site per edge.  The house style puts a
    definition's name at the start of its line, after its return type's
    line: a function defined so in exactly one file, not static, is that
    file's; a call to it from another node is an edge.  An include can
    hide a circle (a header declaring another file's function, as
    vm-private.h declared accel.c's): calls cannot."""
    texts = {}
    for top in CIRCLE_SCOPE:
        for d, dirs, files in os.walk(top):
            for fn in files:
                if fn.endswith('.c'):
                    f = os.path.join(d, fn)
                    with open(f, encoding='utf-8', errors='replace') as fh:
                        texts[f] = fh.read()
    defined = {}
    for f, text in texts.items():
        lines = text.split('\n')
        for i, line in enumerate(lines):
            m = DEFINITION_RE.match(line)
            if (m and i > 0 and lines[i - 1].strip() and not lines[i - 1].startswith(('static', '#'))
                    and not line.rstrip().endswith(';')):
                defined.setdefault(m.group(1), set()).add(f)
    owner = {name: next(iter(fs)) for name, fs in defined.items() if len(fs) == 1}
    edges, why = {}, {}
    for f, text in sorted(texts.items()):
        # Comments and strings name functions without calling them.
        code = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
        code = re.sub(r'"(\\.|[^"\\\n])*"', '""', code)
        a = node_of(f, public)
        for m in CALL_RE.finditer(code):
            g = owner.get(m.group(1))
            if g is None:
                continue
            b = node_of(g, public)
            if a != b:
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), '%s calls %s() of %s' % (f, m.group(1), g))
    return edges, why


def circles_test(name, edges, why, excused, found):
    bad = []
    for comp in strongly_connected(edges):
        key = frozenset(comp)
        if key in excused:
            found.add(key)
            continue
        members = set(comp)
        bad.append('circle: ' + ' '.join(comp))
        for a in comp:
            for b in sorted(edges.get(a, ())):
                if b in members:
                    bad.append('  ' + why[(a, b)])
    return (not bad, name, bad)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    os.chdir(root)
    picture = sys.argv[2] if len(sys.argv) > 2 else 'docs/layers.txt'
    results = []   # (ok, name, diagnostics)

    pic, errors = parse_picture(picture)
    results.append((not errors, 'picture-reads', errors))
    includes = scan_includes()
    used_known = set()

    def excused(f, target):
        if target and (f, target) in pic.known:
            used_known.add((f, target))
            return True
        return False

    # Arrows: a held part includes only its own files and its arrows' parts.
    held_parts = sorted({pic.part_of(f) for f, *_ in includes if pic.part_of(f)})
    for part in held_parts:
        allowed = pic.held(part)
        if allowed is None:
            continue
        bad = []
        for f, n, kind, text, target in includes:
            if pic.part_of(f) != part or not target:
                continue
            tpart = pic.part_of(target)
            if tpart in (part, None) or tpart in allowed or excused(f, target):
                continue
            bad.append('%s:%d: #include "%s" (%s)' % (f, n, text, tpart))
        results.append((not bad, '%s-includes-only-its-arrows' % part.replace('/', '-'),
                        bad + (['may include: %s' % (' '.join(sorted(allowed)) or 'nothing')]
                               if bad else [])))

    # Never-arrows.
    for n, left, right in pic.nevers:
        bad = []
        for f, ln, kind, text, target in includes:
            part = pic.part_of(f)
            if not part or not any(fnmatch.fnmatchcase(part, g) for g in left):
                continue
            if kind == '<':
                hit = any(r.startswith('<') and text.startswith(r[1:]) for r in right)
            else:
                tpart = pic.part_of(target) if target else None
                hit = (tpart is not None and tpart != part
                       and any(fnmatch.fnmatchcase(tpart, r) for r in right if not r.startswith('<')))
                if hit and excused(f, target):
                    hit = False
            if hit:
                bad.append('%s:%d: #include %s%s%s' % (f, ln, kind, text, '>' if kind == '<' else '"'))
        name = 'never-%s-to-%s' % ('+'.join(left), '+'.join(r.lstrip('<') for r in right))
        results.append((not bad, name.replace('/', '-').replace('*', 'any'),
                        ['picture line %d' % n] + bad if bad else []))

    # Circles between nodes of lib/, harness/ and guest/.
    public = public_headers()
    edges, why = {}, {}
    for f, n, kind, text, target in includes:
        if not target or not f.startswith(tuple(t + '/' for t in CIRCLE_SCOPE)):
            continue
        a, b = node_of(f, public), node_of(target, public)
        if a != b:
            edges.setdefault(a, set()).add(b)
            why.setdefault((a, b), '%s:%d: #include "%s"' % (f, n, text))
    found = set()
    results.append(circles_test('no-include-circles', edges, why, pic.circles, found))
    cedges, cwhy = call_edges(public)
    call_found = set()
    results.append(circles_test('no-call-circles', cedges, cwhy, pic.call_circles, call_found))

    # Exceptions the code no longer needs: the picture must match the code.
    stale = ['picture line %d: known %s -> %s: the include is gone (or allowed): remove the line'
             % (ln, a, b) for (a, b), ln in sorted(pic.known.items()) if (a, b) not in used_known]
    stale += ['picture line %d: circle %s: no longer a circle: remove the line'
              % (ln, ' '.join(sorted(c))) for c, ln in sorted(pic.circles.items(), key=lambda x: x[1])
              if c not in found]
    stale += ['picture line %d: call-circle %s: no longer a circle: remove the line'
              % (ln, ' '.join(sorted(c))) for c, ln in sorted(pic.call_circles.items(), key=lambda x: x[1])
              if c not in call_found]
    results.append((not stale, 'exceptions-still-needed', stale))

    print('1..%d' % len(results))
    for i, (ok, name, diags) in enumerate(results, 1):
        print('%s %d /layers/%s' % ('ok' if ok else 'not ok', i, name))
        for d in diags:
            print('# ' + d)
    return 0


if __name__ == '__main__':
    sys.exit(main())
