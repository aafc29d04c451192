// SPDX-License-Identifier: GPL-2.0
/*
 * Explicit request context, with a real event loop: a single-threaded epoll
 * proxy (tests/peers/epoll_service.c) serves 8 concurrent clients, each of
 * its requests a call to a slow Python backend that fails every fifth id,
 * so many requests are in flight on its one thread. It calls libclaim's
 * claim_context_enter/leave around the work for each request; claimd's
 * uprobes on them keep the calls apart. Every request must have exactly its
 * own call, its status must follow from that call, its failures must be
 * unclaimed and caused by the backend, and the service must not count as
 * multiplexed. Without the context calls, the same proxy is flagged
 * multiplexed and gets no confident verdict.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"

#define THREADS	 8
#define REQUESTS 40

struct pid_match {
	pid_t pid;
};

static bool match_pid(struct json_object *o, void *arg)
{
	struct pid_match *m = arg;

	return !strcmp(j_str(o, "type"), "ingress") && j_int(o, "pid") == m->pid;
}

static pid_t proxy_start(struct claimd_h *h, int down, bool with_context, int *port)
{
	char exe[H_PATH], ready[H_PATH], dport[16], env[H_PATH + 32], buf[32];
	const char *argv[] = { exe, "-d", dport, "-r", ready, with_context ? NULL : "-n", NULL };
	const char *envv[] = { env, "CLAIMD_SERVICE=ctxproxy", NULL };
	pid_t pid;

	snprintf(exe, sizeof(exe), "%s/tests/epoll_service", test__build_dir());
	snprintf(ready, sizeof(ready), "%s/proxy.%d.ready", h->dir, with_context);
	snprintf(dport, sizeof(dport), "%d", down);
	snprintf(env, sizeof(env), "CLAIMD_VERDICTS=%s/verdicts", h->pin);
	pid = proc_spawn(argv, envv, NULL);
	if (pid <= 0 || wait_file(ready, 10000) || read_file(ready, buf, sizeof(buf)) <= 0)
		return -1;
	*port = atoi(buf);
	return pid;
}

static int drive(struct claimd_h *h, int port, const char *tag)
{
	char script[H_PATH], p[16], out[H_PATH], threads[8], requests[8];
	const char *argv[] = { "python3",    script,   "--port", p,   "--threads", threads,
			       "--requests", requests, "--out",	 out, NULL };
	pid_t pid;

	peer_script("load_client.py", script, sizeof(script));
	snprintf(p, sizeof(p), "%d", port);
	snprintf(out, sizeof(out), "%s/client-%s.json", h->dir, tag);
	snprintf(threads, sizeof(threads), "%d", THREADS);
	snprintf(requests, sizeof(requests), "%d", REQUESTS);
	pid = proc_spawn(argv, NULL, NULL);
	return proc_wait(pid, 120000);
}

static struct json_object *ingresses_of(struct trace_cap *t, pid_t pid, int n)
{
	struct pid_match m = { pid };
	struct json_object *all, *out = json_object_new_array();
	size_t i;

	trace_wait(t, match_pid, &m, n, 20000);
	all = trace_read(t);
	for (i = 0; i < json_object_array_length(all); i++) {
		struct json_object *o = json_object_array_get_idx(all, i);

		if (match_pid(o, &m))
			json_object_array_add(out, json_object_get(o));
	}
	json_object_put(all);
	return out;
}

/*
 * The verdicts of a run (the lines from mark on) against the truth: the
 * backend's failures (every fifth id) are its own, the proxy's are the
 * backend's, passed up.
 */
static void check_verdicts(const struct trace_cap *t, size_t mark, pid_t proxy,
			   const struct svc *down, int right, int unknown, const char *what)
{
	const struct truth_svc shape = { .target = "/r/%d", .ids = THREADS * REQUESTS, .mod = 5 };
	const pid_t pids[2] = { proxy, down->pid };
	const char *const names[2] = { "ctxproxy", down->name };
	struct truth_tally tally = { 0 };
	struct truth_svc truth[2];

	truth__chain(truth, 2, &shape, pids, names);
	truth__tally_trace(&tally, t, mark, truth, 2, right + unknown);
	truth__expect(&tally, what, right, unknown);
}

