#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The storm of evaluation.md's T1, polyglot: a chain A -> B -> C -> D, each
hop a real service in its own language using only libclaim's package for it
(A: Flask with libclaim.wsgi and libclaim.retry; B: Go net/http with
go/claim's Handler and Transport; C: the JDK's HttpServer with the jar's
ClaimFilter and ClaimRetry; D: C with libclaim, failing every request).

Each policy is one run of --requests ids through A, 8 in flight, from a
client that does not retry:
  claim: every hop retries at most once, through its package (an unclaimed
         failure is not retried): only C, nearest the failure, retries;
  naive: every hop retries once, whatever the failure says.
D's load is read from D's own counter (GET /stats), and so is each hop's.
Prints one JSON object: per policy, the counts, D's load over the requests,
and the answers the client saw (status and x-error-claim).

    polyglot_storm.py --build BUILD [--requests N] [--policies claim,naive]

$CLAIMD_VERDICTS names the verdict map (claimd's pin); with no claimd every
verdict is unknown and no header is written.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOPS = ("A", "B", "C", "D")
NAMES = {"A": "storm-py", "B": "storm-go", "C": "storm-java", "D": "storm-c"}


def wait_port(path, proc, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %d" % (proc.args[0], proc.returncode))
        try:
            with open(path) as f:
                text = f.read().strip()
            if text:
                return int(text)
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    raise RuntimeError("%s: not ready in %d s" % (proc.args[0], timeout))


def get(url, timeout=60):
    """(status, x-error-claim) of GET url, with no retry: 0 when it did not answer."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            r.read()
            return r.status, r.headers.get("x-error-claim", "")
    except urllib.error.HTTPError as e:
        e.read()
        return e.code, e.headers.get("x-error-claim", "")
    except OSError:
        return 0, ""


def start(build, tmp, policy):
    """The four hops, D first; returns {hop: (process, port)}."""
    env = dict(os.environ, PYTHONPATH="%s/python:%s/tests/peers" % (TOP, TOP),
               CLAIMD_LIBCLAIM="%s/libclaim.so" % build)
    cp = "%s/tests/java:%s/java/libclaim.jar:/usr/share/java/jna.jar" % (build, build)
    procs = {}
    for hop in reversed(HOPS):
        ready = os.path.join(tmp, "%s-%s.ready" % (policy, hop))
        down = str(procs[chr(ord(hop) + 1)][1]) if hop != "D" else None
        argv = {
            "D": lambda: ["%s/tests/claim_leaf" % build, "-r", ready],
            "C": lambda: ["java", "-cp", cp, "ClaimService", down, ready, policy],
            "B": lambda: ["%s/tests/go/claimsvc" % build, "serve", "-backend", down,
                          "-ready", ready, "-retry", policy],
            "A": lambda: ["/usr/bin/python3", "%s/tests/peers/flask_claim_service.py" % TOP,
                          "--backend", down, "--ready-file", ready, "--retry", policy],
        }[hop]()
        with open(os.path.join(tmp, "%s-%s.log" % (policy, hop)), "w") as log:
            p = subprocess.Popen(argv, env=dict(env, CLAIMD_SERVICE=NAMES[hop]), stdout=log,
                                 stderr=subprocess.STDOUT)
        procs[hop] = (p, None)
        try:
            procs[hop] = (p, wait_port(ready, p))
        except BaseException:
            stop(procs)  # the hops started so far go too
            raise
    return procs


def stop(procs):
    for p, _ in procs.values():
        if p.poll() is None:
            p.terminate()
    for p, _ in procs.values():
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run(build, policy, requests, first_id):
    tmp = tempfile.mkdtemp(prefix="claimd-storm-")
    try:
        procs = start(build, tmp, policy)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        url = "http://127.0.0.1:%d/r/%%d" % procs["A"][1]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda i: get(url % i),
                                    range(first_id, first_id + requests)))
        counts = {}
        for hop in HOPS:
            with urllib.request.urlopen("http://127.0.0.1:%d/stats" % procs[hop][1],
                                        timeout=30) as r:
                counts[hop] = json.load(r)["requests"]
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    seen = {}
    for status, claim in answers:
        key = "%d %s" % (status, claim or "-")
        seen[key] = seen.get(key, 0) + 1
    return {"requests": requests, "first_id": first_id, "counts": counts,
            "services": NAMES, "d_load": counts["D"] / requests, "answers": seen}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--policies", default="claim,naive")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    out = {}
    for i, policy in enumerate(args.policies.split(",")):
        out[policy] = run(build, policy, args.requests, i * args.requests)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    sys.exit(main())
