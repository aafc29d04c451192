#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A service for the end-to-end shape tests: a ThreadingHTTPServer whose
handler threads all call one backend through ONE shared requests.Session,
so a keep-alive connection one thread opened (urllib3's pool, which checks
a pooled connection with a zero-timeout poll before reuse) carries later
calls of other threads. Each GET <path> becomes GET <path> on the backend;
the answer is the backend's status and body, or 502 when the call itself
failed.

  session_service.py --backend PORT --ready-file FILE [--port PORT]

Named by CLAIMD_SERVICE like every test service; the ready file gets the
listening port (the kernel's choice with --port 0), written atomically.
"""
import argparse
import http.server
import sys

import requests
import requests.adapters

from peer_http import ThreadedServer, reply, serve


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--backend", type=int, required=True, help="the backend's port")
    ap.add_argument("--ready-file", required=True)
    args = ap.parse_args()

    base = "http://127.0.0.1:%d" % args.backend
    session = requests.Session()
    # Fewer pooled connections than handler threads: they are taken in turn.
    session.mount("http://", requests.adapters.HTTPAdapter(pool_connections=1, pool_maxsize=4))

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            try:
                r = session.get(base + self.path, timeout=10)
                status, body = r.status_code, r.content
            except requests.RequestException:
                status, body = 502, b"backend call failed\n"
            reply(self, status, body)

    serve(ThreadedServer(("127.0.0.1", args.port), Handler), args.ready_file)

if __name__ == "__main__":
    sys.exit(main())
