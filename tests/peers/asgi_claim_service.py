#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""An ASGI service (Starlette under uvicorn, its asyncio loop and h11) that
writes x-error-claim with libclaim's ClaimASGIMiddleware
(python/libclaim/aio.py). GET /r/<id>: fails on its own (500) for ids with
id % 5 == 1, before calling; else calls its backend through one aiohttp
ClientSession its requests share (a pool of 4 keep-alive connections) and
passes a failed answer up as 502. Many requests at once on one loop."""
import argparse
import asyncio
import socket
import sys

import aiohttp
import uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from libclaim.aio import ClaimASGIMiddleware
from peer_http import write_ready


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", type=int, required=True)
    ap.add_argument("--ready-file")
    args = ap.parse_args()
    state = {}

    async def r(request):
        rid = int(request.path_params["rid"])
        if rid % 5 == 1:
            return PlainTextResponse("own failure\n", status_code=500)
        if "session" not in state:
            state["session"] = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=4))
        try:
            async with state["session"].get(
                    "http://127.0.0.1:%d/r/%d" % (args.backend, rid)) as resp:
                await resp.read()
                failed = resp.status >= 500
        except aiohttp.ClientError:
            failed = True
        return PlainTextResponse("backend failed\n" if failed else "ok\n",
                                 status_code=502 if failed else 200)

    app = ClaimASGIMiddleware(Starlette(routes=[Route("/r/{rid:int}", r)]))
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    config = uvicorn.Config(app, loop="asyncio", http="h11", lifespan="off",
                            log_level="warning")
    server = uvicorn.Server(config)
    write_ready(args.ready_file, sock.getsockname()[1])
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    sys.exit(main())
