// SPDX-License-Identifier: GPL-2.0
/*
 * A JDK service, end to end: tests/peers/java/ChainFront (the JDK's
 * HttpServer on a pool of eight threads, CLAIMD_SERVICE=jfront) calls a
 * Python backend (jbe, failing every fifth id) with java.net.http's
 * HttpClient, whose I/O runs on threads of its own: its calls are made by
 * threads serving no request. 200 requests from four client threads:
 *  - the edge jfront -> jbe counts every call, 200, and every callee
 *    failure, 40, tied to a request or not (and any call the JDK's client
 *    retried on a pooled connection that failed under it: a call made,
 *    failed, seen in the trace); its class is taught only by
 *    requests whose calls claimd followed whole (both_failed <=
 *    tied_failures);
 *  - no root edge for the Java process (under its name or its command);
 *  - jfront's failed requests are right or unknown (untied-call), never
 *    wrong; jbe's are claimed.
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

#define CLIENTS	   4
#define PER_CLIENT 50
#define TOTAL	   (CLIENTS * PER_CLIENT)
#define FAIL_MOD   5
#define FAILURES   (TOTAL / FAIL_MOD)
#define JAVA_NAME  "jfront"

/* load_client.py: CLIENTS threads, PER_CLIENT requests each; the failures, or -1. */
static int load(const char *dir, int port)
{
	int status[TOTAL], id, failed = 0;

	if (load_client_run(dir, port, CLIENTS, PER_CLIENT, NULL, status, TOTAL))
		return -1;
	for (id = 0; id < TOTAL; id++) {
		failed += status[id] >= 500 || status[id] == 0;
		/* The truth: jbe fails every fifth id, jfront passes that up. */
		ASSERT_EQ(status[id], id % FAIL_MOD ? 200 : 502, "an answer as the truth says");
	}
	return failed;
}

/* jfront's calls in the trace: outside requests or in a request's log, by how they ended. */
struct call_tally {
	int outside, tied, ok, failed_503, odd, late, pending, transport, retry;
	char text[256]; /* the same, said */
};

static void call_tally_add(struct call_tally *c, struct json_object *eg, bool tied)
{
	long long st = j_int(eg, "status");

	c->tied += tied;
	c->outside += !tied;
	c->late += j_bool(eg, "late");
	c->pending += j_bool(eg, "pending");
	c->transport += j_bool(eg, "transport_failure");
	c->retry += j_bool(eg, "retry");
	if (st == 200) {
		c->ok++;
	} else if (st == 503) {
		c->failed_503++;
	} else {
		printf("odd call (%s): %s\n", tied ? "in a request" : "outside requests",
		       json_object_to_json_string(eg));
		c->odd++;
	}
}

/*
 * jfront's calls, from the trace, tallied. The JDK's client retries a GET
 * whose pooled connection failed before any answer: a call it really made,
 * a transport failure (an odd call: neither a 200 nor jbe's own 503),
 * counted on the edge as any other (a call counted twice would leave no
 * such record).
 */
static struct call_tally calls_traced(const struct trace_cap *t)
{
	struct json_object *all = trace_read(t);
	struct call_tally c = { 0 };
	size_t k, i;

	for (k = 0; all && k < json_object_array_length(all); k++) {
		struct json_object *o = json_object_array_get_idx(all, k), *eg = j_get(o, "egress");
		const char *type = j_str(o, "type");

		if (!strcmp(type, "egress") && !strcmp(j_str(o, "caller"), JAVA_NAME))
			call_tally_add(&c, eg, false);
		if (!strcmp(type, "ingress") && !strcmp(j_str(o, "service"), JAVA_NAME))
			for (i = 0; eg && i < json_object_array_length(eg); i++)
				call_tally_add(&c, json_object_array_get_idx(eg, i), true);
	}
	json_object_put(all);
	snprintf(c.text, sizeof(c.text),
		 "%s's calls traced: %d outside requests, %d in a request's log; %d answered 200, "
		 "%d 503, %d odd; %d late, %d pending, %d transport failures, %d retries",
		 JAVA_NAME, c.outside, c.tied, c.ok, c.failed_503, c.odd, c.late, c.pending,
		 c.transport, c.retry);
	printf("%s\n", c.text);
	return c;
}

/*
 * The edge did not count what the trace shows: what claimd saw, for the
 * log's end. Then whether claimd's read of every counter (at most
 * FULL_READ_MS apart) brings the edge up to the trace: a count missed by
 * the reads of the changed ones, not by the kernel.
 */
#define FULL_READ_MS 35000

static void explain_miscount(const struct claimd_h *h, const struct call_tally *c,
			     struct json_object *e)
{
	long long calls = j_int(e, "calls"), failures = j_int(e, "callee_failures");
	long long end = now_ms() + FULL_READ_MS;
	struct json_object *later = NULL;

