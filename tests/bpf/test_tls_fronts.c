// SPDX-License-Identifier: GPL-2.0
/*
 * Fronts calling their dependency over TLS through the libraries services
 * use: each failure is right, or `unknown` where claimd cannot read the
 * calls, never `claimed` for a failure passed up. A Python backend serves
 * HTTPS and fails every FAIL_MOD-th request on its own; each front passes
 * its failures up (502), so the truth of each of the front's failures is
 * `unclaimed`.
 *
 *  node_https, node_https_fresh, node_https_capped: a Node.js front
 *    (tests/peers/node_proxy.js --https) whose TLS is the OpenSSL linked
 *    into its executable, which exports it: claimd probes it there, and
 *    ties the calls by their async context, as over plain HTTP. A pooled
 *    keep-alive agent, an agent that opens (and shakes hands on) a new
 *    connection per call, and one capped at 2 sockets, queued requests
 *    handed another's. No connection is unseen; 0 wrong.
 *  java_https: a JDK front (tests/peers/java/ChainFront) over the JDK's own
 *    TLS, which claimd does not probe: its connections counted unseen
 *    (tls_connections_unseen), its HttpClient's bytes moved on threads
 *    serving no request (calls outside requests): every failure unknown.
 *  python_https: a Python front (tests/peers/chain_service.py
 *    --downstream-tls) over the shared libssl: every failure right.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"

#define FAIL_MOD 5
#define THREADS	 4
#define PER	 20
#define REQUESTS (THREADS * PER)

struct front {
	const char *name;
	pid_t pid;
	int port;
	bool unseen;   /* its TLS is a library claimd does not probe */
	int right_min; /* right verdicts at least */
	int unknown;   /* unknown verdicts exactly (-1: not checked) */
};

/* node_proxy.js named f->name calling the backend over HTTPS, trusting cert, with opt. 0 or -1. */
static int node_front_start(struct front *f, const struct claimd_h *h, const struct svc *back,
			    const char *cert, const char *opt)
{
	char script[H_PATH], ready[H_PATH], log[H_PATH], bport[16], ca[H_PATH + 16];
	char env[64];
	const char *argv[] = { "node", peer_script("node_proxy.js", script, sizeof(script)),
			       bport,  ready,
			       ca,     opt,
			       NULL };
	const char *envv[] = { env, NULL };

	snprintf(env, sizeof(env), "CLAIMD_SERVICE=%s", f->name);
	snprintf(bport, sizeof(bport), "%d", back->port);
	snprintf(ready, sizeof(ready), "%s/%s.ready", h->dir, f->name);
	snprintf(log, sizeof(log), "%s/%s.log", h->dir, f->name);
	snprintf(ca, sizeof(ca), "--https=%s", cert);
	f->pid = proc_spawn(argv, envv, log);
	if (!ASSERT_GT(f->pid, 0, "node front"))
		return -1;
	f->port = wait_ready_port(ready, 15000);
	return ASSERT_GT(f->port, 0, "ready, its port written") ? 0 : -1;
}

static bool edge_has_calls(struct json_object *e, void *ctx)
{
	return j_int(e, "calls") >= *(long long *)ctx;
}

/*
 * The front's failures against the truth: every one is the backend's,
 * passed up; where its TLS is read, every call on its edge.
 */
