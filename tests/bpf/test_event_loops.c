// SPDX-License-Identifier: GPL-2.0
/*
 * Event loops followed by what their requests carry, with no code change
 * (bpf/keyed.c), and held to the rule above all where nothing ties: no
 * confident wrong answer. Each proxy serves 8 clients in flight on one loop
 * and calls a backend through a pool of kept-alive connections its requests
 * share; the backend fails every fifth id on its own and the proxy passes
 * that up:
 *
 *  - node: Node.js 20, http.request through a keep-alive agent, nothing
 *    carried on: Node's probes (bpf/runtimes/node.c) tie each call by the
 *    async context writing it, a kept-alive socket's (a tick the handler
 *    began) and a new one's (its connect, its socket the handler's): every
 *    call tied, every failure right; mode node;
 *  - node_fresh: an agent that keeps no connection alive: every call on a
 *    new socket, written in its connect's context, tied through the
 *    socket's lineage (the TCPWrap probe: the handler's context made it);
 *    every call tied but the first burst's;
 *  - node_capped: the same agent at 4 sockets: a request queued behind
 *    them is handed a socket in another request's context (the socket's
 *    release), and its call ties to none: unknown, never wrong;
 *  - node_chain, node_async_fetch: a second call from the first's
 *    response callback, or two fetch() calls awaited one after the other
 *    in an async handler: the first call, written straight from the
 *    handler, is tied; the second, written in the response parser's
 *    context (begun by a JavaScript tick) or in the await's continuation
 *    (no async context), ties to none, and every request is unknown;
 *  - haproxy: haproxy (`http-reuse always`, two threads), the client
 *    sending no user agent and no id: nothing ties, every failure unknown
 *    but for requests served alone before the first juggling, mode
 *    multiplexed;
 *  - aiohttp: asyncio, one ClientSession, the client's user agent and
 *    traceparent carried in and not on: unknown, multiplexed;
 *  - node_relay, haproxy_relay: the proxies passing the client's headers
 *    on (its user agent), node_relay's node a copy stripped of its symbol
 *    table (Node's probes refuse it, said and counted): each call tied as
 *    the relay of the one open request with its method, target and user
 *    agent; mode relay;
 *  - aiohttp_traceparent: the traceparent passed on: tied by its trace id;
 *    mode request-id;
 *  - haproxy_ambiguous: every request alike (the same target, user agent):
 *    a call that fits two or more open requests ties to none, and they are
 *    unknown; none wrong;
 *  - aiohttp_libclaim: libclaim's claim_middleware: exact.
 *
 * Every failure seen is the backend's: unclaimed or unknown, never
 * claimed; claimd records every one (40 of 40), counts every request (200
 * of 200) and every call on its edge (200, 40 callee failures). Where calls
 * tie, the edge learns its class from the tied requests (both failed: one
 * per right verdict; fail-close); a request open while a call tied to none
 * (the first burst, before the process is known for an event loop) is
 * unknown.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "services.h"
#include "sockets.h"
#include "test_progs.h"
#include "truth.h"

#define THREADS	 8
#define PER	 25
#define REQUESTS (THREADS * PER)
#define FAIL_MOD 5

struct loop {
	const char *name; /* the subtest, and the service's CLAIMD_SERVICE */
	/* its command, given the backend's port and its ready file or config */
	void (*argv)(const char **argv, char *buf, size_t len, const char *bport, const char *ready,
		     int port, const char *dir);
	bool port_chosen; /* the test picks its port (haproxy), else it writes it to ready */
	bool named;	  /* it follows its loop with libclaim's package: exact */
	/* what its calls are tied by (claimctl services' mode), NULL: named; "multiplexed": none */
	const char *mode;
	const char *const *client; /* load_client.py's options: what the requests carry */
	bool same_target;	   /* every request the same (/r/0, which fails): ambiguous */
	int calls;		   /* calls to the backend per request */
	bool partial; /* some calls tie to none (a queue, an await): no verdict is promised */
	/* ... every request's last call, written in a callback of its first's (an
	 * await's continuation, a response's callback): all unknown */
	bool later_untied;
	bool refused; /* run by a copy of its runtime that claimd's probes refuse */
	bool fresh;   /* every call on a new connection: tied through its socket's lineage */
};