	test__why("edge %s -> jbe: calls %lld, callee failures %lld, tied failures %lld", JAVA_NAME,
		  calls, failures, j_int(e, "tied_failures"));
	test__why("%s", c->text);
	claimd_losses_explain(h);
	claimd_edges_explain(h, JAVA_NAME, "jbe");
	while (now_ms() < end) {
		json_object_put(later);
		later = claimd_edge(h, JAVA_NAME, "jbe");
		if (j_int(later, "calls") != calls || j_int(later, "callee_failures") != failures)
			break;
		sleep_ms(1000);
	}
	test__why("%.0f s on: calls %lld, callee failures %lld",
		  (FULL_READ_MS - (end - now_ms())) / 1000.0, j_int(later, "calls"),
		  j_int(later, "callee_failures"));
	json_object_put(later);
}

static bool edge_done(struct json_object *e, void *ctx)
{
	(void)ctx;
	return j_int(e, "calls") >= TOTAL && j_int(e, "callee_failures") >= FAILURES;
}

void test_java_httpclient(void)
{
	/* Kept alive: the JDK pools its connections (an HTTP/1.0 answer's may close under it). */
	struct svc_spec be_spec = {
		.name = "jbe", .fail_mod = FAIL_MOD, .fail_rem = 0, .keepalive = true
	};
	const struct truth_svc shape = { .target = "/r/%d", .ids = TOTAL, .mod = FAIL_MOD };
	const char *const names[2] = { JAVA_NAME, "jbe" };
	struct json_object *e = NULL;
	struct truth_tally tally = { 0 };
	struct truth_svc truth[2];
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc be = { 0 };
	char log[H_PATH];
	pid_t java = -1, pids[2];
	int port, failed;

	if (!test__need_root())
		return;
	if (!ASSERT_OK(claimd_start(&h, NULL), "claimd start") ||
	    !ASSERT_OK(trace_start(&t, &h), "trace") ||
	    !ASSERT_OK(svc_start(&be, &be_spec, h.dir), "backend"))
		goto out;
	snprintf(log, sizeof(log), "%s/java.log", h.dir);
	java = java_front_start(&port, be.port, NULL, JAVA_NAME, log);
	if (!ASSERT_GT(java, 0, "the Java service"))
		goto out;
	failed = load(h.dir, port);
	if (!ASSERT_EQ(failed, FAILURES, "jfront's failures"))
		goto out;

	e = claimd_settled_edge(&h, JAVA_NAME, "jbe", edge_done, NULL, 15000);
	if (ASSERT_OK_PTR(e, "edge " JAVA_NAME " -> jbe")) {
		printf("edge %s -> jbe: calls %lld, callee_failures %lld, tied_failures %lld, "
		       "both_failed %lld, retries %lld, class %s\n",
		       JAVA_NAME, j_int(e, "calls"), j_int(e, "callee_failures"),
		       j_int(e, "tied_failures"), j_int(e, "both_failed"), j_int(e, "retries"),
		       j_str(e, "class"));
		struct call_tally c = calls_traced(&t);

		if (j_int(e, "calls") != TOTAL + c.odd ||
		    j_int(e, "callee_failures") != FAILURES + c.odd)
			explain_miscount(&h, &c, e);
		ASSERT_EQ(j_int(e, "calls"), TOTAL + c.odd, "edge: every call");
		ASSERT_EQ(j_int(e, "callee_failures"), FAILURES + c.odd,
			  "edge: every callee failure");
		ASSERT_LE(j_int(e, "both_failed"), j_int(e, "tied_failures"),
			  "edge: both_failed only among the requests that teach");
		ASSERT_FALSE(j_bool(e, "root"), "edge: a service's");
	}
	json_object_put(e);
	e = claimd_edge_of_kind(&h, JAVA_NAME, "jbe", 1);
	ASSERT_TRUE(e == NULL, "no root edge under the service's name");
	json_object_put(e);
	e = claimd_edge_of_kind(&h, "java", "jbe", -1);
	ASSERT_TRUE(e == NULL, "no edge under the command's name");

	pids[0] = java;
	pids[1] = be.pid;
	truth__chain(truth, 2, &shape, pids, names);
	truth__tally_trace(&tally, &t, 0, truth, 2, 2 * FAILURES);
	/* jbe's 40 claimed; jfront's 40 unclaimed or unknown (untied-call), none wrong. */
	truth__expect(&tally, "java", -1, -1);
	ASSERT_EQ(tally.right + tally.unknown, 2 * FAILURES, "every failure judged");
	ASSERT_GE(tally.right, FAILURES, "jbe's at least right");
out:
	json_object_put(e);
	if (java > 0)
		proc_stop(java, 5000);
	svc_stop(&be);
	claimd_traced_stop(&h, &t);
}
