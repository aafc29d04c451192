# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""An asyncio service followed request by request, and x-error-claim on its
failed answers: aiohttp, and ASGI applications (Starlette, FastAPI) under
uvicorn.

    from libclaim.aio import claim_middleware
    app = web.Application(middlewares=[claim_middleware])

    from libclaim.aio import ClaimASGIMiddleware
    app = ClaimASGIMiddleware(app)   # uvicorn --loop asyncio

claimd follows a request by the thread that serves it; an event loop
serves many at once. follow() tells claimd which request the loop works on
(libclaim's claim_context_enter / claim_context_leave) around every
callback the loop runs: a callback works for the request whose handler's
context it runs in (contextvars: a task's steps, the tasks and callbacks it
starts), and for none otherwise. The middleware puts the request's
connection into its handler's context, and writes claimd's verdict on an
answer from fail_status (500) up; an unknown verdict writes nothing.
"""
import asyncio.events
import contextvars

import libclaim

_fd = contextvars.ContextVar("claimd_request_fd", default=-1)
_followed = False
_cur = -1  # the request claimd has the loop's thread working for now (-1: none)
# Until a request reached the middleware, each callback first says that the
# process names its requests (an enter and a leave): claimd must know it
# before the first request is read, or it takes the loop for multiplexed.
_announce = True


def _set_fd(fd):
    global _cur
    if fd == _cur:
        return
    if fd >= 0:
        libclaim.context_enter(fd)
    else:
        libclaim.context_leave()
    _cur = fd


def follow():
    """From now on every callback of every loop in this process enters its request."""
    global _followed
    if _followed:
        return
    _followed = True
    run = asyncio.events.Handle._run

    def _run(self):
        if _announce:
            libclaim.context_enter(-1)
            libclaim.context_leave()
        ctx = getattr(self, "_context", None)
        _set_fd(ctx.get(_fd, -1) if ctx is not None else -1)
        try:
            return run(self)
        finally:
            _set_fd(-1)

    asyncio.events.Handle._run = _run


_handle = None


def _claim():
    """The verdict map, opened at the first answer that needs it."""
    global _handle
    if _handle is None:
        _handle = libclaim.Claim()
    return _handle


try:
    from aiohttp import web

    @web.middleware
    async def claim_middleware(request, handler, fail_status=500):
        _enter_connection(request.transport.get_extra_info("socket")
                          if request.transport else None)
        response = await handler(request)
        if response.status >= fail_status and libclaim.HEADER not in response.headers:
            h = libclaim.header(_claim().verdict())
            if h:
                response.headers[h[0]] = h[1]
        return response
    follow()  # from the middleware's import on: before the loop serves anything
except ImportError:  # aiohttp is optional
    pass


def _enter_connection(sock):
    """The request this task serves came on sock: claimd follows it from here."""
    global _announce
    _announce = False
    if sock is not None:
        _fd.set(sock.fileno())
        _set_fd(sock.fileno())  # this step already runs


def _asgi_socket(receive):
    """The socket of an ASGI request, where the server shows it: uvicorn's
    receive is a method of its request cycle, which holds the transport."""
    transport = getattr(getattr(receive, "__self__", None), "transport", None)
    return transport.get_extra_info("socket") if transport is not None else None


class ClaimASGIMiddleware:
    """ASGI middleware: follows each HTTP request's task and writes claimd's
    verdict on an answer from fail_status (500) up, unless the application
    wrote the header itself. Under a server that does not show its socket
    (only uvicorn's asyncio loop is known to), claimd cannot keep requests
    apart and says unknown: the middleware then writes nothing."""

    def __init__(self, app, fail_status=500):
        self.app = app
        self.fail_status = fail_status
        follow()

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http":
            return await self.app(scope, receive, send)
        _enter_connection(_asgi_socket(receive))

        async def send_claimed(message):
            if message.get("type") == "http.response.start" and \
                    message.get("status", 0) >= self.fail_status:
                headers = list(message.get("headers") or [])
                if not any(k.lower() == libclaim.HEADER.encode() for k, _ in headers):
                    h = libclaim.header(_claim().verdict())
                    if h:
                        headers.append((h[0].encode(), h[1].encode()))
                        message = dict(message, headers=headers)
            await send(message)

        return await self.app(scope, receive, send_claimed)
