#!/usr/bin/env python3
"""Derives an OCI image layout from another, for the tests that need an
image the bundled samples are not: one more layer (files given on the
command line) on every platform, and config fields set (User, Entrypoint…).

    derive-image.py SRC-LAYOUT DST-LAYOUT [--file PATH=SIZE:CHAR]...
                    [--text PATH=CONTENT]... [--fifo PATH]... [--config KEY=JSON]...

--file writes SIZE bytes of lines made of CHAR (a large /etc/passwd);
--text writes CONTENT with '\\n' as newlines; --fifo makes PATH a FIFO
(what an image can put where the guest reads or writes a file).  Everything
else is copied; every digest and size is computed again, so intake verifies
the result as it would any image.  Uses only the standard library (no registry, no
container engine)."""

import argparse
import hashlib
import io
import json
import os
import shutil
import sys
import tarfile


def blob_path(layout, digest):
    algo, hexd = digest.split(":", 1)
    return os.path.join(layout, "blobs", algo, hexd)


def read_json(layout, digest):
    with open(blob_path(layout, digest), "rb") as f:
        return json.load(f)


def write_blob(layout, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    path = blob_path(layout, digest)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return digest, len(data)


def write_json(layout, obj):
    return write_blob(layout, json.dumps(obj, separators=(",", ":")).encode())


def make_layer(files):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        dirs = set()
        for path in sorted(files):
            parts = path.strip("/").split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    info = tarfile.TarInfo(d)
                    info.type = tarfile.DIRTYPE
                    info.mode = 0o755
                    tar.addfile(info)
            data = files[path]
            info = tarfile.TarInfo(path.strip("/"))
            info.mode = 0o644
            if data is None:
                info.type = tarfile.FIFOTYPE
                tar.addfile(info)
                continue
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def derive_manifest(layout, desc, layer, config_set):
    manifest = read_json(layout, desc["digest"])
    config = read_json(layout, manifest["config"]["digest"])
    layer_digest, layer_size = write_blob(layout, layer)
    config.setdefault("rootfs", {}).setdefault("diff_ids", []).append(layer_digest)
    for key, value in config_set.items():
        config.setdefault("config", {})[key] = value
    manifest["config"]["digest"], manifest["config"]["size"] = write_json(layout, config)
    manifest["layers"].append({
        "mediaType": "application/vnd.oci.image.layer.v1.tar",
        "digest": layer_digest,
        "size": layer_size,
    })
    new = dict(desc)
    new["digest"], new["size"] = write_json(layout, manifest)
    return new


def derive_index(layout, desc, layer, config_set):
    if desc["mediaType"] == "application/vnd.oci.image.manifest.v1+json":
        return derive_manifest(layout, desc, layer, config_set)
    index = read_json(layout, desc["digest"])
    index["manifests"] = [derive_index(layout, d, layer, config_set) for d in index["manifests"]]
    new = dict(desc)
    new["digest"], new["size"] = write_json(layout, index)
    return new


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--file", action="append", default=[])
    ap.add_argument("--text", action="append", default=[])
    ap.add_argument("--fifo", action="append", default=[])
    ap.add_argument("--config", action="append", default=[])
    a = ap.parse_args()

    files = {}
    for spec in a.file:
        path, rest = spec.split("=", 1)
        size, char = rest.split(":", 1)
        line = (char * 79 + "\n").encode()
        data = (line * (int(size) // len(line) + 1))[: int(size)]
        files[path] = data
    for spec in a.text:
        path, content = spec.split("=", 1)
        files[path] = content.replace("\\n", "\n").encode()
    for path in a.fifo:
        files[path] = None
    config_set = {}
    for spec in a.config:
        key, value = spec.split("=", 1)
        config_set[key] = json.loads(value)

    if os.path.exists(a.dst):
        shutil.rmtree(a.dst)
    shutil.copytree(a.src, a.dst)
    layer = make_layer(files)
    with open(os.path.join(a.dst, "index.json")) as f:
        top = json.load(f)
    top["manifests"] = [derive_index(a.dst, d, layer, config_set) for d in top["manifests"]]
    with open(os.path.join(a.dst, "index.json"), "w") as f:
        json.dump(top, f, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
