// SPDX-License-Identifier: GPL-2.0
/*
 * A dependency called over TLS that claimd's probes do not decipher: the
 * calls are not seen, so a failure passed up from one must be `unknown`
 * (opaque-call), never `claimed`. A Python backend serves HTTPS and fails
 * every FAIL_MOD-th request on its own; a front passes its failures up
 * (502), so the truth of each of the front's failures is `unclaimed`.
 *
 *  node_https: a Node.js front (tests/peers/node_proxy.js --https) whose TLS
 *    is the OpenSSL linked into its executable, which claimd does not
 *    probe: its connection to the backend is counted unseen
 *    (tls_connections_unseen), every failure unknown, none wrong.
 *  java_https: a JDK front (tests/peers/java/ChainFront) over the JDK's own
 *    TLS, its HttpClient moving the bytes on threads serving no request:
 *    calls outside requests, every failure unknown, none wrong.
 *  python_https: a Python front (tests/peers/chain_service.py
 *    --downstream-tls) over the shared libssl claimd probes: its calls are
 *    seen, every failure right, and no connection is counted unseen.
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
};

/* node_proxy.js calling the backend over HTTPS, trusting cert. 0 or -1. */
static int node_front_start(struct front *f, const struct claimd_h *h, const struct svc *back,
			    const char *cert)
{
	char script[H_PATH], ready[H_PATH], log[H_PATH], bport[16], ca[H_PATH + 16], pbuf[16];
	const char *argv[] = { "node", peer_script("node_proxy.js", script, sizeof(script)),
			       bport,  ready,
			       ca,     NULL };
	const char *envv[] = { "CLAIMD_SERVICE=node_https", NULL };

	snprintf(bport, sizeof(bport), "%d", back->port);
	snprintf(ready, sizeof(ready), "%s/node_https.ready", h->dir);
	snprintf(log, sizeof(log), "%s/node_https.log", h->dir);
	snprintf(ca, sizeof(ca), "--https=%s", cert);
	f->pid = proc_spawn(argv, envv, log);
	if (!ASSERT_GT(f->pid, 0, "node front") || !ASSERT_OK(wait_file(ready, 15000), "ready") ||
	    !ASSERT_GT(read_file(ready, pbuf, sizeof(pbuf)), 0, "its port"))
		return -1;
	f->port = atoi(pbuf);
	claimd_programs_settle();
	return 0;
}

/*
 * The front's failures against the truth: every one is the backend's,
 * passed up. unseen: the front's TLS is not deciphered, so each is unknown.
 */
static void drive(struct claimd_h *h, struct trace_cap *t, const struct front *f,
		  const struct svc *back, bool unseen)
{
	const struct truth_svc truth = { .service = f->name,
					 .verdict = "unclaimed",
					 .cause = back->name,
					 .target = "/r/%d",
					 .ids = REQUESTS,
					 .mod = FAIL_MOD };
	struct truth_tally tally = { 0 };
	static int status[REQUESTS];
	long long unseen_before = claimd_status_count(h, "tls_connections_unseen", true);
	size_t mark = trace_mark(t);
	int i, failed = 0;

	if (load_client_run(h->dir, f->port, THREADS, PER, NULL, status, REQUESTS))
		return;
	for (i = 0; i < REQUESTS; i++)
		failed += status[i] >= 500;
	ASSERT_EQ(failed, REQUESTS / FAIL_MOD, "the backend's failures, passed up");
	truth__tally_trace(&tally, t, mark, &truth, 1, failed);
	printf("%s: tls_connections_unseen +%lld, opaque ingresses %lld (the session's)\n", f->name,
	       claimd_status_count(h, "tls_connections_unseen", true) - unseen_before,
	       claimd_status_count(h, "requests_with_opaque_calls", true));
	if (unseen) {
		ASSERT_GT(claimd_status_count(h, "tls_connections_unseen", true), unseen_before,
			  "its TLS connections counted unseen");
		truth__expect(&tally, f->name, 0, failed);
	} else {
		ASSERT_EQ(claimd_status_count(h, "tls_connections_unseen", true), unseen_before,
			  "none unseen: its OpenSSL is probed");
		truth__expect(&tally, f->name, failed, 0);
	}
}

void test_tls_unseen(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc back = { 0 }, py = { 0 };
	struct front f = { .name = "node_https" };
	char cert[H_PATH], key[H_PATH], pair[2 * H_PATH + 2];

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
	if (test__start_subtest("node_https") && !node_front_start(&f, &h, &back, cert))
		drive(&h, &t, &f, &back, true);
	if (test__start_subtest("java_https")) {
		struct front j = { .name = "jfront_https" };
		char log[H_PATH];

		snprintf(log, sizeof(log), "%s/jfront_https.log", h.dir);
		j.pid = java_front_start(&j.port, back.port, cert, j.name, log);
		if (ASSERT_GT(j.pid, 0, "Java front")) {
			claimd_programs_settle();
			drive(&h, &t, &j, &back, true);
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
		struct front p = { .name = "py_https", .pid = py.pid, .port = py.port };

		drive(&h, &t, &p, &back, false);
	}
out:
	if (f.pid > 0)
		proc_stop(f.pid, 5000);
	svc_stop(&py);
	svc_stop(&back);
	claimd_traced_stop(&h, &t);
}
