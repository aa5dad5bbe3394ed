#!/usr/bin/env python3
"""check-release-gate.py WORKFLOW: the example release workflow
(examples/release-gate.yml) does what docs/release-gate.md says it does.

Read as YAML, as GitHub reads it: the jobs and what each needs; every
action pinned to a commit; each gate job restores its arch's guest images
from the Actions cache under a key made of the arch, the airlock commit and
the hash of kernels.ini (and modules.list), imports them (checked) or
builds and exports them, and saves them; publish installs only what
`airlock verify` needs (no QEMU, libvirt daemon, libguestfs, compilers or
scripts/setup) and runs it on both bundles.  TAP on stdout; skips (77)
without PyYAML."""

import re
import sys

try:
    import yaml
except ImportError:
    print("1..0 # SKIP PyYAML is not installed (Debian: python3-yaml)")
    sys.exit(77)

n = 0
failed = False


def check(ok, what):
    global n, failed
    n += 1
    if ok:
        print(f"ok {n} - {what}")
    else:
        failed = True
        print(f"not ok {n} - {what}")


def steps(job):
    return job.get("steps", []) if job else []


def runs(job):
    """Every run: script of the job, one string."""
    return "\n".join(s.get("run", "") for s in steps(job))


def step_using(job, action):
    return [s for s in steps(job) if s.get("uses", "").split("@")[0] == action]


with open(sys.argv[1], encoding="utf-8") as f:
    text = f.read()
wf = yaml.safe_load(text)
jobs = wf.get("jobs", {})

check(set(jobs) == {"build", "gate", "airlock", "publish"},
      f"the jobs are build, gate, airlock, publish (got {sorted(jobs)})")

# Every action by commit: a moved tag cannot change what runs.
uses = [s["uses"] for j in jobs.values() for s in steps(j) if "uses" in s]
# A local action (./airlock-src/...) is the airlock checkout's own, at the
# commit the job checks.
unpinned = [u for u in uses if not re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", u)
            and not re.fullmatch(r"\./airlock-src/\.github/actions/[\w-]+", u)]
check(uses and not unpinned, f"every action is pinned to a commit ({unpinned or 'all'})")

# ---- gate: the guest images cached -----------------------------------------
gate = jobs.get("gate", {})
restore = step_using(gate, "actions/cache/restore")
save = step_using(gate, "actions/cache/save")
check(len(restore) == 1, "gate restores the guest images from the Actions cache")
check(len(save) == 1, "gate saves them")
key = restore[0].get("with", {}).get("key", "") if restore else ""
path = restore[0].get("with", {}).get("path", "") if restore else ""
check("matrix.arch" in key, f"the cache key names the arch ({key!r})")
check("env.AIRLOCK_COMMIT" in key and "env.AIRLOCK_REF" in key,
      "the cache key names the airlock commit (or ref)")
m = re.search(r"hashFiles\(([^)]*)\)", key)
check(m is not None and "images/guest/kernels.ini" in m.group(1)
      and "images/guest/modules.list" in m.group(1),
      "the cache key hashes kernels.ini and modules.list")
order = [s.get("id") or s.get("name", "") for s in steps(gate)]
build_step = next((s for s in steps(gate) if "airlock images build" in s.get("run", "")), None)
check(build_step is not None, "gate builds its guest image")
script = build_step.get("run", "") if build_step else ""
check(path and "airlock images import" in script and "airlock images export" in script,
      "the build step imports a cached archive and exports a new one")
check(path.replace("${{ matrix.arch }}", "$ARCH") in script,
      f"it imports and exports the cached path ({path!r})")
check("! airlock images import" in script,
      "a refused archive does not end the job: the image is built from the pin")
check(bool(save) and save[0].get("with", {}).get("path") == path
      and "cache-primary-key" in save[0].get("with", {}).get("key", "")
      and "cache-hit != 'true'" in save[0].get("if", ""),
      "save stores the same path under the restored key, only on a miss")
if restore and save and build_step:
    i_restore = steps(gate).index(restore[0])
    i_build = steps(gate).index(build_step)
    i_save = steps(gate).index(save[0])
    i_gate = next((i for i, s in enumerate(steps(gate))
                   if "airlock gate" in s.get("run", "")
                   or s.get("uses", "").endswith("/actions/airlock-gate")), -1)
    check(i_restore < i_build < i_save < i_gate,
          "restore, build, save, then the gate (a failing gate still leaves the images)")
else:
    check(False, "restore, build, save, then the gate")

# ---- airlock: built once, in a job that never runs the image ---------------
airlock = jobs.get("airlock", {})
check("scripts/setup" in runs(airlock) and "meson install" in runs(airlock),
      "the airlock job builds and installs airlock")
check(any(s.get("with", {}).get("name") == "airlock-install"
          for s in step_using(airlock, "actions/upload-artifact")),
      "it uploads the installed tree as airlock-install")
check("AIRLOCK_COMMIT" in runs(airlock), "it checks the airlock commit")
check("airlock gate" not in runs(airlock) and "image" not in str(airlock.get("needs", "")),
      "it never gates (nor needs) the image")
check("--privileged" not in str(airlock.get("container", {})), "it is not privileged")

# ---- publish: only what `airlock verify` needs -----------------------------
publish = jobs.get("publish", {})
needs = publish.get("needs", [])
check(isinstance(needs, list) and {"build", "airlock", "gate"} <= set(needs),
      f"publish needs build, airlock and gate ({needs})")
script = runs(publish)
# A command continued over lines ("\\" at the end) is one line.
installs = " ".join(re.findall(r"apt-get install[^\n]*", script.replace("\\\n", " ")))
forbidden = ["qemu", "libvirt-daemon", "libvirt-clients", "libguestfs", "supermin",
             "gcc", "meson", "ninja", "-dev", "linux-image"]
found = [w for w in forbidden if w in installs]
check(installs and not found, f"publish installs no QEMU, libvirt daemon, libguestfs, "
                              f"compiler or -dev package (found: {found or 'none'})")
check("scripts/setup" not in script and "meson " not in script,
      "publish neither runs scripts/setup nor builds airlock")
for lib in ["libglib2.0-0", "libjson-glib-1.0-0", "libvirt0", "liblzma5", "libarchive13",
            "libzstd1", "libssl3"]:
    check(lib in installs, f"publish installs {lib}, which airlock links")
check(any(s.get("with", {}).get("name") == "airlock-install"
          for s in step_using(publish, "actions/download-artifact")),
      "publish takes airlock from the airlock job")
check(re.search(r'airlock verify "bundle-\$arch" --key-file', script) is not None,
      "publish runs airlock verify on each bundle")
check("--privileged" not in str(publish.get("container", {})), "publish is not privileged")

print(f"1..{n}")
sys.exit(1 if failed else 0)