static void drive(struct claimd_h *h, struct trace_cap *t, const struct front *f,
		  const struct svc *back)
{
	const struct truth_svc truth = { .service = f->name,
					 .verdict = "unclaimed",
					 .cause = back->name,
					 .target = "/r/%d",
					 .ids = REQUESTS,
					 .mod = FAIL_MOD };
	struct truth_tally tally = { 0 };
	static int status[REQUESTS];
	long long unseen_before = claimd_status_count(h, "tls_connections_unseen", true), unseen;
	size_t mark = trace_mark(t);
	int i, failed = 0;

	if (load_client_run(h->dir, f->port, THREADS, PER, NULL, status, REQUESTS))
		return;
	for (i = 0; i < REQUESTS; i++)
		failed += status[i] >= 500;
	ASSERT_EQ(failed, REQUESTS / FAIL_MOD, "the backend's failures, passed up");
	truth__tally_trace(&tally, t, mark, &truth, 1, failed);
	unseen = claimd_status_count(h, "tls_connections_unseen", true) - unseen_before;
	printf("%s: tls_connections_unseen +%lld; requests_with_opaque_calls %lld, "
	       "calls_tied_by_node %lld (the session's)\n",
	       f->name, unseen, claimd_status_count(h, "requests_with_opaque_calls", true),
	       claimd_status_count(h, "calls_tied_by_node", true));
	if (f->unseen)
		ASSERT_GT(unseen, 0, "its TLS connections counted unseen");
	else
		ASSERT_EQ(unseen, 0, "none unseen: its OpenSSL is probed");
	if (!f->unseen) {
		long long calls = REQUESTS;
		struct json_object *e =
			claimd_settled_edge(h, f->name, back->name, edge_has_calls, &calls, 10000);

		if (ASSERT_OK_PTR(e, "its edge")) {
			printf("%s -> %s: %lld calls, %lld callee failures, %lld both failed\n",
			       f->name, back->name, j_int(e, "calls"), j_int(e, "callee_failures"),
			       j_int(e, "both_failed"));
			ASSERT_EQ(j_int(e, "calls"), calls, "every call on its edge");
			json_object_put(e);
		}
	}
	truth__expect(&tally, f->name, -1, f->unknown);
	ASSERT_GE(tally.right, f->right_min, "right verdicts");
	ASSERT_EQ(tally.right + tally.unknown, failed, "every failure recorded");
}

static void node(struct claimd_h *h, struct trace_cap *t, const struct svc *back, const char *cert,
		 struct front *f, const char *opt)
{
	if (!node_front_start(f, h, back, cert, opt))
		drive(h, t, f, back);
	if (f->pid > 0)
		proc_stop(f->pid, 5000);
}

void test_tls_fronts(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc back = { 0 }, py = { 0 };
	char cert[H_PATH], key[H_PATH], pair[2 * H_PATH + 2];
	/* Tied by their async context: all but the first burst's, as over plain HTTP. */
	struct front pooled = { .name = "node_https",
				.right_min = REQUESTS / FAIL_MOD / 2,
				.unknown = -1 },
		     fresh = { .name = "node_https_fresh", .unknown = -1 },
		     capped = { .name = "node_https_capped", .unknown = -1 };

	if (!test__need_root())
		return;
	if (claimd_traced_start(&h, &t, NULL))
		goto out;
	snprintf(cert, sizeof(cert), "%s/cert.pem", h.dir);
	snprintf(key, sizeof(key), "%s/key.pem", h.dir);
	snprintf(pair, sizeof(pair), "%s,%s", cert, key);
	if (!ASSERT_OK(tls_cert_make(cert, key), "certificate") ||
	    !ASSERT_OK(svc_start(&back,
				 &(struct svc_spec){ .name = "tlsback",
						     .fail_mod = FAIL_MOD,
						     .keepalive = true,
						     .tls = pair },
				 h.dir),
		       "HTTPS backend"))
		goto out;
	if (test__start_subtest("node_https"))
		node(&h, &t, &back, cert, &pooled, NULL);
	if (test__start_subtest("node_https_fresh"))
		node(&h, &t, &back, cert, &fresh, "--fresh");
	if (test__start_subtest("node_https_capped"))
		node(&h, &t, &back, cert, &capped, "--max-sockets=2");
	if (test__start_subtest("java_https")) {
		struct front j = { .name = "jfront_https",
				   .unseen = true,
				   .unknown = REQUESTS / FAIL_MOD };
		char log[H_PATH];

		snprintf(log, sizeof(log), "%s/jfront_https.log", h.dir);
		j.pid = java_front_start(&j.port, back.port, cert, j.name, log);
		if (ASSERT_GT(j.pid, 0, "Java front")) {
			claimd_programs_settle();
			drive(&h, &t, &j, &back);
			proc_stop(j.pid, 5000);
		}
	}
	if (test__start_subtest("python_https") &&
	    ASSERT_OK(svc_start(&py,
				&(struct svc_spec){ .name = "py_https",
						    .downstream = back.port,
						    .keepalive = true,
						    .down_tls = cert },
				h.dir),
		      "Python front")) {
		struct front p = { .name = "py_https",
				   .pid = py.pid,
				   .port = py.port,
				   .right_min = REQUESTS / FAIL_MOD,
				   .unknown = 0 };

		drive(&h, &t, &p, &back);
	}
out:
	svc_stop(&py);
	svc_stop(&back);
	claimd_traced_stop(&h, &t);
}
