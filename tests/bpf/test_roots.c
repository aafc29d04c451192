// SPDX-License-Identifier: GPL-2.0
/*
 * Root callers are edges, end to end, with real processes:
 * - curl --retry 3 against a service that always answers 503 (curl backs
 *   off 1, 2, 4 s, within claimd's 30 s retry window): the root edge
 *   curl -> service has 4 calls, 4 callee failures, 3 retries, no ratio
 *   and class unknown ("root": true); curl is a root of 'claimctl storm'
 *   (its path starts curl > service, 3 retries per first call: fan-out 4),
 *   a root node of 'claimctl graph --json', and /metrics carries its
 *   counters but no both_failed, ratio or class series;
 * - a Python batch job (CLAIMD_SERVICE=batchjob) calling 100 distinct
 *   targets of a service that fails 1 in 5: batchjob -> service, 100 calls,
 *   20 callee failures, 0 retries;
 * - a process holding a listener (a service's background job) calling 10
 *   times: a service, not a root caller. Its calls count on its service's
 *   edge bgjob -> rtBg (10 calls, "root": false, no both_failed), and as 10
 *   more calls_outside_requests in 'claimctl status' and in
 *   claimd_calls_outside_requests_total;
 * - a curl gone before claimd reads /proc: named by the CLAIMD_SERVICE the
 *   kernel read from its environment.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "services.h"
#include "sockets.h"
#include "test_progs.h"

struct want_calls {
	long long calls;
};

/* A service's edge with at least that many calls. */
static bool service_calls(struct json_object *e, void *arg)
{
	return !j_bool(e, "root") && j_int(e, "calls") >= ((struct want_calls *)arg)->calls;
}

static bool has_calls(struct json_object *e, void *arg)
{
	return j_bool(e, "root") && j_int(e, "calls") >= ((struct want_calls *)arg)->calls;
}

/* /metrics by curl (its own call to claimd's metrics port is a root edge too). */
static char *metrics_text(int port)
{
	static char out[1 << 20];
	char url[96];
	const char *argv[] = { "curl", "-s", "--max-time", "5", url, NULL };

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
	return proc_run(argv, out, sizeof(out), 10000) == 0 ? out : NULL;
}

