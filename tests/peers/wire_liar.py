#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A dependency that lies, on a socket file, for the hardening tests: it
answers each connection's first message as --scenario says, then waits for
the client to close (or ends the connection itself where the scenario does).

  redis_ok          +PONG
  redis_junk        bytes that are no RESP
  redis_bulk_2e40   a bulk string of 2^40 bytes announced, 1000 sent, closed
  redis_reset       half a bulk string, then a reset (RST)
  pg_ok             AuthenticationOk and ReadyForQuery to a startup message
  pg_lie            an authentication message whose length (2) is less than
                    its own length field
  mysql_ok          a MariaDB greeting; OK to the login
  mysql_lie         a greeting; to the login, a packet whose header announces
                    16 MiB - 1 bytes (continued), 10 sent, closed
"""
import argparse
import os
import socket
import socketserver
import struct
import sys
import time

from peer_http import write_ready

GREETING_BODY = (b"\x0a" + b"5.5.5-10.11.6-MariaDB\x00" + struct.pack("<I", 7) + b"abcdefgh\x00"
                 + struct.pack("<H", 0xf7fe) + b"\x2d" + struct.pack("<H", 2)
                 + struct.pack("<H", 0x81bf) + b"\x15" + b"\x00" * 6 + struct.pack("<I", 0x1d)
                 + b"ijklmnopqrst\x00" + b"mysql_native_password\x00")


def packet(seq, body):
    return struct.pack("<I", len(body))[:3] + bytes([seq]) + body


def reset(sock):
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--ready-file")
    args = ap.parse_args()
    sc = args.scenario

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            s = self.request
            if sc.startswith("mysql"):
                s.sendall(packet(0, GREETING_BODY))
            if not s.recv(65536):
                return
            if sc == "redis_ok":
                s.sendall(b"+PONG\r\n")
            elif sc == "redis_junk":
                s.sendall(b"\x00\xff\xfeJUNK\x01\x02\r\n")
            elif sc == "redis_bulk_2e40":
                s.sendall(b"$1099511627776\r\n" + b"x" * 1000)
                time.sleep(0.2)
                return
            elif sc == "redis_reset":
                s.sendall(b"$100\r\nabc")
                time.sleep(0.2)
                reset(s)
                return
            elif sc == "pg_ok":
                s.sendall(b"R" + struct.pack(">II", 8, 0) + b"Z" + struct.pack(">I", 5) + b"I")
            elif sc == "pg_lie":
                s.sendall(b"R" + struct.pack(">I", 2) + b"\x00\x00\x00\x00")
            elif sc == "mysql_ok":
                s.sendall(packet(2, b"\x00\x00\x00\x02\x00\x00\x00"))
            elif sc == "mysql_lie":
                s.sendall(b"\xff\xff\xff\x02" + b"\x00" * 10)
                time.sleep(0.2)
                return
            while s.recv(65536):
                pass

    class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True

    if os.path.exists(args.listen):
        os.unlink(args.listen)
    srv = Server(args.listen, Handler)
    os.chmod(args.listen, 0o666)
    write_ready(args.ready_file, 0)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
