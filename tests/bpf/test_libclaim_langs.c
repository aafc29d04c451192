// SPDX-License-Identifier: GPL-2.0
/*
 * libclaim where services live, in each language it has a package for:
 *
 *  - python: a Flask service with python/libclaim's ClaimMiddleware
 *    (werkzeug's threaded server, requests to its backend), called by a
 *    client retrying through ClaimRetry (urllib3, requests);
 *  - python_handoff: the Flask service making its call from a pool of worker
 *    threads, which claimd cannot tie to the request: its passed-up
 *    failures carry no header (libclaim sees a call outside requests made
 *    while the request was open) and are unknown, its own claimed;
 *  - python_asgi: a Starlette application under uvicorn (one asyncio loop,
 *    one aiohttp ClientSession to its backend) with python/libclaim's
 *    ClaimASGIMiddleware, asked by the same client, then by 8 at once;
 *  - java: a JDK HttpServer service (8 handler threads, HttpURLConnection
 *    to its backend) with java/'s ClaimFilter, called by a client retrying
 *    through ClaimRetry (java.net.http.HttpClient);
 *  - go: a net/http service with go/claim's Handler (a goroutine per
 *    connection, the verdict read from its goroutine's slot), called by a
 *    Go client retrying through claim.Transport;
 *  - node: a Node.js service through node/'s listener().
 *
 * The backend fails every fifth id on its own (id % 5 == 0), which the
 * service passes up as 502; the service fails ids % 5 == 1 on its own
 * (500), before calling. What must hold: the passed-up failures say
 * unclaimed and are tried once, so the failing backend sees each call once
 * (its edge 80 calls, no more); the service's own failures say claimed and
 * are retried (4 attempts); claimd's recorded verdicts agree with that
 * truth, 0 wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_expect.h"
#include "harness.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"

#define REQUESTS 100
#define FAIL_MOD 5
#define ATTEMPTS 4 /* ClaimRetry(total=3): a claimed failure's tries */

/* A service's or a client's environment: the package, its C library, claimd's verdicts. */
struct lang_env {
	char path[H_PATH + 64], lib[H_PATH + 32], verdicts[H_PATH + 32], service[64],
		addon[H_PATH + 32];
	const char *envv[6];
};

static void lang_env_make(struct lang_env *e, const struct claimd_h *h, const char *service)
{
	snprintf(e->path, sizeof(e->path), "PYTHONPATH=%s/python:%s/tests/peers", test__top_dir(),
		 test__top_dir());
	snprintf(e->lib, sizeof(e->lib), "CLAIMD_LIBCLAIM=%s/libclaim.so", test__build_dir());
	snprintf(e->verdicts, sizeof(e->verdicts), "CLAIMD_VERDICTS=%s/verdicts", h->pin);
	snprintf(e->service, sizeof(e->service), "CLAIMD_SERVICE=%s", service);
	e->envv[0] = e->path;
	e->envv[1] = e->lib;
	e->envv[2] = e->verdicts;
	snprintf(e->addon, sizeof(e->addon), "CLAIMD_NODE_ADDON=%s/node/claim.node",
		 test__build_dir());
	e->envv[3] = e->service;
	e->envv[4] = e->addon;
	e->envv[5] = NULL;
}

/*
 * Each id's answer as the client saw it, against the truth: the count of
 * mismatches. handoff: the service's calls made by worker threads, so its
 * passed-up failures carry no header (libclaim cannot tie the call to the
 * request) and are tried twice (no header: at most one retry).
 */
static int check_answers(struct json_object *out, bool handoff, int *claimed, int *unclaimed)
{
	int i, bad = 0;

	for (i = 0; i < REQUESTS; i++) {
		char key[16];
		struct json_object *a;
		int want_status = i % FAIL_MOD == 0 ? 502 : i % FAIL_MOD == 1 ? 500 : 200;
		const char *want_claim = i % FAIL_MOD == 0   ? (handoff ? "" : "unclaimed")
					 : i % FAIL_MOD == 1 ? "claimed"
							     : "";
		int want_attempts = i % FAIL_MOD == 1		   ? ATTEMPTS
				    : i % FAIL_MOD == 0 && handoff ? 2
								   : 1;

		snprintf(key, sizeof(key), "%d", i);
		a = j_get(out, key);
		*claimed += !strcmp(j_str(a, "claim"), "claimed");
		*unclaimed += !strcmp(j_str(a, "claim"), "unclaimed");
		if (a && j_int(a, "status") == want_status &&
		    !strcmp(j_str(a, "claim"), want_claim) && j_int(a, "attempts") == want_attempts)
			continue;
		bad++;
		printf("id %d: status %lld, x-error-claim '%s', %lld attempts; the truth: %d, "
		       "'%s', "
		       "%d\n",
		       i, j_int(a, "status"), j_str(a, "claim"), j_int(a, "attempts"), want_status,
		       want_claim, want_attempts);
	}
	return bad;
}

