# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""x-error-claim on a WSGI service's failed answers (Flask, Django, any WSGI app).

    from libclaim.wsgi import ClaimMiddleware
    app.wsgi_app = ClaimMiddleware(app.wsgi_app)

A failed answer (a status from fail_status up, 500 by default) gets
``x-error-claim: claimed`` or ``unclaimed``, claimd's verdict for the request
the serving thread handles, taken when the application starts its answer;
an unknown verdict writes no header (the caller then retries at most once).
An answer that already carries the header keeps it: the application knows
better. A thread-per-request server is what claimd follows by thread
(werkzeug's threaded server, gunicorn's sync and gthread workers, mod_wsgi).
"""
import libclaim


class ClaimMiddleware:
    def __init__(self, app, claim=None, fail_status=500):
        self.app = app
        self.claim = claim or libclaim.Claim()
        self.fail_status = fail_status

    def __call__(self, environ, start_response):
        def start(status, headers, exc_info=None):
            try:
                code = int(status.split(None, 1)[0])
            except (ValueError, IndexError):
                code = 0
            if code >= self.fail_status and not any(
                    k.lower() == libclaim.HEADER for k, _ in headers):
                h = libclaim.header(self.claim.verdict())
                if h:
                    headers = list(headers) + [h]
            return start_response(status, headers, exc_info) if exc_info else \
                start_response(status, headers)

        return self.app(environ, start)
