#!/usr/bin/env python3
"""Checks a bundle's sinkhole records (issue 20) for the VM tests
tests/vm/sinkhole*.sh: the one place that knows where the records are in a
bundle and what their members are called, so the tests follow the
sinkhole's format by changing this file alone.

    sinkhole-records.py BUNDLE dns NAME udp|tcp A|AAAA
        a DNS record: the question NAME over that transport and type,
        answered with at least one address, every one from the sinkhole's
        ranges (198.18.0.0/15 for A, 2001:db8:a1::/64 for AAAA);
    sinkhole-records.py BUNDLE tcp|udp NAME PORT [FIELD=VALUE|FIELD^=PREFIX]...
        a connection (or datagram) to PORT whose address the sinkhole handed
        out for NAME: the record names NAME, and a DNS record of the same
        bundle answered NAME with that address; then each FIELD of it:
        protocol, family, http.method, http.path, http.host,
        http.user_agent, tls.sni, tls.alpn (comma-joined), tls.version,
        ssh.banner, client_bytes (as hex).

Exit 0 with the matching record on stdout; 1 with the reason and every
record of the bundle on stdout (for the TAP log); 2 when the bundle has no
record file.  Names compare without the final dot and ASCII case."""

import base64
import ipaddress
import json
import os
import sys

# The record file of a bundle (docs/bundle.md): the sinkhole's records as
# its process wrote them.
RECORD_FILES = ("network.jsonl",)
# The ranges lib/sinkhole/sinkhole.h hands names out from.
RANGES = {
    "A": ipaddress.ip_network("198.18.0.0/15"),
    "AAAA": ipaddress.ip_network("2001:db8:a1::/64"),
}
QTYPES = {"A": 1, "AAAA": 28}


def load(bundle):
    for name in RECORD_FILES:
        path = os.path.join(bundle, name)
        if os.path.exists(path):
            with open(path) as f:
                lines = [json.loads(line) for line in f if line.strip()]
            # The last line, {"end":true,…}, closes the file; it is no record.
            return [r for r in lines if "kind" in r], path
    print("no sinkhole record file in %s (looked for %s)" % (bundle, ", ".join(RECORD_FILES)))
    sys.exit(2)


def same_name(a, b):
    return a is not None and b is not None and a.rstrip(".").lower() == b.rstrip(".").lower()


def field(record, path):
    """A record's member by dotted path, as text (lists comma-joined,
    bytes as hex); None when absent."""
    if path == "client_bytes":
        raw = record.get("client_bytes")
        return base64.b64decode(raw).hex() if raw is not None else None
    value = record
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def matches(record, want):
    for spec in want:
        if "^=" in spec:
            key, prefix = spec.split("^=", 1)
            got = field(record, key)
            if got is None or not got.startswith(prefix):
                return False
        else:
            key, value = spec.split("=", 1)
            if field(record, key) != value:
                return False
    return True


def dns_records(records, name):
    return [r for r in records if r.get("kind") == "dns" and same_name(r.get("question"), name)]


def check_dns(records, name, transport, qtype):
    for r in dns_records(records, name):
        if r.get("transport") != transport or r.get("qtype") != QTYPES[qtype]:
            continue
        answers = r.get("answers") or []
        if answers and all(ipaddress.ip_address(a) in RANGES[qtype] for a in answers):
            return r, None
        return None, "%s %s over %s answered %s, not from %s" % (name, qtype, transport, answers,
                                                                  RANGES[qtype])
    return None, "no %s question for %s over %s" % (qtype, name, transport)


def check_flow(records, kind, name, port, want):
    handed_out = {ipaddress.ip_address(a) for r in dns_records(records, name)
                  for a in (r.get("answers") or [])}
    if not handed_out:
        return None, "the sinkhole handed out no address for %s" % name
    candidates = [r for r in records if r.get("kind") == kind and r.get("port") == port]
    for r in candidates:
        if not same_name(r.get("name"), name):
            continue
        if ipaddress.ip_address(r.get("address")) not in handed_out:
            return None, ("%s port %d names %s but went to %s, which it was not handed out for (%s)"
                          % (kind, port, name, r.get("address"),
                             ", ".join(sorted(map(str, handed_out)))))
        if matches(r, want):
            return r, None
    return None, "no %s record to port %d for %s with %s (%d to that port)" % (
        kind, port, name, " ".join(want) or "any fields", len(candidates))


def main():
    if len(sys.argv) < 5 or (sys.argv[2] == "dns" and len(sys.argv) != 6):
        print(__doc__)
        return 2
    bundle, kind, name = sys.argv[1], sys.argv[2], sys.argv[3]
    records, path = load(bundle)
    if kind == "dns":
        record, why = check_dns(records, name, sys.argv[4], sys.argv[5])
    elif kind in ("tcp", "udp"):
        record, why = check_flow(records, kind, name, int(sys.argv[4]), sys.argv[5:])
    else:
        print("unknown check '%s'" % kind)
        return 2
    if record is not None:
        print(json.dumps(record, sort_keys=True))
        return 0
    print("%s: %s" % (path, why))
    for r in records:
        print("  " + json.dumps(r, sort_keys=True))
    return 1


if __name__ == "__main__":
    sys.exit(main())
