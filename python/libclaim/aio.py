# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""An asyncio service followed request by request, and x-error-claim on its
failed answers (aiohttp).

    from libclaim.aio import claim_middleware
    app = web.Application(middlewares=[claim_middleware])

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
        global _announce
        _announce = False
        sock = request.transport.get_extra_info("socket") if request.transport else None
        if sock is not None:
            _fd.set(sock.fileno())
            _set_fd(sock.fileno())  # this step already runs
        response = await handler(request)
        if response.status >= fail_status and libclaim.HEADER not in response.headers:
            h = libclaim.header(_claim().verdict())
            if h:
                response.headers[h[0]] = h[1]
        return response
    follow()  # from the middleware's import on: before the loop serves anything
except ImportError:  # aiohttp is optional
    pass
