#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The cost of a lookup from Python: N calls of libclaim.Claim().current(),
as tests/claim_bench times claim_current(). Prints the time per call as
JSON.

    claim_bench.py [N]
"""
import json
import sys
import time

import libclaim


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
    c = libclaim.Claim()
    current, unknown = c.current, 0
    current()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        if current().verdict == libclaim.Verdict.UNKNOWN:
            unknown += 1
    ns = (time.perf_counter_ns() - t0) / n
    print(json.dumps({"calls": n, "ns_per_call": round(ns, 2),
                      "connected": int(c.connected), "unknown": unknown}))


if __name__ == "__main__":
    sys.exit(main())
