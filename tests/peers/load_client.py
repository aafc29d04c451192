#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Load for end-to-end tests: T threads, N requests each, GET /r/<id> with
id = thread * N + i, with a User-Agent (--user-agent) and a W3C traceparent
whose trace-id is the id's (--traceparent) when asked. With --keepalive each
thread keeps one HTTP/1.1
connection; --warm-file/--go-file let a test make those connections (one
warm-up request each), start claimd, then release the real traffic;
--pause-after N with --pause-file/--resume-file stops every thread after its
N-th request until the test has changed something (the connections kept).
Writes a JSON summary (statuses seen, per id) to --out."""
import argparse
import http.client
import json
import os
import ssl
import sys
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--keepalive", action="store_true")
    ap.add_argument("--warm-file")
    ap.add_argument("--go-file")
    ap.add_argument("--pause-after", type=int, default=0)
    ap.add_argument("--pause-file")
    ap.add_argument("--resume-file")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tls", help="CA file: speak HTTPS")
    ap.add_argument("--user-agent")
    ap.add_argument("--traceparent", action="store_true")
    ap.add_argument("--same-target", action="store_true",
                    help="every request GET /r/0 (ids still count the answers)")
    args = ap.parse_args()

    ctx = ssl.create_default_context(cafile=args.tls) if args.tls else None

    def new_conn():
        if ctx:
            return http.client.HTTPSConnection("127.0.0.1", args.port, context=ctx)
        return http.client.HTTPConnection("127.0.0.1", args.port)

    statuses = {}
    lock = threading.Lock()
    warmed = threading.Barrier(args.threads + 1)

    def wait_for(path):
        while path and not os.path.exists(path):
            time.sleep(0.01)

    def write(path, what):
        with open(path, "w") as f:
            f.write(what + "\n")

    paused = threading.Barrier(args.threads,
                               action=lambda: args.pause_file and write(args.pause_file, "paused"))

    def worker(t):
        conn = None
        if args.keepalive:
            conn = new_conn()
            conn.request("GET", "/warmup/-1")
            conn.getresponse().read()
        warmed.wait()
        wait_for(args.go_file)
        for i in range(args.requests):
            if args.pause_after and i == args.pause_after:
                paused.wait()
                wait_for(args.resume_file)
            rid = t * args.requests + i
            c = conn or new_conn()
            try:
                headers = {}
                if args.user_agent:
                    headers["User-Agent"] = args.user_agent
                if args.traceparent:
                    headers["traceparent"] = "00-%032x-%016x-01" % (0x7ace << 96 | rid, rid + 1)
                c.request("GET", "/r/%d" % (0 if args.same_target else rid), headers=headers)
                r = c.getresponse()
                r.read()
                st = r.status
            except (OSError, http.client.HTTPException):
                st = 0
            if not conn:
                c.close()
            with lock:
                statuses[rid] = st
        if conn:
            conn.close()

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(args.threads)]
    for th in threads:
        th.start()
    warmed.wait()
    if args.warm_file:
        write(args.warm_file, "warm")
    for th in threads:
        th.join()
    summary = {"sent": len(statuses), "statuses": statuses}
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(summary, f)
    os.rename(tmp, args.out)


if __name__ == "__main__":
    sys.exit(main())
