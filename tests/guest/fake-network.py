#!/usr/bin/env python3
"""A stand-in for the network the net-* clients (net.c) and the rpc sample's
update check talk to, for tests/guest/net-clients.sh: run inside a network
namespace of the test's own that has only loopback, it answers on 127.0.0.1
and ::1 what the sinkhole will answer in the VM.

  udp/53, tcp/53  DNS: A → 127.0.0.1, AAAA → ::1 for every name
  tcp/80          an HTTP request head, answered 200 with a JSON body
                  ({"info":{"version":VERSION}}, as PyPI's JSON API)
  tcp/443         a real TLS server (Python's ssl, a throwaway certificate):
                  it answers a ClientHello it can parse with a ServerHello,
                  so a client's hand-built hello is proven well-formed; the
                  ALPN names and supported_versions offered are recorded
  tcp/22          an SSH identification line each way
  tcp/4444        any bytes, kept until the client goes quiet
  udp/9999        one datagram, answered "ack"

Each exchange is one JSON line in --records (what the client sent: names,
the request head, the SNI, bytes as hex).  It prints "ready" once every
listener is bound and runs until killed.  Loopback only: it never binds or
connects anything else.  Standard library only."""

import argparse
import json
import os
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading

VERSION = "9.9.9"
lock = threading.Lock()
records = None


def record(**fields):
    with lock:
        records.write(json.dumps(fields, sort_keys=True) + "\n")
        records.flush()


def parse_question(msg):
    """(name, qtype) of a DNS query, or None."""
    if len(msg) < 12 or struct.unpack(">H", msg[4:6])[0] != 1:
        return None
    pos, labels = 12, []
    while pos < len(msg) and msg[pos] != 0:
        n = msg[pos]
        labels.append(msg[pos + 1:pos + 1 + n].decode("ascii", "replace"))
        pos += 1 + n
    if pos + 5 > len(msg):
        return None
    qtype = struct.unpack(">H", msg[pos + 1:pos + 3])[0]
    return ".".join(labels) + ".", qtype, msg[12:pos + 5]


def dns_reply(msg):
    q = parse_question(msg)
    if not q:
        return None, None, None
    name, qtype, question = q
    if qtype == 1:
        rdata = socket.inet_pton(socket.AF_INET, "127.0.0.1")
    elif qtype == 28:
        rdata = socket.inet_pton(socket.AF_INET6, "::1")
    else:
        rdata = None
    header = msg[0:2] + struct.pack(">HHHHH", 0x8180, 1, 1 if rdata else 0, 0, 0)
    answer = b""
    if rdata:
        answer = struct.pack(">HHHIH", 0xc00c, qtype, 1, 60, len(rdata)) + rdata
    return header + question + answer, name, qtype


def serve_udp(family, addr, port, handler):
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.bind((addr, port))

    def loop():
        while True:
            data, peer = s.recvfrom(4096)
            reply = handler(data, port)
            if reply:
                s.sendto(reply, peer)
    threading.Thread(target=loop, daemon=True).start()


def serve_tcp(family, addr, port, handler):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(16)

    def loop():
        while True:
            conn, _ = s.accept()
            conn.settimeout(3)
            threading.Thread(target=guarded, args=(handler, conn, port), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()


def guarded(handler, conn, port):
    try:
        handler(conn, port)
    except (OSError, ssl.SSLError) as e:
        record(kind="error", port=port, error=str(e))
    finally:
        conn.close()


def udp_dns(data, port):
    reply, name, qtype = dns_reply(data)
    record(kind="dns", transport="udp", name=name, qtype=qtype)
    return reply


def udp_other(data, port):
    record(kind="udp", port=port, bytes=data.hex())
    return b"ack"


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def tcp_dns(conn, port):
    while True:
        prefix = recv_exact(conn, 2)
        if prefix is None:
            return
        msg = recv_exact(conn, struct.unpack(">H", prefix)[0])
        if msg is None:
            return
        reply, name, qtype = dns_reply(msg)
        record(kind="dns", transport="tcp", name=name, qtype=qtype)
        conn.sendall(struct.pack(">H", len(reply)) + reply)


def tcp_http(conn, port):
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 16384:
        chunk = conn.recv(4096)
        if not chunk:
            break
        head += chunk
    lines = head.split(b"\r\n")
    headers = {}
    for line in lines[1:]:
        if b":" in line:
            k, v = line.split(b":", 1)
            headers[k.strip().lower().decode()] = v.strip().decode("latin-1")
    record(kind="http", port=port, request_line=lines[0].decode("latin-1"),
           host=headers.get("host"), user_agent=headers.get("user-agent"))
    body = json.dumps({"info": {"name": "sample", "version": VERSION}}).encode()
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)