static const char *const with_ua[] = { "--user-agent", "elclient/1.0", NULL };
static const char *const with_ua_and_id[] = { "--user-agent", "elclient/1.0", "--traceparent",
					      NULL };
static const char *const with_ua_same_target[] = { "--user-agent", "elclient/1.0", "--same-target",
						   NULL };

static void node_argv(const char **argv, char *buf, size_t len, const char *bport,
		      const char *ready, int port, const char *dir)
{
	const char *a[] = { "node", peer_script("node_proxy.js", buf, len), bport, ready, NULL };

	(void)port;
	(void)dir;
	memcpy(argv, a, sizeof(a));
}

static void node_chain_argv(const char **argv, char *buf, size_t len, const char *bport,
			    const char *ready, int port, const char *dir)
{
	node_argv(argv, buf, len, bport, ready, port, dir);
	argv[4] = "--chain";
	argv[5] = NULL;
}

static void node_fresh_argv(const char **argv, char *buf, size_t len, const char *bport,
			    const char *ready, int port, const char *dir)
{
	node_argv(argv, buf, len, bport, ready, port, dir);
	argv[4] = "--fresh";
	argv[5] = NULL;
}

static void node_capped_argv(const char **argv, char *buf, size_t len, const char *bport,
			     const char *ready, int port, const char *dir)
{
	node_argv(argv, buf, len, bport, ready, port, dir);
	argv[4] = "--max-sockets=4";
	argv[5] = NULL;
}

static void node_fetch_argv(const char **argv, char *buf, size_t len, const char *bport,
			    const char *ready, int port, const char *dir)
{
	node_argv(argv, buf, len, bport, ready, port, dir);
	argv[1] = peer_script("node_async_fetch.js", buf, len);
}

static void aiohttp_argv(const char **argv, char *buf, size_t len, const char *bport,
			 const char *ready, int port, const char *dir)
{
	const char *a[] = { "/usr/bin/python3",
			    peer_script("aiohttp_proxy.py", buf, len),
			    "--backend",
			    bport,
			    "--ready-file",
			    ready,
			    NULL };

	(void)port;
	(void)dir;
	memcpy(argv, a, sizeof(a));
}

/*
 * haproxy with a config of the test's own, in buf: its path. It logs each
 * request (its status, retries and how it ended) to the subtest's log.
 */
static void haproxy_argv(const char **argv, char *buf, size_t len, const char *bport,
			 const char *ready, int port, const char *dir)
{
	char text[1024];
	const char *a[] = { "haproxy", "-db", "-f", buf, NULL };

	(void)ready;
	snprintf(buf, len, "%s/haproxy.cfg", dir);
	snprintf(text, sizeof(text),
		 "global\n  nbthread 2\n  log stdout format raw local0\n"
		 "defaults\n  mode http\n  log global\n  option httplog\n"
		 "  timeout connect 5s\n  timeout client 30s\n"
		 "  timeout server 30s\n"
		 "frontend fe\n  bind 127.0.0.1:%d\n  default_backend be\n"
		 "backend be\n  http-reuse always\n  server b1 127.0.0.1:%s\n",
		 port, bport);
	write_file(buf, text);
	memcpy(argv, a, sizeof(a));
}

static void aiohttp_libclaim_argv(const char **argv, char *buf, size_t len, const char *bport,
				  const char *ready, int port, const char *dir)
{
	aiohttp_argv(argv, buf, len, bport, ready, port, dir);
	argv[6] = "--libclaim";
	argv[7] = NULL;
}

