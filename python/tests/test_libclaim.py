# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""libclaim's Python package against the C library it loads ($CLAIMD_LIBCLAIM):
the header, the retry decision, a handle with no claimd, the WSGI
middleware's header rules, and ClaimRetry against a real local server."""
import http.server
import threading
import unittest
import wsgiref.util

import libclaim
from libclaim.wsgi import ClaimMiddleware


class Header(unittest.TestCase):
    def test_round_trip(self):
        self.assertEqual(libclaim.header(libclaim.Verdict.CLAIMED), ("x-error-claim", "claimed"))
        self.assertEqual(libclaim.header(libclaim.Verdict.UNCLAIMED),
                         ("x-error-claim", "unclaimed"))
        self.assertIsNone(libclaim.header(libclaim.Verdict.UNKNOWN))
        self.assertEqual(libclaim.parse_header(" Unclaimed "), libclaim.Verdict.UNCLAIMED)
        self.assertEqual(libclaim.parse_header("claimed"), libclaim.Verdict.CLAIMED)
        self.assertEqual(libclaim.parse_header("maybe"), libclaim.Verdict.NONE)
        self.assertEqual(libclaim.parse_header(None), libclaim.Verdict.NONE)


class Decision(unittest.TestCase):
    def test_rules(self):
        D = libclaim.Decision
        self.assertEqual(libclaim.should_retry(200), D.DONE_OK)
        self.assertEqual(libclaim.should_retry(503, "unclaimed"), D.DONE_UNCLAIMED)
        self.assertEqual(libclaim.should_retry(503, "claimed", max_attempts=3), D.RETRY)
        self.assertEqual(libclaim.should_retry(503, "claimed", attempt=3, max_attempts=3),
                         D.DONE_ATTEMPTS)
        self.assertEqual(libclaim.should_retry(503, None, attempt=1, max_attempts=3), D.RETRY)
        self.assertEqual(libclaim.should_retry(503, None, attempt=2, max_attempts=3), D.DONE_ONCE)
        self.assertEqual(libclaim.should_retry(0, None, max_attempts=3), D.RETRY)

    def test_deadline(self):
        import time
        now = time.monotonic_ns()
        self.assertEqual(libclaim.should_retry(503, "claimed", max_attempts=3,
                                               deadline_ns=now + 10**9, attempt_ns=2 * 10**9),
                         libclaim.Decision.DONE_DEADLINE)
        self.assertEqual(libclaim.should_retry(503, "claimed", max_attempts=3,
                                               deadline_ns=now + 10**10, attempt_ns=10**6),
                         libclaim.Decision.RETRY)

    def test_budget(self):
        b = libclaim.Budget(ratio=0.5, burst=1)
        spent = 0
        for _ in range(4):
            b.request()
            spent += libclaim.should_retry(503, "claimed", max_attempts=3, budget=b) == \
                libclaim.Decision.RETRY
        self.assertEqual(spent, 2)  # half a token a request, one retry per two


class NoClaimd(unittest.TestCase):
    def test_unknown_not_error(self):
        with libclaim.Claim("/nonexistent/verdicts") as c:
            self.assertFalse(c.connected)
            self.assertEqual(c.verdict(), libclaim.Verdict.UNKNOWN)
            r = c.current()
            self.assertEqual(r.verdict, libclaim.Verdict.UNKNOWN)
            self.assertIsNone(r.cause)


def run_wsgi(app, status="503 Service Unavailable", headers=None):
    seen = {}

    def start_response(s, h, exc_info=None):
        seen["status"], seen["headers"] = s, h

    environ = {}
    wsgiref.util.setup_testing_defaults(environ)
    body = b"".join(app(environ, start_response))
    return seen["status"], dict((k.lower(), v) for k, v in seen["headers"]), body


class Middleware(unittest.TestCase):
    """With no claimd the verdict is unknown: no header, and the answer untouched."""

    def app(self, status, extra=()):
        def a(environ, start_response):
            start_response(status, [("Content-Type", "text/plain")] + list(extra))
            return [b"x"]
        return ClaimMiddleware(a, claim=libclaim.Claim("/nonexistent/verdicts"))

    def test_unknown_writes_nothing(self):
        _, h, body = run_wsgi(self.app("503 Service Unavailable"))
        self.assertNotIn("x-error-claim", h)
        self.assertEqual(body, b"x")

    def test_app_header_kept(self):
        _, h, _ = run_wsgi(self.app("502 Bad Gateway", [("X-Error-Claim", "unclaimed")]))
        self.assertEqual(h["x-error-claim"], "unclaimed")


class Retries(unittest.TestCase):
    """ClaimRetry through requests against a server answering 503 with each header."""

    @classmethod
    def setUpClass(cls):
        cls.hits = {}

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(h):
                kind = h.path.strip("/")
                cls.hits[kind] = cls.hits.get(kind, 0) + 1
                h.send_response(503)
                if kind in ("claimed", "unclaimed"):
                    h.send_header("x-error-claim", kind)
                h.send_header("Content-Length", "0")
                h.end_headers()

        cls.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=cls.srv.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.shutdown()
        cls.srv.server_close()

    def attempts(self, kind):
        import requests
        from requests.adapters import HTTPAdapter
        from libclaim.retry import ClaimRetry

        s = requests.Session()
        s.mount("http://", HTTPAdapter(max_retries=ClaimRetry(
            total=3, backoff_factor=0, status_forcelist=[503])))
        r = s.get("http://127.0.0.1:%d/%s" % (self.srv.server_address[1], kind))
        self.assertEqual(r.status_code, 503)
        return self.hits[kind]

    def test_unclaimed_not_retried(self):
        self.assertEqual(self.attempts("unclaimed"), 1)

    def test_claimed_retried(self):
        self.assertEqual(self.attempts("claimed"), 4)

    def test_no_header_once(self):
        self.assertEqual(self.attempts("none"), 2)


if __name__ == "__main__":
    unittest.main()


class ASGIMiddleware(unittest.TestCase):
    """ClaimASGIMiddleware as an ASGI server drives it, with no claimd."""

    def run_app(self, status, headers=(), scope_type="http"):
        import asyncio
        from libclaim.aio import ClaimASGIMiddleware

        async def app(scope, receive, send):
            await send({"type": "http.response.start", "status": status,
                        "headers": list(headers)})
            await send({"type": "http.response.body", "body": b"x"})

        sent = []

        async def receive():
            return {"type": "http.request"}

        async def send(message):
            sent.append(message)

        asyncio.run(ClaimASGIMiddleware(app)({"type": scope_type}, receive, send))
        return sent

    def test_unknown_writes_nothing(self):
        start = self.run_app(503)[0]
        self.assertEqual(start["status"], 503)
        self.assertEqual(start["headers"], [])

    def test_app_header_kept(self):
        start = self.run_app(503, [(b"x-error-claim", b"unclaimed")])[0]
        self.assertEqual(start["headers"], [(b"x-error-claim", b"unclaimed")])

    def test_other_scopes_passed(self):
        self.assertEqual(len(self.run_app(200, scope_type="lifespan")), 2)
