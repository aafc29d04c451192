#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A service for end-to-end tests: a ThreadingHTTPServer that, for each
request, optionally calls the next service down the chain and fails when
told to.

Request path: /r/<id>. The service fails with 503 (--fail-status S: with S)
when id is in its failure set (--fail-mod M --fail-rem R: id % M == R),
before calling its downstream, or after it with --fail-after. A downstream
call failed with no answer or one from 500 up (--down-fail-from F: from F
up, as under claimd --fail-status F). When it failed, the service answers 502 for
a fraction --propagate of those failures (deterministically: the first
P*10 of every 10), else 200: --propagate 0 makes the edge fail-open. With
--keepalive it speaks HTTP/1.1 with persistent connections, up and down (one
downstream connection per handler thread); with --down-fresh too, up only
(a new downstream connection for each call, as a client with no pool). With --tls CERT,KEY it serves
HTTPS; with --downstream-tls CAFILE it calls its downstream over HTTPS.
With --handoff its handler threads hand each downstream call to a pool of
worker threads and wait for it (a ThreadPoolExecutor, as services fan
out). With --fastopen it takes TCP Fast Open on its listener, and calls its
downstream as an event loop would with Fast Open: a non-blocking socket
whose first send carries the request in the SYN and returns before the
connection is made (one connection per call; the namespace's sysctl
decides whether the data really rides in the SYN). With --spawn each
downstream call is made by a command the handler runs (curl in a child
process, as handlers shell out to a CLI). With --slow-ms N its failure set
is slowness instead: those requests take N ms and succeed. With
--down-timeout-ms T its downstream calls time out after T ms, and a call
that failed is closed only once the handler has answered (as code that
closes in a finally block, or leaves it to the garbage collector).

