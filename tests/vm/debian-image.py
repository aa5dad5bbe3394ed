#!/usr/bin/env python3
"""Builds a small multi-arch OCI image of real Debian programs for the tests
that need one (the sinkhole's curl run, tests/vm/sinkhole-curl.sh): the
named packages and their dependency closure, as apt resolves it for each
arch, unpacked into one layer.  No container engine, no chroot, no
maintainer script runs: the packages' files are the image, so binaries of
the foreign arch never execute on the host.

    debian-image.py --package curl [--package …] --entrypoint /usr/bin/curl
                    [--cmd JSON] [--arch amd64 --arch arm64]
                    --layout DIR --archive FILE [--work DIR]

writes DIR (an OCI image layout, `oci:DIR`, tag latest: an image index of
one manifest per arch, as images/sample/build-sample.c writes them) and
FILE (the same files as an oci-archive).  Each arch's packages come from
`apt-get install --download-only` against an empty dpkg status, with that
arch as apt's only one, so the closure is the packages' own and every .deb
is checked by apt against the archive's signed index.  The versions are
the archive's current ones (not pinned: a test image, not a sample), and
the list of name, version, arch and SHA-256 is the image's
/usr/share/airlock/packages and goes to stdout.

Documentation, manuals and translations are left out, as in Debian's slim
images (the copyright files stay).  Besides the packages' files:
/etc/passwd and /etc/group (root, nobody), /etc/nsswitch.conf (hosts:
files dns), /root and /tmp.  The dynamic loader
finds the libraries without an ld.so.cache (Debian's multiarch directories
are its defaults), and the supervisor writes /etc/hosts and resolv.conf.
Deterministic for the same .debs: entries sorted, owners 0, gzip mtime 0.
Uses the standard library, apt-get and dpkg-deb."""

import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

PLATFORMS = {
    "amd64": {"architecture": "amd64", "os": "linux"},
    "arm64": {"architecture": "arm64", "os": "linux", "variant": "v8"},
}
MT_INDEX = "application/vnd.oci.image.index.v1+json"
MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
CREATED = "1970-01-01T00:00:00Z"
PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

EXTRA_FILES = {
    "etc/passwd": b"root:x:0:0:root:/root:/bin/sh\n"
                  b"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    "etc/group": b"root:x:0:\nnogroup:x:65534:\n",
    "etc/nsswitch.conf": b"passwd: files\ngroup: files\nhosts: files dns\n",
}
EXTRA_DIRS = {"root": 0o700, "tmp": 0o1777, "etc": 0o755}


def download(packages, arch, dest):
    """The .debs of @packages and their closure for @arch, into @dest."""
    os.makedirs(os.path.join(dest, "partial"), exist_ok=True)
    status = os.path.join(dest, "status")
    open(status, "w").close()
    # An empty status: apt resolves as for an empty root, so the closure is
    # whole.  The arch as apt's only one: no dependency resolves to the
    # host's.  No lock: nothing here touches the host's dpkg state.
    subprocess.run(["apt-get", "-q", "-y", "--download-only", "--no-install-recommends",
                    "-o", "APT::Architecture=" + arch, "-o", "APT::Architectures::=" + arch,
                    "-o", "Dir::State::status=" + status, "-o", "Dir::Cache::archives=" + dest,
                    "-o", "Debug::NoLocking=1", "install"] + packages,
                   check=True, stdout=sys.stderr)
    return sorted(os.path.join(dest, f) for f in os.listdir(dest) if f.endswith(".deb"))


def deb_field(deb, field):
    return subprocess.run(["dpkg-deb", "-f", deb, field], check=True, capture_output=True,
                          text=True).stdout.strip()


def normalize(name):
    """A .deb's member name ("./usr/bin/curl") as a layer's ("usr/bin/curl")."""
    if name.startswith("./"):
        name = name[2:]
    return name.lstrip("/").rstrip("/") if name != "." else ""


# What Debian's slim images leave out (dpkg path-exclude): documentation,
# manuals and translations, nothing a program runs with.  The copyright
# files stay, as there.
SLIM_EXCLUDE = ("usr/share/doc/", "usr/share/man/", "usr/share/info/", "usr/share/locale/",
                "usr/share/lintian/")


def excluded(name):
    if name.startswith("usr/share/doc/") and name.endswith("/copyright"):
        return False
    return any((name + "/").startswith(prefix) and name + "/" != prefix for prefix in SLIM_EXCLUDE)


def unpack(debs):
    """path → (TarInfo, bytes or None) over every .deb, in order."""
    entries = {}
    for deb in debs:
        data = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], check=True,
                              capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for info in tar:
                name = normalize(info.name)
                if not name or excluded(name):
                    continue
                if info.isdir() and name in entries:
                    continue
                info.name = name
                if info.islnk():
                    info.linkname = normalize(info.linkname)
                payload = tar.extractfile(info).read() if info.isreg() else None
                entries[name] = (info, payload)
    return entries


def add_parents(entries, path):
    parts = path.split("/")
    for i in range(1, len(parts)):
        d = "/".join(parts[:i])
        if d not in entries:
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            entries[d] = (info, None)


