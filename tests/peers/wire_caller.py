#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A service for the hardening tests that speaks a database's or a cache's
first message itself, byte for byte, over a socket file (--dep PATH): for
each request /<proto>/<id> it opens a connection there and sends a Redis
PING, a PostgreSQL startup message, or (after the greeting) a MySQL login;
it reads the answer until the dependency closes, resets, or is quiet for
a second, closes, and answers 200 when the answer was the well-formed one,
else 503: every failure of this service is its dependency's.
"""
import argparse
import http.server
import socket
import struct
import sys

from peer_http import ThreadedServer, reply, serve

PING = b"*1\r\n$4\r\nPING\r\n"
PG_STARTUP_BODY = struct.pack(">I", 196608) + b"user\x00postgres\x00\x00"
PG_STARTUP = struct.pack(">I", len(PG_STARTUP_BODY) + 4) + PG_STARTUP_BODY
# HandshakeResponse41: CLIENT_PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH, user root, no password.
MY_LOGIN_BODY = (struct.pack("<IIB", 0x00088200, 1 << 24, 0x2d) + b"\x00" * 23 + b"root\x00"
                 + b"\x00" + b"mysql_native_password\x00")
MY_LOGIN = struct.pack("<I", len(MY_LOGIN_BODY))[:3] + b"\x01" + MY_LOGIN_BODY


def read_some(s, until=None):
    """What arrives until the peer ends, or until the bytes end with until, or 1 s of quiet."""
    got = b""
    s.settimeout(1.0)
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
            if until is not None and until(got):
                break
    except (socket.timeout, ConnectionError):
        pass
    return got


def call(path, proto):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        if proto == "redis":
            s.sendall(PING)
            return read_some(s, lambda g: g.endswith(b"\r\n")) == b"+PONG\r\n"
        if proto == "pg":
            s.sendall(PG_STARTUP)
            return read_some(s, lambda g: g.endswith(b"Z\x00\x00\x00\x05I")).endswith(
                b"Z\x00\x00\x00\x05I")
        greeting = read_some(s, lambda g: len(g) >= 4 and len(g) >= 4 + int.from_bytes(g[:3], "little"))
        if len(greeting) < 5 or greeting[4] != 10:
            return False
        s.sendall(MY_LOGIN)
        ok = read_some(s, lambda g: len(g) >= 11)
        return len(ok) == 11 and ok[4] == 0
    except OSError:
        return False
    finally:
        s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dep", required=True, help="the dependency's socket file")
    ap.add_argument("--ready-file")
    args = ap.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *a):
            pass

        def do_GET(self):
            proto = self.path.split("/")[1]
            if call(args.dep, proto):
                reply(self, 200, "ok\n")
            else:
                reply(self, 503, "dependency failed\n")

    serve(ThreadedServer(("127.0.0.1", 0), Handler), args.ready_file)


if __name__ == "__main__":
    sys.exit(main())