/* A copy of node without its symbol table, made once in dir: its path, or NULL. */
static const char *node_stripped(const char *dir)
{
	static char path[H_PATH];
	const char *argv[] = { "strip", "-o", path, "/usr/bin/node", NULL };

	snprintf(path, sizeof(path), "%s/node-stripped", dir);
	if (access(path, X_OK) && proc_run(argv, NULL, 0, 60000)) {
		printf("cannot strip a copy of /usr/bin/node into %s\n", path);
		return NULL;
	}
	return path;
}

static void node_relay_argv(const char **argv, char *buf, size_t len, const char *bport,
			    const char *ready, int port, const char *dir)
{
	node_argv(argv, buf, len, bport, ready, port, dir);
	argv[0] = node_stripped(dir);
	argv[4] = "--forward-headers";
	argv[5] = NULL;
}

static void aiohttp_traceparent_argv(const char **argv, char *buf, size_t len, const char *bport,
				     const char *ready, int port, const char *dir)
{
	aiohttp_argv(argv, buf, len, bport, ready, port, dir);
	argv[6] = "--forward-traceparent";
	argv[7] = NULL;
}

static const struct loop loops[] = {
	/* Node's probes: every call tied by its async context. */
	{ .name = "node", .argv = node_argv, .mode = "node", .calls = 1 },
	/* A new connection per call: tied through the socket the handler's context made. */
	{ .name = "node_fresh",
	  .argv = node_fresh_argv,
	  .mode = "node",
	  .calls = 1,
	  .fresh = true },
	/* Queued behind a capped pool: handed a socket in another request's context. */
	{ .name = "node_capped",
	  .argv = node_capped_argv,
	  .mode = "node",
	  .calls = 1,
	  .partial = true },
	/*
	 * A second call from the first's response callback: that callback runs in
	 * the response parser's context, which a JavaScript tick began: tied to none.
	 */
	{ .name = "node_chain",
	  .argv = node_chain_argv,
	  .mode = "node",
	  .calls = 2,
	  .partial = true,
	  .later_untied = true },
	/* An async handler awaiting two fetch() calls, one after the other. */
	{ .name = "node_async_fetch",
	  .argv = node_fetch_argv,
	  .mode = "node",
	  .client = with_ua,
	  .calls = 2,
	  .partial = true,
	  .later_untied = true },
	/* Nothing carried that ties: unknown, every one. */
	{ .name = "haproxy",
	  .argv = haproxy_argv,
	  .port_chosen = true,
	  .mode = "multiplexed",
	  .calls = 1 },
	/* Ids and a user agent carried in, neither carried on (aiohttp's own user agent). */
	{ .name = "aiohttp",
	  .argv = aiohttp_argv,
	  .mode = "multiplexed",
	  .client = with_ua_and_id,
	  .calls = 1 },
	/* Tied by what they carry on: the relay of each request, or its trace id. */
	{ .name = "node_relay",
	  .argv = node_relay_argv,
	  .mode = "relay",
	  .client = with_ua,
	  .calls = 1,
	  .refused = true },
	{ .name = "haproxy_relay",
	  .argv = haproxy_argv,
	  .port_chosen = true,
	  .mode = "relay",
	  .client = with_ua,
	  .calls = 1 },
	{ .name = "aiohttp_traceparent",
	  .argv = aiohttp_traceparent_argv,
	  .mode = "request-id",
	  .client = with_ua_and_id,
	  .calls = 1 },
	/*
	 * Every request the same (method, target, user agent): a call fits as
	 * many open requests as are in flight, and ties to one only when it is
	 * alone; ambiguous, it ties to none.
	 */
	{ .name = "haproxy_ambiguous",
	  .argv = haproxy_argv,
	  .port_chosen = true,
	  .client = with_ua_same_target,
	  .same_target = true,
	  .calls = 1 },
	{ .name = "aiohttp_libclaim", .argv = aiohttp_libclaim_argv, .named = true, .calls = 1 },
};

/* Waits until something listens on port (10 s at most), then for claimd to know its program. */
static int wait_listening(int port)
{
	if (sock_wait_listening(port, 10000))
		return -1;
	claimd_programs_settle();
	return 0;
}