def make_layer(entries):
    """The layer as an uncompressed tar (for its diff_id) and gzipped."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(entries):
            info, payload = entries[name]
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.pax_headers = {}
            tar.addfile(info, io.BytesIO(payload) if payload is not None else None)
    raw = out.getvalue()
    return raw, gzip.compress(raw, mtime=0)


def write_blob(layout, data):
    digest = hashlib.sha256(data).hexdigest()
    path = os.path.join(layout, "blobs", "sha256", digest)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + digest, "size": len(data)}


def write_json(layout, obj):
    return write_blob(layout, json.dumps(obj, separators=(",", ":")).encode())


def build_arch(layout, arch, packages, work, entrypoint, cmd):
    debs = download(packages, arch, os.path.join(work, arch))
    listing = []
    for deb in debs:
        with open(deb, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        listing.append("%s %s %s %s" % (deb_field(deb, "Package"), deb_field(deb, "Version"),
                                        deb_field(deb, "Architecture"), sha))
    entries = unpack(debs)
    files = dict(EXTRA_FILES)
    files["usr/share/airlock/packages"] = ("\n".join(listing) + "\n").encode()
    for path, data in files.items():
        add_parents(entries, path)
        info = tarfile.TarInfo(path)
        info.size = len(data)
        info.mode = 0o644
        entries[path] = (info, data)
    for path, mode in EXTRA_DIRS.items():
        info = tarfile.TarInfo(path)
        info.type = tarfile.DIRTYPE
        info.mode = mode
        entries[path] = (info, None)
    raw, gz = make_layer(entries)
    layer = dict(mediaType=MT_LAYER, **write_blob(layout, gz))
    config = {
        "created": CREATED,
        "architecture": arch,
        "os": "linux",
        "config": {"Env": [PATH], "Entrypoint": entrypoint, "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(raw).hexdigest()]},
        "history": [{"created": CREATED,
                     "created_by": "airlock tests/vm/debian-image.py: " + ", ".join(packages)
                                   + " and their dependencies from Debian (" + arch + ")"}],
    }
    if cmd is not None:
        config["config"]["Cmd"] = cmd
    if arch == "arm64":
        config["variant"] = "v8"
    manifest = {
        "schemaVersion": 2,
        "mediaType": MT_MANIFEST,
        "config": dict(mediaType=MT_CONFIG, **write_json(layout, config)),
        "layers": [layer],
    }
    print("%s: %d packages, layer %s (%d bytes)"
          % (arch, len(debs), layer["digest"], layer["size"]))
    for line in listing:
        print("  " + line)
    return dict(mediaType=MT_MANIFEST, **write_json(layout, manifest), platform=PLATFORMS[arch])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--package", action="append", required=True)
    ap.add_argument("--entrypoint", required=True)
    ap.add_argument("--cmd", help="the Cmd as a JSON array")
    ap.add_argument("--arch", action="append", choices=sorted(PLATFORMS))
    ap.add_argument("--layout", required=True)
    ap.add_argument("--archive", required=True)
    ap.add_argument("--work", help="where the .debs go (default: a temporary directory)")
    a = ap.parse_args()
    arches = a.arch or ["amd64", "arm64"]
    cmd = json.loads(a.cmd) if a.cmd else None

    work = a.work or tempfile.mkdtemp(prefix="debian-image-")
    # Written beside the destination, then moved: a layout is whole or absent.
    tmp_layout = a.layout + ".tmp"
    shutil.rmtree(tmp_layout, ignore_errors=True)
    os.makedirs(tmp_layout)
    try:
        manifests = [build_arch(tmp_layout, arch, a.package, work, [a.entrypoint], cmd)
                     for arch in arches]
        index = {"schemaVersion": 2, "mediaType": MT_INDEX, "manifests": manifests}
        top = {"schemaVersion": 2, "mediaType": MT_INDEX,
               "manifests": [dict(mediaType=MT_INDEX, **write_json(tmp_layout, index),
                                  annotations={"org.opencontainers.image.ref.name": "latest"})]}
        with open(os.path.join(tmp_layout, "index.json"), "w") as f:
            json.dump(top, f, separators=(",", ":"))
        with open(os.path.join(tmp_layout, "oci-layout"), "w") as f:
            json.dump({"imageLayoutVersion": "1.0.0"}, f, separators=(",", ":"))
        with tarfile.open(a.archive + ".tmp", "w", format=tarfile.PAX_FORMAT) as tar:
            for root, dirs, files in os.walk(tmp_layout):
                dirs.sort()
                for name in sorted(files):
                    path = os.path.join(root, name)
                    info = tar.gettarinfo(path, os.path.relpath(path, tmp_layout))
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    info.mtime = 0
                    with open(path, "rb") as f:
                        tar.addfile(info, f)
        shutil.rmtree(a.layout, ignore_errors=True)
        os.rename(tmp_layout, a.layout)
        os.rename(a.archive + ".tmp", a.archive)
    finally:
        shutil.rmtree(tmp_layout, ignore_errors=True)
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
