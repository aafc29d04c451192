#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A root caller for end-to-end tests: a process that makes calls outside
any request it serves. It GETs /r/<first> .. /r/<first+count-1> from
127.0.0.1:<port>, one after the other, each on a new connection
(http.client), and never retries. With --listen it also holds a listening
socket while it calls (a service's background job: claimd counts its calls
but makes no edge of them). Prints one line: "<calls> <failed>".
"""
import argparse
import http.client
import socket
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--listen", action="store_true", help="hold a listener meanwhile")
    args = ap.parse_args()

    listener = None
    if args.listen:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
    failed = 0
    for i in range(args.first, args.first + args.count):
        c = http.client.HTTPConnection("127.0.0.1", args.port, timeout=10)
        try:
            c.request("GET", "/r/%d" % i)
            r = c.getresponse()
            r.read()
            failed += r.status >= 500
        except (OSError, http.client.HTTPException):
            failed += 1
        finally:
            c.close()
    print("%d %d" % (args.count, failed))
    if listener:
        listener.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