/* Each language: its service and its client, as commands. */
struct lang {
	const char *name;
	const char *service; /* CLAIMD_SERVICE */
	/* argv of the service (backend port, ready file) and of the client (port) */
	void (*service_argv)(const char **argv, char *buf, size_t len, const char *bport,
			     const char *ready);
	void (*client_argv)(const char **argv, char *buf, size_t len, const char *port);
	bool loop; /* one event loop: asked again by 8 clients at once, requests interleaved */
	/* its calls made by worker threads: its passed-up failures unknown, no header */
	bool handoff;
};

/* A Python peer script serving with its backend at bport, its port to ready. */
static void py_service(const char **argv, char *buf, size_t len, const char *script,
		       const char *bport, const char *ready)
{
	const char *a[] = { "/usr/bin/python3",
			    peer_script(script, buf, len),
			    "--backend",
			    bport,
			    "--ready-file",
			    ready,
			    NULL };

	memcpy(argv, a, sizeof(a));
}

static void python_service(const char **argv, char *buf, size_t len, const char *bport,
			   const char *ready)
{
	py_service(argv, buf, len, "flask_claim_service.py", bport, ready);
}

static void asgi_service(const char **argv, char *buf, size_t len, const char *bport,
			 const char *ready)
{
	py_service(argv, buf, len, "asgi_claim_service.py", bport, ready);
}

static void python_handoff_service(const char **argv, char *buf, size_t len, const char *bport,
				   const char *ready)
{
	python_service(argv, buf, len, bport, ready);
	argv[6] = "--handoff";
	argv[7] = NULL;
}

static void python_client(const char **argv, char *buf, size_t len, const char *port)
{
	const char *a[] = { "/usr/bin/python3", peer_script("claim_client.py", buf, len), "--port",
			    port, NULL };

	memcpy(argv, a, sizeof(a));
}

/* The class path of the Java peers: their classes, libclaim's jar, JNA. */
static const char *java_cp(char *buf, size_t len)
{
	snprintf(buf, len, "%s/tests/java:%s/java/libclaim.jar:/usr/share/java/jna.jar",
		 test__build_dir(), test__build_dir());
	return buf;
}

static void java_service(const char **argv, char *buf, size_t len, const char *bport,
			 const char *ready)
{
	const char *a[] = { "java", "-cp", java_cp(buf, len), "ClaimService", bport, ready, NULL };

	memcpy(argv, a, sizeof(a));
}

static void java_client(const char **argv, char *buf, size_t len, const char *port)
{
	const char *a[] = { "java", "-cp", java_cp(buf, len), "ClaimClient", port, NULL };

	memcpy(argv, a, sizeof(a));
}

static void node_service(const char **argv, char *buf, size_t len, const char *bport,
			 const char *ready)
{
	static char pkg[H_PATH];
	const char *a[] = { "node", peer_script("node_claim_service.js", buf, len),
			    pkg,    bport,
			    ready,  NULL };

	snprintf(pkg, sizeof(pkg), "%s/node", test__top_dir());
	memcpy(argv, a, sizeof(a));
}

static const char *go_peer(char *buf, size_t len)
{
	snprintf(buf, len, "%s/tests/go/claimsvc", test__build_dir());
	return buf;
}

static void go_service(const char **argv, char *buf, size_t len, const char *bport,
		       const char *ready)
{
	const char *a[] = { go_peer(buf, len), "serve", "-backend", bport, "-ready", ready, NULL };

	memcpy(argv, a, sizeof(a));
}

static void go_client(const char **argv, char *buf, size_t len, const char *port)
{
	const char *a[] = { go_peer(buf, len), "client", "-port", port, NULL };

	memcpy(argv, a, sizeof(a));
}

static const struct lang langs[] = {
	{ "python", "pyflask", python_service, python_client, false, false },
	/* A worker pool calls: a passed-up failure's call is no thread's of its request. */
	{ "python_handoff", "pyhandoff", python_handoff_service, python_client, false, true },
	{ "python_asgi", "pyasgi", asgi_service, python_client, true, false },
	{ "java", "jvsvc", java_service, java_client, false, false },
	{ "go", "gosvc", go_service, go_client, false, false },
	/* Node's own client is not here yet: the Python one asks it. */
	{ "node", "nodesvc", node_service, python_client, true, false },
};

/*
 * The truth of l's service for ids 0 .. ids-1: the backend's failures
 * (id % 5 == 0) passed up, unclaimed with it as cause; its own (id % 5 ==
 * 1) claimed.
 */
static void lang_truth(struct truth_svc out[2], const struct lang *l, const struct svc *back,
		       int ids)
{
	int i;

	for (i = 0; i < 2; i++)
		out[i] = (struct truth_svc){ .service = l->service,
					     .verdict = i ? "claimed" : "unclaimed",
					     .cause = i ? "" : back->name,
					     .target = "/r/%d",
					     .ids = ids,
					     .mod = FAIL_MOD,
					     .rem = i };
}

/*
 * An event loop's service asked by 8 clients at once (ids 0 .. 199, each
 * once): requests interleave on its one thread, and each verdict must
 * still be its own.
 */
