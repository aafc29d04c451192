#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A Flask service that writes x-error-claim with libclaim's WSGI middleware
(python/libclaim), served by werkzeug's threaded server (a thread per
request, as claimd follows it). GET /r/<id>: fails on its own (500) for ids
with id % --fail-mod == --fail-rem, before calling; else calls its backend
(requests, a session its threads share) and passes a failed answer up as
502. libclaim comes from $PYTHONPATH, its C library from $CLAIMD_LIBCLAIM,
claimd's verdicts from $CLAIMD_VERDICTS.

With --handoff its call is made by a pool of worker threads (what claimd
cannot tie: its passed-up failures are unknown, and carry no header).

With --retry (a hop of a storm) it fails nothing on its own and calls with
up to one retry: "claim" through libclaim.retry.ClaimRetry (an unclaimed
failure is not retried), "naive" through urllib3's Retry, whatever the
failure says. GET /stats answers how many /r/ requests it served.
"""
import argparse
import concurrent.futures
import itertools
import sys

import flask
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry
from werkzeug.serving import make_server

from libclaim.retry import ClaimRetry
from libclaim.wsgi import ClaimMiddleware
from peer_http import write_ready


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", type=int, required=True, help="the backend's port")
    ap.add_argument("--fail-mod", type=int, default=5)
    ap.add_argument("--fail-rem", type=int, default=1)
    ap.add_argument("--ready-file")
    ap.add_argument("--retry", choices=["claim", "naive"])
    ap.add_argument("--handoff", action="store_true",
                    help="call the backend from a pool of worker threads")
    args = ap.parse_args()

    app = flask.Flask("claimed-flask")
    session = requests.Session()
    pool = concurrent.futures.ThreadPoolExecutor(4) if args.handoff else None
    if args.retry:
        policy = ClaimRetry if args.retry == "claim" else Retry
        session.mount("http://", HTTPAdapter(max_retries=policy(
            total=1, backoff_factor=0, status_forcelist=range(500, 600),
            raise_on_status=False)))
    served = itertools.count()
    counted = [0]

    @app.route("/stats")
    def stats():
        return {"requests": counted[0]}

    @app.route("/r/<int:rid>")
    def r(rid):
        counted[0] = next(served) + 1
        if not args.retry and rid % args.fail_mod == args.fail_rem:
            return "own failure\n", 500
        def call():
            try:
                return session.get("http://127.0.0.1:%d/r/%d" % (args.backend, rid),
                                   timeout=10).status_code
            except requests.RequestException:
                return 0
        status = pool.submit(call).result() if pool else call()
        if status == 0 or status >= 500:
            return "backend failed\n", 502
        return "ok\n"

    app.wsgi_app = ClaimMiddleware(app.wsgi_app)
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    write_ready(args.ready_file, srv.server_port)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
