#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A client whose retries honour x-error-claim (libclaim.retry.ClaimRetry,
through requests): GET /r/0 .. /r/N-1 from --port, each with up to 3
retries of a 500, 502 or 503. Prints one JSON object: per id, its final
status, its x-error-claim and how many attempts it took."""
import argparse
import json
import sys

import requests
from requests.adapters import HTTPAdapter

from libclaim.retry import ClaimRetry


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--requests", type=int, default=100)
    args = ap.parse_args()
    s = requests.Session()
    s.mount("http://", HTTPAdapter(max_retries=ClaimRetry(
        total=3, backoff_factor=0, status_forcelist=[500, 502, 503])))
    out = {}
    for i in range(args.requests):
        r = s.get("http://127.0.0.1:%d/r/%d" % (args.port, i), timeout=30)
        out[i] = {"status": r.status_code, "claim": r.headers.get("x-error-claim", ""),
                  "attempts": len(r.raw.retries.history) + 1 if r.raw.retries else 1}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
