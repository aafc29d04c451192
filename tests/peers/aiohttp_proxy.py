#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""An asyncio service (aiohttp) on one event loop: each request GET /r/<id>
is forwarded to the backend through one ClientSession its handlers share
(a pool of keep-alive connections), forwarding no request id; a failed
answer (500 up, or none) is passed up as 502. With --forward-traceparent it
passes the request's traceparent on to its call, as an OpenTelemetry-
instrumented service's client does (trace context propagation). With
--libclaim it uses
libclaim's claim_middleware (python/libclaim/aio.py): its loop followed
request by request, x-error-claim on its failed answers."""
import argparse
import asyncio
import sys

import aiohttp
from aiohttp import web

from peer_http import write_ready


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", type=int, required=True)
    ap.add_argument("--ready-file")
    ap.add_argument("--libclaim", action="store_true")
    ap.add_argument("--forward-traceparent", action="store_true")
    args = ap.parse_args()
    state = {}

    async def start(app):
        state["session"] = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=4))

    async def stop(app):
        await state["session"].close()

    async def forward(request):
        headers = {}
        if args.forward_traceparent and "traceparent" in request.headers:
            headers["traceparent"] = request.headers["traceparent"]
        try:
            async with state["session"].get(
                    "http://127.0.0.1:%d%s" % (args.backend, request.path),
                    headers=headers) as r:
                await r.read()
                failed = r.status >= 500
        except aiohttp.ClientError:
            failed = True
        return web.Response(status=502 if failed else 200,
                            text="backend failed\n" if failed else "ok\n")

    async def serve():
        middlewares = []
        if args.libclaim:
            from libclaim.aio import claim_middleware
            middlewares.append(claim_middleware)
        app = web.Application(middlewares=middlewares)
        app.on_startup.append(start)
        app.on_cleanup.append(stop)
        app.router.add_get("/r/{id}", forward)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        write_ready(args.ready_file, site._server.sockets[0].getsockname()[1])
        await asyncio.Event().wait()

    asyncio.run(serve())


if __name__ == "__main__":
    sys.exit(main())