With --kv-store it serves no HTTP but a key-value line protocol, as a
database or cache would ("GET <key>\n" answered "OK <value>\n", or "ERR\n"
for the ids of its failure set). With --kv HOST:PORT the HTTP service asks
that store for key k<id>, after its downstream call, on one connection
its handler threads share in turn, opened when it starts (as a database's
pool is), and fails (502) when it answers ERR. With --probe-socket PATH each
request first connects to that socket file and ignores a failure, as glibc
asks nscd's socket before it resolves a name.
"""
import argparse
import concurrent.futures
import http.client
import http.server
import select
import socket
import socketserver
import ssl
import subprocess
import sys
import threading
import time

from peer_http import ThreadedServer, reply, write_ready


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--bind", default="127.0.0.1",
                    help="the address to listen on (IPv6: ::1, or :: for both families; "
                         "unix:PATH: a socket file)")
    ap.add_argument("--downstream", help="host:port of the next service, or unix:PATH")
    ap.add_argument("--fail-mod", type=int, default=0)
    ap.add_argument("--fail-rem", type=int, default=0)
    ap.add_argument("--fail-after", action="store_true")
    ap.add_argument("--fail-status", type=int, default=503)
    ap.add_argument("--down-fail-from", type=int, default=500)
    ap.add_argument("--propagate", type=float, default=1.0)
    ap.add_argument("--keepalive", action="store_true")
    ap.add_argument("--down-fresh", action="store_true")
    ap.add_argument("--delay-ms", type=int, default=0, help="think this long per request")
    ap.add_argument("--ready-file", help="written once listening")
    ap.add_argument("--tls", help="CERT,KEY: serve HTTPS")
    ap.add_argument("--downstream-tls", help="CA file: call the downstream over HTTPS")
    ap.add_argument("--fastopen", action="store_true", help="TCP Fast Open, in and out")
    ap.add_argument("--handoff", action="store_true",
                    help="downstream calls made by a pool of worker threads")
    ap.add_argument("--slow-ms", type=int, default=0,
                    help="its failure set answers 200 after this long instead")
    ap.add_argument("--down-timeout-ms", type=int, default=0,
                    help="downstream calls time out; a failed one is closed after the answer")
    ap.add_argument("--kv-store", action="store_true",
                    help="serve a key-value line protocol, not HTTP")
    ap.add_argument("--kv", help="host:port (or unix:PATH) of a key-value store asked first")
    ap.add_argument("--probe-socket",
                    help="connect to this socket file first, a failure ignored (as glibc asks "
                         "nscd's before it resolves a name)")
    ap.add_argument("--spawn", action="store_true",
                    help="downstream calls made by curl, run in a child process")
    args = ap.parse_args()
    if args.kv_store:
        return serve_kv_store(args)

    local = threading.local()
    propagated = {"n": 0}
    plock = threading.Lock()

    def propagate():
        """Whether this downstream failure fails the request too."""
        with plock:
            i = propagated["n"]
            propagated["n"] += 1
        return i % 10 < round(args.propagate * 10)

    client_ctx = None
    if args.downstream_tls:
        client_ctx = ssl.create_default_context(cafile=args.downstream_tls)

    timeout = args.down_timeout_ms / 1000.0 if args.down_timeout_ms else None

    class UnixHTTPConnection(http.client.HTTPConnection):
        """HTTP over a socket file (a downstream given as unix:PATH)."""

        def __init__(self, path, timeout=None):
            super().__init__("localhost", timeout=timeout)
            self.unix_path = path

        def connect(self):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            if self.timeout is not None:
                s.settimeout(self.timeout)
            s.connect(self.unix_path)
            self.sock = s

    def new_conn(host, port):
        if host == "unix":
            return UnixHTTPConnection(port, timeout=timeout)
        if client_ctx:
            return http.client.HTTPSConnection(host.strip("[]"), port, context=client_ctx,
                                               timeout=timeout)
        return http.client.HTTPConnection(host.strip("[]"), port, timeout=timeout)

    def downstream_conn():
        host, port = args.downstream.split(":", 1) if args.downstream.startswith("unix:") \
            else args.downstream.rsplit(":", 1)
        port = port if host == "unix" else int(port)
        if args.keepalive and not args.down_fresh:
            c = getattr(local, "conn", None)
            if c is None:
                c = new_conn(host, port)
                local.conn = c
            return c
        return new_conn(host, port)

    def fastopen_get(path):
        """GET path from the downstream, the request in the SYN; its status, 0 if none."""
        host, port = args.downstream.rsplit(":", 1)
        host = host.strip("[]")
        req = ("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path, host)).encode()
        s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        data = b""
        try:
            s.setblocking(False)
            if s.sendto(req, socket.MSG_FASTOPEN, (host, int(port))) != len(req):
                return 0
            while select.select([s], [], [], 10)[0]:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:
            return 0
        finally:
            s.close()
        try:
            return int(data.split(b" ", 2)[1])
        except (IndexError, ValueError):
            return 0

    def plain_get(path):
        """GET path from the downstream (with --keepalive, on the calling thread's
        connection, dropped when it fails); its status, 0 if none."""
        c = downstream_conn()
        failed = False
        try:
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            status = r.status
        except (OSError, http.client.HTTPException):
            status = 0
            local.conn = None
            failed = True
        if failed and args.down_timeout_ms:
            local.close_after_reply = c
        elif failed or not args.keepalive or args.down_fresh:
            c.close()
        return status

    def spawn_get(path):
        """GET path from the downstream through curl, a process of its own; its status, 0 if none."""
        url = "http://%s%s" % (args.downstream, path)
        try:
            out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                  "--max-time", "10", url],
                                 capture_output=True, text=True, timeout=15).stdout
            return int(out or 0)
        except (OSError, ValueError, subprocess.SubprocessError):
            return 0

    kv_lock = threading.Lock()
    kv = {}

    def kv_connect():
        if args.kv.startswith("unix:"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(args.kv[5:])
        else:
            host, port = args.kv.rsplit(":", 1)
            sock = socket.create_connection((host, int(port)))
        kv["conn"] = (sock, sock.makefile("rb"))

    def kv_get(key):
        """The store's answer's first word for key ("OK", "ERR"), on the shared connection."""
        with kv_lock:
            try:
                if "conn" not in kv:
                    kv_connect()
                kv["conn"][0].sendall(("GET %s\n" % key).encode())
                return (kv["conn"][1].readline().split() or [b""])[0].decode()
            except OSError:
                kv.pop("conn", None)
                return ""

    if args.kv:
        kv_connect()

    workers = concurrent.futures.ThreadPoolExecutor(4) if args.handoff else None

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if args.keepalive else "HTTP/1.0"

        def log_message(self, *a):
            pass

        def reply(self, status, body):
            reply(self, status, body)
            self.wfile.flush()
            given_up = getattr(local, "close_after_reply", None)
            if given_up:
                local.close_after_reply = None
                given_up.close()

        def do_GET(self):
            try:
                rid = int(self.path.rsplit("/", 1)[1])
            except (ValueError, IndexError):
                rid = -1
            if args.delay_ms:
                time.sleep(args.delay_ms / 1000.0)
            if args.probe_socket:
                probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    probe.connect(args.probe_socket)
                except OSError:
                    pass
                probe.close()
            own = args.fail_mod and rid % args.fail_mod == args.fail_rem
            if own and args.slow_ms:
                time.sleep(args.slow_ms / 1000.0)
                own = False
            if own and not args.fail_after:
                self.reply(args.fail_status, "own failure\n")
                return
            if args.downstream:
                call = fastopen_get if args.fastopen else spawn_get if args.spawn else plain_get
                if args.handoff:
                    status = workers.submit(call, self.path).result()
                else:
                    status = call(self.path)
                if (status == 0 or status >= args.down_fail_from) and propagate():
                    self.reply(502, "downstream failed\n")
                    return
            if args.kv and kv_get("k%d" % rid) != "OK":
                self.reply(502, "store failed\n")
                return
            if own:
                self.reply(args.fail_status, "own failure\n")
                return
            # A body that looks like a status line must not confuse anybody.
            self.reply(200, "HTTP/1.1 200 OK\r\nok\n")

    class Server(ThreadedServer):
        def server_bind(self):
            if args.fastopen:
                self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
            super().server_bind()

    class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True
        request_queue_size = 128

    if args.bind.startswith("unix:"):
        srv = UnixServer(args.bind[5:], Handler)
        srv.server_address = (args.bind, 0)
    elif ":" in args.bind:
        Server.address_family = socket.AF_INET6
        srv = Server((args.bind, args.port), Handler)
    else:
        srv = Server((args.bind, args.port), Handler)
    if args.tls:
        cert, key = args.tls.split(",", 1)
        server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_ctx.load_cert_chain(cert, key)
        srv.socket = server_ctx.wrap_socket(srv.socket, server_side=True)
    write_ready(args.ready_file, srv.server_address[1])
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


def serve_kv_store(args):
    """The key-value line protocol (--kv-store), its failure set answered ERR."""

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            for line in self.rfile:
                try:
                    rid = int(line.split()[-1][1:])
                except (IndexError, ValueError):
                    rid = -1
                failed = args.fail_mod and rid % args.fail_mod == args.fail_rem
                self.wfile.write(b"ERR\n" if failed else b"OK v%d\n" % rid)

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True

    if args.bind.startswith("unix:"):
        srv = UnixServer(args.bind[5:], Handler)
        write_ready(args.ready_file, 0)
    else:
        srv = Server((args.bind, args.port), Handler)
        write_ready(args.ready_file, srv.server_address[1])
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
