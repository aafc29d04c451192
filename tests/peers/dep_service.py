#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A service for end-to-end tests whose dependency is a database or a cache
reached through its real client library: Redis through redis-py,
PostgreSQL through psycopg2 (libpq), MySQL or MariaDB through PyMySQL.

A ThreadingHTTPServer; request path /r/<id>. For each request a handler
thread takes a connection from a pool the threads share (opened when the
service starts, as a web application's pool is: the logins are made
before any request) and makes one call: a read that succeeds, or, for the
ids of the dependency's failure set (--dep-fail-mod M: id % M == 0), one
the server answers with an error (Redis: INCR of a key that holds no
number; PostgreSQL and MySQL: a division by zero made an error). A failed
call is passed up as 503, or, with --swallow, taken as a cache miss: the
service answers 200 all the same. The service fails on its own (500,
without calling) for ids with id % --fail-mod == --fail-rem; with
--fail-after, after its call.

--dep redis|postgres|mysql, --addr HOST:PORT or a socket file's path
(PostgreSQL: DIR:PORT, the socket directory and its port). --ready-file is written once it
listens, with its port. --keepalive speaks HTTP/1.1 with persistent
connections; --no-call answers without calling (a benchmark's baseline).
"""
import argparse
import http.server
import queue
import sys

from peer_http import ThreadedServer, reply, serve


def unplanned(rid, fail, err):
    """A dependency's error the test did not plan: said in the log, for the test to show."""
    if not fail:
        print("id %d: unplanned error from the dependency: %r" % (rid, err), file=sys.stderr,
              flush=True)


def redis_client(addr, n, lazy=False):
    import redis

    if addr.startswith("/"):
        pool = redis.BlockingConnectionPool(
            connection_class=redis.UnixDomainSocketConnection, path=addr, max_connections=n)
    else:
        host, port = addr.rsplit(":", 1)
        pool = redis.BlockingConnectionPool(host=host, port=int(port), max_connections=n)
    client = redis.Redis(connection_pool=pool)
    if not lazy:
        client.set("not-a-number", "abc")
        # Open the pool's connections now: every later call is a request's.
        conns = [pool.get_connection("PING") for _ in range(n)]
        for c in conns:
            c.connect()
            pool.release(c)
    return redis_call(client)


def redis_call(client):
    import redis

    def call(rid, fail):
        try:
            if fail:
                client.incr("not-a-number")
            else:
                client.get("k%d" % rid)
            return True
        except redis.exceptions.ResponseError as e:
            unplanned(rid, fail, e)
            return False
        except redis.exceptions.ConnectionError as e:
            # The cache unreachable (down, its socket file gone): a failed call, passed up.
            unplanned(rid, fail, e)
            return False

    return call


def sql_pool(connect, n, fail_sql, ok_sql, errors):
    conns = queue.Queue()
    for _ in range(n):
        conns.put(connect())

    def call(rid, fail):
        conn = conns.get()
        try:
            cur = conn.cursor()
            cur.execute(fail_sql if fail else ok_sql % rid)
            cur.fetchall()
            cur.close()
            return True
        except errors as e:
            unplanned(rid, fail, e)
            return False
        finally:
            conns.put(conn)

    return call


def postgres_client(addr, n):
    import psycopg2

    # A socket directory and the port that names its file (DIR:PORT), or HOST:PORT.
    host, port = addr.rsplit(":", 1)
    kw = {"host": host, "port": int(port)}

    def connect():
        # libpq's default sslmode (prefer): an SSLRequest first, refused (N) by a server
        # without TLS, then the startup message, as most clients connect.
        conn = psycopg2.connect(dbname="postgres", user="postgres", **kw)
        conn.autocommit = True  # one statement, one call: no BEGIN before it
        return conn

    return sql_pool(connect, n, "SELECT 1/0", "SELECT %d", psycopg2.Error)


def mysql_client(addr, n):
    import pymysql

    if addr.startswith("/"):
        kw = {"unix_socket": addr}
    else:
        host, port = addr.rsplit(":", 1)
        kw = {"host": host, "port": int(port)}

    def connect():
        return pymysql.connect(user="root", autocommit=True, ssl_disabled=True, **kw)

    # sql_mode ERROR_FOR_DIVISION_BY_ZERO only warns outside of writes: SIGNAL errs.
    return sql_pool(connect, n, "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused'",
                    "SELECT %d", pymysql.MySQLError)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dep", choices=("redis", "postgres", "mysql"), required=True)
    ap.add_argument("--addr", required=True)
    ap.add_argument("--dep-fail-mod", type=int, default=5)
    ap.add_argument("--fail-mod", type=int, default=0)
    ap.add_argument("--fail-rem", type=int, default=0)
    ap.add_argument("--swallow", action="store_true")
    ap.add_argument("--fail-after", action="store_true",
                    help="its own failures decided after its call, not before")
    ap.add_argument("--threads", type=int, default=4, help="connections in the pool")
    ap.add_argument("--keepalive", action="store_true", help="HTTP/1.1, connections kept")
    ap.add_argument("--no-call", action="store_true",
                    help="answer without calling (a benchmark's baseline)")
    ap.add_argument("--pool-first", action="store_true",
                    help="open the pool before listening")
    ap.add_argument("--lazy", action="store_true",
                    help="Redis: connect at the first call, not at start (the cache may be down)")
    ap.add_argument("--ready-file")
    args = ap.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if args.keepalive else "HTTP/1.0"

        def log_message(self, *a):
            pass

        def do_GET(self):
            try:
                rid = int(self.path.rsplit("/", 1)[1])
            except (ValueError, IndexError):
                rid = -1
            own = args.fail_mod and rid % args.fail_mod == args.fail_rem
            if own and not args.fail_after:
                reply(self, 500, "own failure\n")
                return
            fail = args.dep_fail_mod and rid % args.dep_fail_mod == 0
            ok = args.no_call or self.server.call(rid, fail)
            if not ok and not args.swallow:
                reply(self, 503, "dependency failed\n")
                return
            if own:
                reply(self, 500, "own failure, after its call\n")
                return
            reply(self, 200, "ok\n" if ok else "cache miss\n")

    make = {"redis": lambda a, n: redis_client(a, n, args.lazy),
            "postgres": postgres_client, "mysql": mysql_client}
    # The pool is opened once the service listens, or before (--pool-first).
    call = make[args.dep](args.addr, args.threads) if args.pool_first else None
    srv = ThreadedServer(("127.0.0.1", 0), Handler)
    srv.call = call or make[args.dep](args.addr, args.threads)
    serve(srv, args.ready_file)


if __name__ == "__main__":
    sys.exit(main())
