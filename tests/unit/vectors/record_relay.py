#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Records a real client-server conversation for the wire framers' tests.

A relay on loopback: it accepts one client at a time on --listen, connects
to the server (--to HOST:PORT or a unix socket path), forwards both ways,
and appends each chunk one recv() returned to the vector file, in order, as
a record: one direction byte ('C' the client wrote it, 'S' the client read
it), the chunk's length (4 bytes, little-endian), the chunk. Chunks are what
the kernel handed the relay at once, so the vectors keep the real splits of
the stream across reads. Each accepted connection writes the next file of
--out (name.0.bin, name.1.bin, ...), and the relay exits after --conns
connections.
"""
import argparse
import select
import socket
import struct


def connect(to):
    if to.startswith("/"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(to)
        return s
    host, port = to.rsplit(":", 1)
    return socket.create_connection((host, int(port)))


def relay(client, server, out):
    peers = {client: (server, b"C"), server: (client, b"S")}
    with open(out, "wb") as f:
        while True:
            ready, _, _ = select.select(list(peers), [], [], 30)
            if not ready:
                return
            for s in ready:
                try:
                    data = s.recv(65536)
                except ConnectionResetError:
                    return
                if not data:
                    return
                other, tag = peers[s]
                f.write(tag + struct.pack("<I", len(data)) + data)
                f.flush()
                other.sendall(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--to", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--conns", type=int, default=1)
    a = ap.parse_args()
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", a.listen))
    ls.listen(1)
    for i in range(a.conns):
        c, _ = ls.accept()
        s = connect(a.to)
        relay(c, s, "%s.%d.bin" % (a.out, i))
        c.close()
        s.close()


if __name__ == "__main__":
    main()