static void with_context(struct claimd_h *h, struct trace_cap *t, const struct svc *down)
{
	struct json_object *in = NULL, *st = NULL;
	int port, own = 0, consistent = 0, failed = 0, flagged = 0;
	const char *args[] = { "status", NULL };
	size_t i, mark = trace_mark(t);
	pid_t pid = proxy_start(h, down->port, true, &port);

	if (!ASSERT_GT(pid, 0, "proxy start"))
		return;
	st = claimctl_json(h, args);
	ASSERT_GE(j_int(st, "context_files"), 1, "claimd probes the proxy's libclaim");
	ASSERT_EQ(drive(h, port, "ctx"), 0, "clients");
	in = ingresses_of(t, pid, THREADS * REQUESTS);
	for (i = 0; i < json_object_array_length(in); i++) {
		struct json_object *o = json_object_array_get_idx(in, i);
		struct json_object *eg = j_get(o, "egress"), *e;
		long long status = j_int(o, "status");

		flagged += json_object_array_length(j_get(o, "flags")) != 0;
		if (json_object_array_length(eg) != 1)
			continue;
		e = json_object_array_get_idx(eg, 0);
		own += !strcmp(j_str(e, "callee"), "ctxdown") &&
		       j_int(e, "start_ns") >= j_int(o, "start_ns") &&
		       j_int(e, "end_ns") <= j_int(o, "end_ns");
		consistent += (status == 502) == (j_int(e, "status") >= 500);
		failed += status >= 500;
	}
	printf("with context: %zu requests, %d with exactly their call, %d consistent, %d "
	       "failed, %d flagged\n",
	       json_object_array_length(in), own, consistent, failed, flagged);
	ASSERT_EQ(json_object_array_length(in), THREADS * REQUESTS, "requests seen");
	ASSERT_EQ(own, THREADS * REQUESTS, "each with exactly its own call");
	ASSERT_EQ(consistent, THREADS * REQUESTS, "statuses follow the calls");
	ASSERT_EQ(failed, THREADS * REQUESTS / 5, "every fifth failed");
	/* The proxy's failures unclaimed, caused by the backend; the backend's claimed. */
	check_verdicts(t, mark, pid, down, 2 * THREADS * REQUESTS / 5, 0, "with context");
	ASSERT_EQ(flagged, 0, "no request flagged multiplexed");
	json_object_put(in);
	json_object_put(st);
	proc_stop(pid, 2000);
}

static void without_context(struct claimd_h *h, struct trace_cap *t, const struct svc *down)
{
	struct json_object *in = NULL;
	int port, confident = 0;
	size_t i, mark = trace_mark(t);
	pid_t pid = proxy_start(h, down->port, false, &port);

	if (!ASSERT_GT(pid, 0, "proxy start"))
		return;
	ASSERT_EQ(drive(h, port, "noctx"), 0, "clients");
	in = ingresses_of(t, pid, THREADS * REQUESTS);
	for (i = 0; i < json_object_array_length(in); i++) {
		struct json_object *o = json_object_array_get_idx(in, i);
		const char *v = j_str(o, "verdict");

		confident += !strcmp(v, "claimed") || !strcmp(v, "unclaimed");
	}
	ASSERT_EQ(json_object_array_length(in), THREADS * REQUESTS, "requests counted");
	ASSERT_EQ(confident, 0, "no confident verdict without the context");
	/* The proxy's failures unknown; the backend's still claimed. */
	check_verdicts(t, mark, pid, down, THREADS * REQUESTS / 5, THREADS * REQUESTS / 5,
		       "without context");
	json_object_put(in);
	proc_stop(pid, 2000);
}

void test_explicit_context(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc down = { 0 };

	if (!test__need_root())
		return;
	if (claimd_traced_start(&h, &t, NULL))
		goto out;
	if (svc_start(&down, &(struct svc_spec){ .name = "ctxdown", .fail_mod = 5, .delay_ms = 20 },
		      h.dir))
		goto out;
	if (test__start_subtest("with_context"))
		with_context(&h, &t, &down);
	if (test__start_subtest("without_context"))
		without_context(&h, &t, &down);
out:
	svc_stop(&down);
	claimd_traced_stop(&h, &t);
}