static void interleaved(struct claimd_h *h, struct trace_cap *t, const struct svc *back,
			const struct lang *l, int port)
{
	struct truth_tally tally = { 0 };
	struct truth_svc truth[2];
	static int status[200];
	size_t mark = trace_mark(t);
	char what[64];

	lang_truth(truth, l, back, 200);
	if (load_client_run(h->dir, port, 8, 25, NULL, status, 200))
		return;
	snprintf(what, sizeof(what), "%s, 8 clients at once", l->service);
	truth__tally_trace(&tally, t, mark, truth, 2, 80);
	truth__expect(&tally, what, 80, 0);
}

static void run(struct claimd_h *h, struct trace_cap *t, const struct svc *back,
		const struct lang *l)
{
	struct lang_env fe, ce;
	char buf[H_PATH * 2], cbuf[H_PATH * 2], ready[H_PATH], log[H_PATH], out[H_PATH], bport[16],
		fport[16];
	static char text[1 << 16];
	const char *argv[16];
	pid_t front = -1, cl = -1;
	struct json_object *answers = NULL;
	int claimed = 0, unclaimed = 0, wrong, fails = REQUESTS / FAIL_MOD;
	size_t mark;

	lang_env_make(&fe, h, l->service);
	snprintf(ready, sizeof(ready), "%s/%s.ready", h->dir, l->name);
	snprintf(log, sizeof(log), "%s/%s.log", h->dir, l->name);
	snprintf(bport, sizeof(bport), "%d", back->port);
	l->service_argv(argv, buf, sizeof(buf), bport, ready);
	front = proc_spawn(argv, fe.envv, log);
	if (!ASSERT_GT(front, 0, "service") || !ASSERT_OK(wait_file(ready, 30000), "service up") ||
	    !ASSERT_GT(read_file(ready, fport, sizeof(fport)), 0, "its port")) {
		read_file(log, text, sizeof(text));
		printf("the service's log:\n%s\n", text);
		goto out;
	}
	fport[strcspn(fport, "\n")] = 0;
	/* Its program read (a Go one probed) before it serves: none unread-program. */
	if (!ASSERT_TRUE(claimd_programs_read(h), "its program read"))
		goto out;
	mark = trace_mark(t);

	lang_env_make(&ce, h, "claimclient");
	snprintf(out, sizeof(out), "%s/%s-client.json", h->dir, l->name);
	l->client_argv(argv, cbuf, sizeof(cbuf), fport);
	cl = proc_spawn(argv, ce.envv, out);
	if (!ASSERT_GT(cl, 0, "client") || !ASSERT_EQ(proc_wait(cl, 120000), 0, "client done") ||
	    !ASSERT_GT(read_file(out, text, sizeof(text)), 0, "its answers"))
		goto out;
	cl = -1;
	answers = json_tokener_parse(text);
	if (!ASSERT_OK_PTR(answers, "answers as JSON"))
		goto out;
	wrong = check_answers(answers, l->handoff, &claimed, &unclaimed);
	printf("%s: x-error-claim claimed on %d answers, unclaimed on %d; %d answers wrong\n",
	       l->name, claimed, unclaimed, wrong);
	ASSERT_EQ(wrong, 0, "answers as the truth says");

	/*
	 * The failing backend called once per id the service served: no retry
	 * reached it, but the one a failure without a header earns (handoff:
	 * those calls tied to no request teach the edge no class).
	 */
	if (l->handoff)
		edge_expect(h, l->service, back->name,
			    &(struct edge_want){ REQUESTS, 2 * fails, 0, "unknown" }, l->name);
	else
		edge_expect(h, l->service, back->name,
			    &(struct edge_want){ REQUESTS - fails, fails, fails, "fail-close" },
			    l->name);
	{
		struct truth_svc truth[2];
		struct truth_tally tally = { 0 };
		int passed_up = l->handoff ? 2 * fails : fails;

		lang_truth(truth, l, back, REQUESTS);
		truth__tally_trace(&tally, t, mark, truth, 2, passed_up + fails * ATTEMPTS);
		/* handoff: the passed-up ones unknown (untied-call), the service's own claimed. */
		truth__expect(&tally, l->service,
			      l->handoff ? fails * ATTEMPTS : passed_up + fails * ATTEMPTS,
			      l->handoff ? passed_up : 0);
	}
	if (l->loop)
		interleaved(h, t, back, l, atoi(fport));
out:
	json_object_put(answers);
	if (cl > 0)
		proc_stop(cl, 2000);
	if (front > 0)
		proc_stop(front, 5000);
}

void test_libclaim_languages(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc back = { 0 };
	size_t i;

	if (!test__need_root())
		return;
	if (!svc_backend_session_start(&h, &t, &back, "lcb", FAIL_MOD))
		for (i = 0; i < sizeof(langs) / sizeof(langs[0]); i++)
			if (test__start_subtest(langs[i].name))
				run(&h, &t, &back, &langs[i]);
	svc_backend_session_stop(&h, &t, &back);
}