static void run(struct claimd_h *h, struct trace_cap *t, const struct svc *back,
		const struct loop *l)
{
	char buf[H_PATH], ready[H_PATH], log[H_PATH], env[64], bport[16];
	char pypath[H_PATH + 64], lib[H_PATH + 32], verdicts[H_PATH + 32];
	const char *argv[16], *envv[] = { env, pypath, lib, verdicts, NULL };
	const struct truth_svc truth = { .service = l->name,
					 .verdict = "unclaimed",
					 .cause = back->name,
					 .target = "/r/%d",
					 .ids = l->same_target ? 1 : REQUESTS,
					 .mod = FAIL_MOD };
	struct truth_tally tally = { 0 };
	static int status[REQUESTS];
	int i, port = l->port_chosen ? sock_free_port() : 0, failed = 0;
	long long ambiguous_before, node_before, refused_before;
	size_t mark = trace_mark(t);
	pid_t pid;

	snprintf(env, sizeof(env), "CLAIMD_SERVICE=%s", l->name);
	snprintf(pypath, sizeof(pypath), "PYTHONPATH=%s/python:%s/tests/peers", test__top_dir(),
		 test__top_dir());
	snprintf(lib, sizeof(lib), "CLAIMD_LIBCLAIM=%s/libclaim.so", test__build_dir());
	snprintf(verdicts, sizeof(verdicts), "CLAIMD_VERDICTS=%s/verdicts", h->pin);
	snprintf(bport, sizeof(bport), "%d", back->port);
	snprintf(ready, sizeof(ready), "%s/%s.ready", h->dir, l->name);
	snprintf(log, sizeof(log), "%s/%s.log", h->dir, l->name);
	l->argv(argv, buf, sizeof(buf), bport, ready, port, h->dir);
	if (!ASSERT_OK_PTR(argv[0], "its runtime"))
		return;
	refused_before = claimd_status_count(h, "node_refused", false);
	pid = proc_spawn(argv, envv, log);
	if (!ASSERT_GT(pid, 0, l->name))
		return;
	if (l->port_chosen) {
		if (!ASSERT_OK(wait_listening(port), "listening"))
			goto out;
	} else if (!ASSERT_GT(port = wait_ready_port(ready, 15000), 0, "ready, its port written")) {
		goto out;
	}
	ambiguous_before = claimd_status_count(h, "calls_tie_ambiguous", true);
	node_before = claimd_status_count(h, "calls_tied_by_node", true);
	if (load_client_run_with(h->dir, port, THREADS, PER, NULL, l->client, status, REQUESTS))
		goto out;
	for (i = 0; i < REQUESTS; i++)
		failed += status[i] >= 500;
	if (l->refused) {
		/* Said and counted: the copy shows no HTTP parser's OnStreamRead. */
		ASSERT_EQ(claimd_status_count(h, "node_refused", false), refused_before + 1,
			  "refused, counted");
		ASSERT_GT(claimd_log_lines(h, "node-stripped refused"), 0, "refused, said");
	}
	ASSERT_EQ(failed, l->same_target ? REQUESTS : REQUESTS / FAIL_MOD,
		  "the backend's failures, passed up");
	truth__tally_trace(&tally, t, mark, &truth, 1, failed);
	printf("%s: calls tied by id %lld, by relay %lld, by node %lld; tied to none %lld, "
	       "ambiguous %lld (the session's so far)\n",
	       l->name, claimd_status_count(h, "calls_tied_by_id", true),
	       claimd_status_count(h, "calls_tied_by_relay", true),
	       claimd_status_count(h, "calls_tied_by_node", true),
	       claimd_status_count(h, "calls_tie_none", true),
	       claimd_status_count(h, "calls_tie_ambiguous", true));
	if (!l->same_target) {
		struct json_object *e = claimd_edge(h, l->name, back->name);
		bool tied = l->named || (strcmp(l->mode, "multiplexed") && !l->later_untied);

		printf("%s -> %s: %lld calls, %lld callee failures, %lld both failed, class %s\n",
		       l->name, back->name, j_int(e, "calls"), j_int(e, "callee_failures"),
		       j_int(e, "both_failed"), j_str(e, "class"));
		ASSERT_EQ(j_int(e, "calls"), l->calls * REQUESTS, "every call on its edge");
		/* Each failed call of a request counted once for it; untied, once each. */
		ASSERT_EQ(j_int(e, "callee_failures"), tied ? failed : l->calls * failed,
			  "every callee failure");
		/* Judged requests teach their edge: each right verdict is one both failed. */
		ASSERT_EQ(j_int(e, "both_failed"), tally.right,
			  "both failed: the requests their calls were tied to");
		/* Learned from judged requests only: a few of them teach no class yet. */
		if (l->partial && !l->later_untied)
			ASSERT_NEQ(strcmp(j_str(e, "class"), "fail-open"), 0, "its class, if any");
		else
			ASSERT_STREQ(j_str(e, "class"), tied ? "fail-close" : "unknown",
				     "its class");
		json_object_put(e);
	}
	truth__expect(&tally, l->name, l->named ? failed : -1, l->named ? 0 : -1);
	ASSERT_EQ(tally.right + tally.unknown, failed, "every failure recorded");
	if (l->later_untied) {
		/* Each request's first call, written straight from its handler, is tied. */
		ASSERT_GE(claimd_status_count(h, "calls_tied_by_node", true) - node_before,
			  REQUESTS / 2, "first calls: tied");
		ASSERT_EQ(tally.right, 0, "a later call ties to none: every failure unknown");
	} else if (l->partial) {
		ASSERT_GT(claimd_status_count(h, "calls_tied_by_node", true), node_before,
			  "some calls tied");
	} else if (l->mode && strcmp(l->mode, "multiplexed")) {
		/* Tied: all but the first burst's (at most its 8 requests in flight, a few times). */
		ASSERT_GE(tally.right, failed / 2, "tied by what they carry: right");
		if (l->fresh)
			ASSERT_GE(claimd_status_count(h, "calls_tied_by_node", true) - node_before,
				  REQUESTS - THREADS,
				  "calls on new sockets: tied through their lineage");
	} else if (l->mode)
		/* Nothing ties: judged only if served alone before the first juggling. */
		ASSERT_LE(tally.right, THREADS, "nothing ties: no verdict after the first burst");
	else if (l->same_target)
		/* 8 in flight: calls fit several requests, and those tie to none. */
		ASSERT_GT(claimd_status_count(h, "calls_tie_ambiguous", true), ambiguous_before,
			  "ambiguous calls tied to none");
	{
		struct json_object *svcs =
			claimctl_json(h, (const char *const[]){ "services", NULL });

		for (i = 0; svcs && i < (int)json_object_array_length(svcs); i++) {
			struct json_object *sv = json_object_array_get_idx(svcs, i);

			if (strcmp(j_str(sv, "service"), l->name))
				continue;
			printf("%s: mode %s, %lld requests, %lld unknown\n", l->name,
			       j_str(sv, "mode"), j_int(sv, "requests"), j_int(sv, "unknown"));
			/* Said, not guessed: the process is marked, every request counted. */
			if (l->mode)
				ASSERT_STREQ(j_str(sv, "mode"), l->mode, "its mode");
			ASSERT_EQ(j_int(sv, "requests"), REQUESTS, "every request counted");
		}
		json_object_put(svcs);
	}
out:
	proc_stop(pid, 5000);
	/* Failed: what the proxy said (haproxy: how each request ended, its retries). */
	if (test__failed_now())
		file_print("the proxy's log", log);
}

void test_event_loops(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc back = { 0 };
	size_t i;

	if (!test__need_root())
		return;
	if (!svc_backend_session_start(&h, &t, &back, "elb", FAIL_MOD))
		for (i = 0; i < sizeof(loops) / sizeof(loops[0]); i++)
			if (test__start_subtest(loops[i].name))
				run(&h, &t, &back, &loops[i]);
	svc_backend_session_stop(&h, &t, &back);
}
