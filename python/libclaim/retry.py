# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Retries that honour x-error-claim, for urllib3 and so for requests.

    import requests
    from requests.adapters import HTTPAdapter
    from libclaim.retry import ClaimRetry

    s = requests.Session()
    s.mount("http://", HTTPAdapter(max_retries=ClaimRetry(total=3,
            status_forcelist=[500, 502, 503, 504])))

A failed answer that says ``x-error-claim: unclaimed`` is not retried: the
service passed up a dependency's failure, and a retry would only add load
where the failure is. One that says ``claimed`` is retried as urllib3's
Retry says. One without the header is retried at most once (libclaim's
decision, claim_should_retry, the same in every language). Connection
errors are retried as urllib3 retries them. A failure not retried is
returned as the answer (raise_on_status is off by default here).
"""
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

import libclaim


class ClaimRetry(Retry):
    def __init__(self, *args, **kw):
        kw.setdefault("raise_on_status", False)
        super().__init__(*args, **kw)

    def increment(self, method=None, url=None, response=None, error=None, _pool=None,
                  _stacktrace=None):
        if response is not None and error is None:
            attempt = len(self.history) + 1
            d = libclaim.should_retry(response.status, response.headers.get(libclaim.HEADER),
                                      attempt=attempt, max_attempts=attempt + 1)
            if d not in (libclaim.Decision.RETRY, libclaim.Decision.DONE_ATTEMPTS):
                # Unclaimed, or no claim and already retried once: this answer is the last.
                raise MaxRetryError(_pool, url, "x-error-claim: not retried (%s)" % d.name)
        return super().increment(method, url, response, error, _pool, _stacktrace)