/* The value of one series in the text, or -1 when absent. */
static double series(const char *text, const char *s)
{
	size_t n = strlen(s);
	const char *p;

	for (p = text; p && (p = strstr(p, s)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return atof(p + n + 1);
	return -1;
}

/* The metrics are refreshed once a second: poll for the series to show want. */
static double series_wait(int port, const char *s, double want)
{
	long long end = now_ms() + 5000;
	double v = -1;
	char *text;

	while (now_ms() < end) {
		text = metrics_text(port);
		v = text ? series(text, s) : -1;
		if (v == want)
			break;
		sleep_ms(250);
	}
	return v;
}

static struct json_object *root_of(struct json_object *storm, const char *name)
{
	struct json_object *roots = j_get(storm, "roots");
	size_t i;

	for (i = 0; i < json_object_array_length(roots); i++)
		if (!strcmp(j_str(json_object_array_get_idx(roots, i), "root"), name))
			return json_object_array_get_idx(roots, i);
	return NULL;
}

/* The path caller > callee among the root's paths, or NULL. */
static struct json_object *path_to(struct json_object *root, const char *callee)
{
	struct json_object *paths = j_get(root, "paths");
	size_t i;

	for (i = 0; i < json_object_array_length(paths); i++) {
		struct json_object *p = json_object_array_get_idx(paths, i), *names;

		names = j_get(p, "path");
		if (json_object_array_length(names) == 2 &&
		    !strcmp(json_object_get_string(json_object_array_get_idx(names, 1)), callee))
			return p;
	}
	return NULL;
}

static void check_curl_retry(struct claimd_h *h, int mport)
{
	struct svc s = { 0 };
	struct json_object *e = NULL, *storm = NULL, *graph = NULL, *r, *p;
	struct want_calls four = { 4 };
	char url[96], out[256], q[160], body[H_PATH];
	/* A file, not /dev/null: curl truncates its output before each retry. */
	const char *argv[] = { "curl", "-s", "-o", body, "--retry", "3", url, NULL };
	long long t0;
	size_t i;
	bool edge_seen = false, node_root = false;

	if (!ASSERT_OK(
		    svc_start(&s, &(struct svc_spec){ .name = "rtAlways", .fail_mod = 1 }, h->dir),
		    "always-503 service"))
		goto out;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/r/7", s.port);
	snprintf(body, sizeof(body), "%s/curl.out", h->dir);
	t0 = now_ms();
	ASSERT_EQ(proc_run(argv, out, sizeof(out), 60000), 0, "curl --retry 3 ran");
	printf("curl --retry 3: %.1f s for its attempts\n", (now_ms() - t0) / 1000.0);
	e = claimd_wait_edge(h, "curl", "rtAlways", has_calls, &four, 10000);
	if (!ASSERT_OK_PTR(e, "root edge curl -> rtAlways"))
		goto out;
	printf("curl -> rtAlways: %s\n", json_object_to_json_string(e));
	ASSERT_TRUE(j_bool(e, "root"), "a root edge");
	ASSERT_EQ(j_int(e, "calls"), 4, "4 calls");
	ASSERT_EQ(j_int(e, "callee_failures"), 4, "4 callee failures");
	ASSERT_EQ(j_int(e, "retries"), 3, "3 retries");
	ASSERT_EQ(j_int(e, "both_failed"), 0, "no both_failed");
	ASSERT_TRUE(j_get(e, "ratio") == NULL, "no ratio");
	ASSERT_STREQ(j_str(e, "class"), "unknown", "class unknown");

	storm = claimctl_json(h, (const char *const[]){ "storm", NULL });
	r = root_of(storm, "curl");
	if (ASSERT_OK_PTR(r, "curl is a storm root")) {
		ASSERT_TRUE(j_bool(r, "root_caller"), "a root caller");
		p = path_to(r, "rtAlways");
		if (ASSERT_OK_PTR(p, "path curl > rtAlways")) {
			ASSERT_FLOAT_NEAR(json_object_get_double(json_object_array_get_idx(
						  j_get(p, "retries_per_hop"), 0)),
					  3, 1e-9, "3 retries per first call");
			ASSERT_FLOAT_NEAR(json_object_get_double(j_get(p, "fanout")), 4, 1e-9,
					  "fan-out 4");
		}
	}
	graph = claimctl_json(h, (const char *const[]){ "graph", NULL });
	for (i = 0; i < json_object_array_length(j_get(graph, "edges")); i++) {
		struct json_object *g = json_object_array_get_idx(j_get(graph, "edges"), i);

		edge_seen |= !strcmp(j_str(g, "caller"), "curl") &&
			     !strcmp(j_str(g, "callee"), "rtAlways") && j_bool(g, "root") &&
			     j_int(g, "retries") == 3;
	}
	for (i = 0; i < json_object_array_length(j_get(graph, "nodes")); i++) {
		struct json_object *n = json_object_array_get_idx(j_get(graph, "nodes"), i);

		node_root |= !strcmp(j_str(n, "service"), "curl") && j_bool(n, "root");
	}
	ASSERT_TRUE(edge_seen, "graph: the root edge");
	ASSERT_TRUE(node_root, "graph: curl, a root node");

	snprintf(q, sizeof(q), "claimd_edge_retries_total{caller=\"curl\",callee=\"rtAlways\"}");
	ASSERT_EQ(series_wait(mport, q, 3), 3, q);
	{
		char *text = metrics_text(mport);

		if (ASSERT_OK_PTR(text, "/metrics")) {
			snprintf(q, sizeof(q),
				 "claimd_edge_calls_total{caller=\"curl\",callee=\"rtAlways\"}");
			ASSERT_EQ(series(text, q), 4, q);
			snprintf(q, sizeof(q),
				 "claimd_edge_callee_failures_total{caller=\"curl\","
				 "callee=\"rtAlways\"}");
			ASSERT_EQ(series(text, q), 4, q);
			snprintf(q, sizeof(q),
				 "claimd_edge_class{caller=\"curl\",callee=\"rtAlways\"}");
			ASSERT_EQ(series(text, q), -1, "no class series for a root edge");
			snprintf(q, sizeof(q),
				 "claimd_edge_both_failed_total{caller=\"curl\","
				 "callee=\"rtAlways\"}");
			ASSERT_EQ(series(text, q), -1, "no both_failed series for a root edge");
		}
	}
out:
	json_object_put(e);
	json_object_put(storm);
	json_object_put(graph);
	svc_stop(&s);
}

static void check_batch(struct claimd_h *h)
{
	struct svc s = { 0 };
	struct json_object *e = NULL;
	struct want_calls all = { 100 };
	char script[H_PATH], port[16], out[256];
	const char *argv[] = { "python3", script, "--port", port, "--count", "100", NULL };
	const char *env[] = { "CLAIMD_SERVICE=batchjob", NULL };
	char log[H_PATH];
	pid_t pid;

	if (!ASSERT_OK(
		    svc_start(&s, &(struct svc_spec){ .name = "rtFifth", .fail_mod = 5 }, h->dir),
		    "service failing 1 in 5"))
		goto out;
	peer_script("root_client.py", script, sizeof(script));
	snprintf(port, sizeof(port), "%d", s.port);
	snprintf(log, sizeof(log), "%s/batch.log", h->dir);
	pid = proc_spawn(argv, env, log);
	if (!ASSERT_GT(pid, 0, "batch job") || !ASSERT_EQ(proc_wait(pid, 60000), 0, "it ran"))
		goto out;
	read_file(log, out, sizeof(out));
	printf("batch job (calls, failed): %s", out);
	e = claimd_wait_edge(h, "batchjob", "rtFifth", has_calls, &all, 10000);
	if (!ASSERT_OK_PTR(e, "root edge batchjob -> rtFifth"))
		goto out;
	printf("batchjob -> rtFifth: calls %lld, callee_failures %lld, retries %lld\n",
	       j_int(e, "calls"), j_int(e, "callee_failures"), j_int(e, "retries"));
	ASSERT_EQ(j_int(e, "calls"), 100, "100 calls");
	ASSERT_EQ(j_int(e, "callee_failures"), 20, "20 callee failures");
	ASSERT_EQ(j_int(e, "retries"), 0, "no retries: every target is new");
	ASSERT_TRUE(j_get(e, "ratio") == NULL, "no ratio");
out:
	json_object_put(e);
	svc_stop(&s);
}

static long long outside(struct claimd_h *h)
{
	struct json_object *st = claimctl_json(h, (const char *const[]){ "status", NULL });
	long long n = st ? j_int(st, "calls_outside_requests") : -1;

	json_object_put(st);
	return n;
}

static void check_background(struct claimd_h *h, int mport)
{
	struct svc s = { 0 };
	struct json_object *e = NULL;
	struct want_calls ten = { 10 };
	char script[H_PATH], port[16], q[96];
	const char *argv[] = {
		"python3", script, "--port", port, "--count", "10", "--listen", NULL
	};
	const char *env[] = { "CLAIMD_SERVICE=bgjob", NULL };
	long long before, after = 0, end;
	pid_t pid;

	if (!ASSERT_OK(svc_start(&s, &(struct svc_spec){ .name = "rtBg" }, h->dir), "service"))
		goto out;
	peer_script("root_client.py", script, sizeof(script));
	snprintf(port, sizeof(port), "%d", s.port);
	before = outside(h);
	pid = proc_spawn(argv, env, NULL);
	if (!ASSERT_GT(pid, 0, "background job") || !ASSERT_EQ(proc_wait(pid, 60000), 0, "it ran"))
		goto out;
	for (end = now_ms() + 5000; now_ms() < end; sleep_ms(100))
		if ((after = outside(h)) - before >= 10)
			break;
	printf("calls outside requests: %lld before, %lld after\n", before, after);
	ASSERT_GE(after - before, 10, "its 10 calls counted outside requests");
	e = claimd_wait_edge(h, "bgjob", "rtBg", service_calls, &ten, 10000);
	if (ASSERT_OK_PTR(e, "its service's edge bgjob -> rtBg")) {
		printf("bgjob -> rtBg: calls %lld, callee_failures %lld, both_failed %lld\n",
		       j_int(e, "calls"), j_int(e, "callee_failures"), j_int(e, "both_failed"));
		ASSERT_EQ(j_int(e, "calls"), 10, "its 10 calls on its edge");
		ASSERT_EQ(j_int(e, "both_failed"), 0, "no request failed with them");
	}
	json_object_put(e);
	e = claimd_edge_of_kind(h, "bgjob", "rtBg", 1);
	ASSERT_TRUE(e == NULL, "and no root edge");
	snprintf(q, sizeof(q), "claimd_calls_outside_requests_total");
	ASSERT_GE(series_wait(mport, q, after), 10, q);
out:
	json_object_put(e);
	svc_stop(&s);
}

/*
 * A job gone before claimd reads /proc (claimd held stopped meanwhile):
 * curl, one call, CLAIMD_SERVICE=shortjob after two decoys (a string longer
 * than a read step that carries the key past its start, and a name that
 * ends in it). Its root edge is named by the environment the kernel read.
 */
static void check_gone_before_read(struct claimd_h *h)
{
	static char pad[160];
	struct svc s = { 0 };
	struct json_object *e = NULL;
	struct want_calls one = { 1 };
	char url[64];
	const char *argv[] = { "curl", "-s", "-o", "/dev/null", "--max-time", "5", url, NULL };
	const char *env[] = { pad, "NOT_CLAIMD_SERVICE=wrong", "CLAIMD_SERVICE=shortjob", NULL };
	pid_t pid;
	int st;

	snprintf(pad, sizeof(pad), "PAD=%0123dCLAIMD_SERVICE=wrong", 0);
	if (!ASSERT_OK(svc_start(&s, &(struct svc_spec){ .name = "rtShort" }, h->dir), "service"))
		goto out;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/r/1", s.port);
	if (!ASSERT_OK(kill(h->pid, SIGSTOP), "claimd held"))
		goto out;
	pid = proc_spawn(argv, env, NULL);
	st = pid > 0 ? proc_wait(pid, 20000) : -1;
	kill(h->pid, SIGCONT);
	if (!ASSERT_EQ(st, 0, "curl ran and was reaped"))
		goto out;
	e = claimd_wait_edge(h, "shortjob", "rtShort", has_calls, &one, 10000);
	if (ASSERT_OK_PTR(e, "root edge shortjob -> rtShort"))
		ASSERT_EQ(j_int(e, "calls"), 1, "its one call");
	json_object_put(e);
	e = claimd_edge(h, "curl", "rtShort");
	ASSERT_TRUE(e == NULL, "not named by its command");
	json_object_put(e);
	e = claimd_edge(h, "wrong", "rtShort");
	ASSERT_TRUE(e == NULL, "nor by a decoy");
out:
	json_object_put(e);
	svc_stop(&s);
}

void test_roots(void)
{
	char mport_s[32];
	const char *extra[] = { "--metrics", mport_s, NULL };
	struct claimd_h h = { 0 };
	int mport;

	if (!test__need_root())
		return;
	mport = sock_free_port();
	snprintf(mport_s, sizeof(mport_s), "127.0.0.1:%d", mport);
	if (!ASSERT_OK(claimd_start(&h, extra), "claimd start"))
		goto out;
	if (test__start_subtest("curl_retry"))
		check_curl_retry(&h, mport);
	if (test__start_subtest("batch_job"))
		check_batch(&h);
	if (test__start_subtest("background_call"))
		check_background(&h, mport);
	if (test__start_subtest("gone_before_read"))
		check_gone_before_read(&h);
out:
	if (test__failed_now())
		claimd_print_log(&h);
	claimd_stop(&h);
	tmpdir_remove(h.dir);
}
