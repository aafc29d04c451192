// SPDX-License-Identifier: GPL-2.0
/*
 * Node.js's tier (bpf/node.bpf.h) where a context outlives its request:
 * a call written by a timer an answered request began, while the next
 * request of the same kept-alive connection is open, is no call of that
 * next request. Its context's trigger is the connection's parser, as the
 * next request's contexts' are; its id is older than that request's first
 * parse, and so it is tied to none (node_calls_stale): the next request,
 * failing on its own, is judged claimed or unknown, never unclaimed.
 * (tests/peers/node_late.js: /late/<id> answers at once and calls 30 ms
 * later; /fail/<id> fails on its own after 100 ms.)
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

#define CONNS 4
#define PAIRS 5 /* a late request, then one failing on its own, on each connection */

/* One request on fd, its answer read to the end of want (its body): 0 or -1. */
static int ask(int fd, const char *path, const char *want)
{
	char req[128], buf[1024];

	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: late\r\n\r\n", path);
	if (sock_send(fd, req))
		return -1;
	return sock_recv_until(fd, buf, sizeof(buf), want, 1) > 0 ? 0 : -1;
}

static bool edge_has_calls(struct json_object *e, void *ctx)
{
	return j_int(e, "calls") >= *(long long *)ctx;
}

static void stale_timer(struct claimd_h *h, struct trace_cap *t, const struct svc *back)
{
	/* Each /fail/<id> fails on its own, calling nothing. */
	const struct truth_svc truth = { .service = "node_late",
					 .verdict = "claimed",
					 .cause = "",
					 .target = "/fail/%d",
					 .ids = CONNS * PAIRS };
	struct truth_tally tally = { 0 };
	size_t mark = trace_mark(t);
	char buf[H_PATH], ready[H_PATH], log[H_PATH], bport[16], path[32];
	const char *argv[] = { "node", peer_script("node_late.js", buf, sizeof(buf)), bport, ready,
			       NULL };
	const char *envv[] = { "CLAIMD_SERVICE=node_late", NULL };
	long long stale_before = claimd_status_count(h, "node_calls_stale", true),
		  calls = CONNS * PAIRS;
	struct json_object *e, *s;
	int c, i, fd, port;
	pid_t pid;

	snprintf(bport, sizeof(bport), "%d", back->port);
	snprintf(ready, sizeof(ready), "%s/node_late.ready", h->dir);
	snprintf(log, sizeof(log), "%s/node_late.log", h->dir);
	pid = proc_spawn(argv, envv, log);
	if (!ASSERT_GT(pid, 0, "node_late") ||
	    !ASSERT_GT(port = wait_ready_port(ready, 15000), 0, "ready, its port written"))
		goto out;
	for (c = 0; c < CONNS; c++) {
		fd = sock_connect(port);
		if (!ASSERT_GE(fd, 0, "connect"))
			goto out;
		for (i = 0; i < PAIRS; i++) {
			snprintf(path, sizeof(path), "/late/%d", c * PAIRS + i);
			if (!ASSERT_OK(ask(fd, path, "late\n"), path))
				break;
			snprintf(path, sizeof(path), "/fail/%d", c * PAIRS + i);
			if (!ASSERT_OK(ask(fd, path, "fail\n"), path))
				break;
		}
		close(fd);
	}
	truth__tally_trace(&tally, t, mark, &truth, 1, (int)calls);
	/* Claimed where nothing else ran, or unknown for the call it cannot place; never wrong. */
	truth__expect(&tally, "node_late", -1, -1);
	ASSERT_EQ(tally.right + tally.unknown, calls, "every failure recorded");
	e = claimd_settled_edge(h, "node_late", back->name, edge_has_calls, &calls, 10000);
	if (ASSERT_OK_PTR(e, "the late calls on their edge")) {
		printf("node_late -> %s: %lld calls, %lld callee failures, %lld both failed\n",
		       back->name, j_int(e, "calls"), j_int(e, "callee_failures"),
		       j_int(e, "both_failed"));
		ASSERT_EQ(j_int(e, "calls"), calls, "every late call counted");
		ASSERT_EQ(j_int(e, "both_failed"), 0, "none taken for a failing request's");
		json_object_put(e);
	}
	printf("node_calls_stale: %lld\n",
	       claimd_status_count(h, "node_calls_stale", true) - stale_before);
	ASSERT_EQ(claimd_status_count(h, "node_calls_stale", true) - stale_before, calls,
		  "each written in an answered request's timer: stale");
	s = claimd_service(h, "node_late");
	if (ASSERT_OK_PTR(s, "the service")) {
		printf("node_late: %lld requests, %lld failures: %lld claimed, %lld unclaimed, "
		       "%lld "
		       "unknown\n",
		       j_int(s, "requests"), j_int(s, "failures"), j_int(s, "claimed"),
		       j_int(s, "unclaimed"), j_int(s, "unknown"));
		ASSERT_EQ(j_int(s, "requests"), 2 * calls, "every request counted");
		ASSERT_EQ(j_int(s, "failures"), calls, "every own failure counted");
		ASSERT_EQ(j_int(s, "unclaimed"), 0, "no failure blamed on another request's call");
		ASSERT_EQ(j_int(s, "claimed") + j_int(s, "unknown"), calls,
			  "claimed, or unknown for the call it cannot place");
		json_object_put(s);
	}
out:
	proc_stop(pid, 5000);
}

void test_node_contexts(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc back = { 0 };

	if (!test__need_root())
		return;
	if (!svc_backend_session_start(&h, &t, &back, "nlb", 5) &&
	    test__start_subtest("stale_timer"))
		stale_timer(&h, &t, &back);
	svc_backend_session_stop(&h, &t, &back);
}