def tcp_raw(conn, port):
    data = b""
    conn.settimeout(0.5)
    try:
        while len(data) < 16384:
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    record(kind="raw", port=port, bytes=data.hex())


def tcp_ssh(conn, port):
    conn.sendall(b"SSH-2.0-fake_network\r\n")
    line = b""
    while not line.endswith(b"\n") and len(line) < 256:
        chunk = conn.recv(1)
        if not chunk:
            break
        line += chunk
    record(kind="ssh", port=port, banner=line.decode("latin-1").rstrip("\r\n"))


def client_hello_fields(data):
    """ALPN names and supported_versions of the ClientHello record at the
    start of @data (raises on anything malformed: the test then fails)."""
    assert data[0] == 0x16 and data[5] == 0x01, "not a ClientHello record"
    pos = 5 + 4 + 2 + 32                       # handshake header, version, random
    pos += 1 + data[pos]                       # session id
    pos += 2 + struct.unpack(">H", data[pos:pos + 2])[0]   # cipher suites
    pos += 1 + data[pos]                       # compression methods
    end = pos + 2 + struct.unpack(">H", data[pos:pos + 2])[0]
    pos += 2
    alpn, versions = [], []
    while pos < end:
        kind, length = struct.unpack(">HH", data[pos:pos + 4])
        body = data[pos + 4:pos + 4 + length]
        if kind == 0x0010:
            i = 2
            while i < len(body):
                alpn.append(body[i + 1:i + 1 + body[i]].decode())
                i += 1 + body[i]
        elif kind == 0x002b:
            versions = ["%04x" % struct.unpack(">H", body[i:i + 2])[0]
                        for i in range(1, len(body), 2)]
        pos += 4 + length
    return ",".join(alpn), ",".join(versions)


def make_tls_context():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    # The key lives as long as the context needs it on disk: loaded, gone.
    with tempfile.TemporaryDirectory() as workdir:
        cert, key = os.path.join(workdir, "cert.pem"), os.path.join(workdir, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec",
                        "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                        "-out", cert, "-days", "1", "-subj", "/CN=fake-network"],
                       check=True, capture_output=True)
        ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    seen = {}

    def sni(sock, name, _ctx):
        seen[id(sock)] = name
    ctx.sni_callback = sni
    return ctx, seen


def main():
    global records
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", required=True)
    a = ap.parse_args()
    records = open(a.records, "a")
    ctx, seen = make_tls_context()

    def tcp_tls(conn, port):
        # What the client offered, read before the TLS library takes it.
        alpn, versions = client_hello_fields(conn.recv(16384, socket.MSG_PEEK))
        tls = ctx.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
        try:
            tls.do_handshake()
        except (ssl.SSLError, OSError):
            pass   # the client closes after the ServerHello: expected
        record(kind="tls", port=port, sni=seen.pop(id(tls), None), alpn=alpn, versions=versions)

    for family, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        serve_udp(family, addr, 53, udp_dns)
        serve_udp(family, addr, 9999, udp_other)
        serve_tcp(family, addr, 53, tcp_dns)
        serve_tcp(family, addr, 80, tcp_http)
        serve_tcp(family, addr, 443, tcp_tls)
        serve_tcp(family, addr, 22, tcp_ssh)
        serve_tcp(family, addr, 4444, tcp_raw)
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    sys.exit(main())
