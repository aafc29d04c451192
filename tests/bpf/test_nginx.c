// SPDX-License-Identifier: GPL-2.0
/*
 * An event-loop server: nginx (tests/lib/nginx.h) as a reverse proxy in
 * front of Python backends. Debian's nginx is followed by its own tier
 * (bpf/runtimes/nginx.c): its requests held by their connections from the
 * first, each call tied where nginx writes it upstream. One request at a
 * time (serial), eight clients at once with nothing carried on that would
 * tie (concurrent: no user agent, no id), a keep-alive upstream pool with
 * failures tried again on a backup server (pool_retry): every verdict
 * exact, every edge exact. A copy of nginx whose code does not show the
 * offsets the probe reads (refused) is refused, said and counted, and
 * followed as any event loop: its failures unknown, none wrong.
 */
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "nginx.h"
#include "services.h"
#include "sockets.h"
#include "test_progs.h"
#include "truth.h"

/* The proxy's routes: / and /a/ to backend b1, /b/ to b2. */
static const char *locations(char *out, size_t len, int b1, int b2)
{
	snprintf(out, len,
		 "location / { proxy_pass http://127.0.0.1:%d; }\n"
		 "location /a/ { proxy_pass http://127.0.0.1:%d; }\n"
		 "location /b/ { proxy_pass http://127.0.0.1:%d; }\n",
		 b1, b1, b2);
	return out;
}

struct svc_name {
	const char *name;
};

static bool match_name(struct json_object *o, void *arg)
{
	struct svc_name *m = arg;

	return !strcmp(j_str(o, "type"), "ingress") && !strcmp(j_str(o, "service"), m->name);
}

/*
 * The verdicts of a run (the lines from mark on) against the truth: nb1's
 * failures (every fourth id of target) are its own, nginx's are nb1's,
 * passed up. right and unknown as truth__expect.
 */
static void check_verdicts(const struct trace_cap *t, size_t mark, const struct ngx *n,
			   const struct svc *b1, const char *target, int ids, int right,
			   int unknown)
{
	const struct truth_svc shape = { .target = target, .ids = ids, .mod = 4 };
	const pid_t pids[2] = { 0, b1->pid }; /* nginx: by the name its workers get */
	const char *const names[2] = { n->name, b1->name };
	struct truth_tally tally = { 0 };
	struct truth_svc truth[2];

	truth__chain(truth, 2, &shape, pids, names);
	truth__tally_trace(&tally, t, mark, truth, 2, right + unknown);
	truth__expect(&tally, n->name, right, unknown);
}

/* One request at a time: every request has exactly the call to its backend. */
static void serial(struct claimd_h *h, struct trace_cap *t, const struct svc *b1, int b2)
{
	char text[512];
	struct json_object *all = NULL, *svc = NULL, *e;
	struct ngx n = { 0 };
	struct svc_name m = { n.name };
	int i, seen = 0, right = 0;
	size_t k, mark = trace_mark(t);

	if (nginx_start(&n, h->dir, "ngx1", locations(text, sizeof(text), b1->port, b2)))
		goto out;
	for (i = 0; i < 40; i++) {
		char path[32];

		snprintf(path, sizeof(path), "/%c/r/%d", i % 2 ? 'b' : 'a', i);
		http_get(n.port, path);
	}
	trace_wait(t, match_name, &m, 40, 10000);
	all = trace_read(t);
	for (k = 0; k < json_object_array_length(all); k++) {
		struct json_object *o = json_object_array_get_idx(all, k), *eg;

		if (!match_name(o, &m))
			continue;
		eg = j_get(o, "egress");
		if (json_object_array_length(eg) == 1 &&
		    !strcmp(j_str(json_object_array_get_idx(eg, 0), "callee"),
			    seen % 2 ? "nb2" : "nb1") &&
		    !json_object_array_length(j_get(o, "flags")))
			right++;
		seen++;
	}
	ASSERT_EQ(seen, 40, "serial: requests seen");
	ASSERT_EQ(right, 40, "serial: each with exactly its backend call");
	e = claimd_edge(h, n.name, "nb1");
	ASSERT_EQ(j_int(e, "calls"), 20, "serial: edge to nb1");
	json_object_put(e);
	e = claimd_edge(h, n.name, "nb2");
	ASSERT_EQ(j_int(e, "calls"), 20, "serial: edge to nb2");
	json_object_put(e);
	svc = claimd_service(h, n.name);
	ASSERT_STREQ(j_str(svc, "mode"), "nginx", "serial: followed by nginx's tier");
	/* /a/r/<id> for even ids: nb1 fails 0, 4, ..., 36, nginx passes that up. */
	check_verdicts(t, mark, &n, b1, "/a/r/%d", 40, 2 * 10, 0);
out:
	json_object_put(svc);
	json_object_put(all);
	nginx_stop(&n);
}

/*
 * nginx's one worker made to juggle before the measured traffic: a request
 * to a slow backend (/b/, 300 ms), and a second one on another connection
 * while the first waits. The kernel sees the worker thread begin a request
 * with another open and flags the process multiplexed, whatever the
 * timing of the load that follows (whose first request, alone on the
 * thread, would otherwise be judged like a thread-per-request service's).
 * An nginx followed by its own tier is keyed from its first request: the
 * juggling changes nothing for it. 0, or -1.
 */
static int juggle_once(const struct ngx *n)
{
	static const char req[] = "GET /b/1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
	int fd[2] = { sock_connect(n->port), sock_connect(n->port) }, i, rc = 0;
	char buf[1024];

	if (fd[0] < 0 || fd[1] < 0) {
		rc = -1;
		goto out;
	}
	if (sock_send(fd[0], req))
		rc = -1;
	sleep_ms(100); /* the first waits on the slow backend */
	if (!rc && sock_send(fd[1], req))
		rc = -1;
	for (i = 0; !rc && i < 2; i++)
		if (sock_recv_until(fd[i], buf, sizeof(buf), "ok\n", sizeof(buf)) <= 0)
			rc = -1;
out:
	for (i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return rc;
}

/* The service's row once its mode is what the test waits for (or after 5 s). */
static struct json_object *service_in_mode(struct claimd_h *h, const char *name, const char *mode)
{
	struct json_object *svc = NULL;
	int k;

	for (k = 0; k < 50; k++) { /* claimd learns the process's mode at its next read */
		json_object_put(svc);
		svc = claimd_service(h, name);
		if (!strcmp(j_str(svc, "mode"), mode))
			break;
		sleep_ms(100);
	}
	return svc;
}

/*
 * Eight clients at once through nginx n's one event-loop thread, with no
 * user agent and no id (load_client.py): 480 requests, nb1 failing every
 * fourth. tied: nginx followed by its own tier (every verdict exact, every
 * call tied, the edge learned); else (a refused nginx) nothing ties:
 * nginx's failures unknown, every call on the edge all the same, no class.
 */
static void eight_clients(struct claimd_h *h, struct trace_cap *t, const struct svc *b1,
			  const struct ngx *n, bool tied)
{
	char script[H_PATH], port[16], out[H_PATH];
	const char *argv[] = { "python3",    script, "--port", port, "--threads", "8",
			       "--requests", "60",   "--out",  out,  NULL };
	struct svc_name m = { n->name };
	struct json_object *all = NULL, *svc = NULL, *e = NULL;
	int confident = 0, failed = 0, total = 0;
	pid_t client;
	size_t k, mark = trace_mark(t);

	peer_script("load_client.py", script, sizeof(script));
	snprintf(out, sizeof(out), "%s/%s-client.json", h->dir, n->name);
	snprintf(port, sizeof(port), "%d", n->port);
	client = proc_spawn(argv, NULL, NULL);
	if (!ASSERT_EQ(proc_wait(client, 60000), 0, "eight clients"))
		return;
	trace_wait(t, match_name, &m, 2 + 480, 10000);
	all = trace_read(t);
	for (k = mark; k < json_object_array_length(all); k++) {
		struct json_object *o = json_object_array_get_idx(all, k);
		const char *v;

		if (!match_name(o, &m))
			continue;
		total++;
		if (!j_bool(o, "failed"))
			continue;
		failed++;
		v = j_str(o, "verdict");
		confident += !strcmp(v, "claimed") || !strcmp(v, "unclaimed");
	}
	printf("%s: %d requests, %d failed, %d with a confident verdict\n", n->name, total, failed,
	       confident);
	ASSERT_EQ(total, 480, "requests counted");
	ASSERT_EQ(failed, 120, "nb1's failures, passed up");
	ASSERT_EQ(confident, tied ? 120 : 0, "confident verdicts in the trace");
	/* nb1's 120 failures claimed; nginx's, the same 120, unclaimed or unknown. */
	check_verdicts(t, mark, n, b1, "/r/%d", 480, (1 + tied) * 120, (1 - tied) * 120);
	svc = service_in_mode(h, n->name, tied ? "nginx" : "multiplexed");
	printf("%s: mode %s, %lld requests, %lld tied by nginx's tier, %lld unknown\n", n->name,
	       j_str(svc, "mode"), j_int(svc, "requests"), j_int(svc, "tied_by_nginx"),
	       j_int(svc, "unknown"));
	ASSERT_STREQ(j_str(svc, "mode"), tied ? "nginx" : "multiplexed", "its mode");
	ASSERT_EQ(j_int(svc, "requests"), 2 + 480, "all counted, the two first too");
	ASSERT_EQ(j_int(svc, "tied_by_nginx"), tied ? 2 + 480 : 0, "requests tied by nginx's tier");
	ASSERT_EQ(j_int(svc, "claimed") + j_int(svc, "unclaimed"), tied ? 120 : 0,
		  "confident verdicts counted");
	e = claimd_edge(h, n->name, "nb1");
	printf("%s -> nb1: %lld calls, %lld callee failures, %lld both failed, class %s\n", n->name,
	       j_int(e, "calls"), j_int(e, "callee_failures"), j_int(e, "both_failed"),
	       j_str(e, "class"));
	ASSERT_EQ(j_int(e, "calls"), 480, "every call on the edge");
	ASSERT_EQ(j_int(e, "callee_failures"), 120, "nb1's failures on the edge");
	ASSERT_EQ(j_int(e, "both_failed"), tied ? 120 : 0, "both failed, where tied");
	ASSERT_STREQ(j_str(e, "class"), tied ? "fail-close" : "unknown", "the edge's class");
	json_object_put(e);
	json_object_put(svc);
	json_object_put(all);
}

/*
 * nginx n (named name) in front of b1 and a slow backend of its own (its
 * name slow_name, in *slow), made to juggle once (juggle_once): 0, or -1.
 */
static int nginx_juggled(struct claimd_h *h, const struct svc *b1, const char *slow_name,
			 struct svc *slow, const char *name, struct ngx *n)
{
	char text[512];

	if (svc_start(slow, &(struct svc_spec){ .name = slow_name, .delay_ms = 300 }, h->dir) ||
	    nginx_start(n, h->dir, name, locations(text, sizeof(text), b1->port, slow->port)))
		return -1;
	return ASSERT_OK(juggle_once(n), "two requests at once on nginx's worker") ? 0 : -1;
}

/* Eight clients at once through Debian's nginx: exact. */
static void concurrent(struct claimd_h *h, struct trace_cap *t, const struct svc *b1)
{
	struct svc slow = { 0 };
	struct ngx n = { 0 };
	struct json_object *svc = NULL;

	/* Juggling first changes nothing: keyed from its first request. */
	if (nginx_juggled(h, b1, "nslow", &slow, "ngx2", &n))
		goto out;
	svc = service_in_mode(h, n.name, "nginx");
	ASSERT_STREQ(j_str(svc, "mode"), "nginx", "concurrent: nginx's tier, juggling or not");
	eight_clients(h, t, b1, &n, true);
out:
	json_object_put(svc);
	nginx_stop(&n);
	svc_stop(&slow);
}

/*
 * A copy of nginx whose code does not show an offset its probe reads:
 * refused (a log line naming the field and the function, nginx_refused),
 * followed as any event loop. Made to juggle first, then the same eight
 * clients: nothing they carry ties, so nginx's failures are unknown, nb1's
 * claimed, none wrong.
 */
static void refused(struct claimd_h *h, struct trace_cap *t, const struct svc *b1)
{
	const char *st[] = { "status", NULL };
	char text[H_PATH + 64], exe[H_PATH];
	struct svc slow = { 0 };
	struct ngx n = { .bin = exe };
	struct json_object *s = NULL, *svc = NULL;
	long long before;

	/* Named nginx (its process name, claimd's fallback for its service's). */
	snprintf(exe, sizeof(exe), "%s/refused", h->dir);
	if (!ASSERT_OK(mkdir(exe, 0755), "a directory for the copy"))
		return;
	snprintf(exe, sizeof(exe), "%s/refused/nginx", h->dir);
	if (!ASSERT_OK(nginx_refused_copy(exe), "nginx copied, its code changed"))
		return;
	s = claimctl_json(h, st);
	before = j_int(s, "nginx_refused");
	json_object_put(s);
	s = NULL;
	if (nginx_juggled(h, b1, "nslow4", &slow, "ngx4", &n))
		goto out;
	svc = service_in_mode(h, n.name, "multiplexed");
	ASSERT_STREQ(j_str(svc, "mode"), "multiplexed", "refused: juggling seen first");
	eight_clients(h, t, b1, &n, false);
	s = claimctl_json(h, st);
	ASSERT_EQ(j_int(s, "nginx_refused") - before, 1,
		  "refused: counted, once for its processes");
	snprintf(text, sizeof(text), "nginx: %s (nginx/", exe);
	ASSERT_GE(claimd_log_lines(h, text), 1, "refused: the log names the file");
	ASSERT_GE(claimd_log_lines(h, "refused: its code does not show "
				      "ngx_chain_writer_ctx_t.connection where claimd reads it "
				      "(sought in ngx_chain_writer)"),
		  1, "refused: the log says why");
out:
	json_object_put(s);
	json_object_put(svc);
	nginx_stop(&n);
	svc_stop(&slow);
}

/*
 * 8 clients (no user agent: nothing a relay would repeat) through a
 * keep-alive upstream pool: nb1 first, its failures (every fourth id)
 * tried again on the backup nb3 (proxy_next_upstream), which fails them
 * too. Both calls of a retried request tied to it by nginx's tier: nginx's
 * failures unclaimed, nb1's and nb3's claimed, 0 wrong; every call on its
 * edge.
 */
static void pool_retry(struct claimd_h *h, struct trace_cap *t, const struct svc *b1)
{
	char http[512], loc[512];
	struct svc b3 = { 0 };
	struct ngx n = { 0 };
	struct truth_svc truth[3];
	struct truth_tally tally = { 0 };
	struct json_object *e1 = NULL, *e3 = NULL, *svc = NULL;
	static int status[480];
	int i, failed = 0;
	size_t mark;

	if (svc_start(&b3, &(struct svc_spec){ .name = "nb3", .fail_mod = 4 }, h->dir))
		goto out;
	snprintf(http, sizeof(http),
		 "  upstream pool {\n    server 127.0.0.1:%d max_fails=0;\n"
		 "    server 127.0.0.1:%d backup max_fails=0;\n"
		 "    keepalive 8;\n  }\n",
		 b1->port, b3.port);
	snprintf(loc, sizeof(loc),
		 "location / { proxy_pass http://pool; proxy_http_version 1.1;\n"
		 "  proxy_set_header Connection \"\"; proxy_next_upstream error http_503; }\n");
	if (nginx_start_http(&n, h->dir, "ngx3", http, loc))
		goto out;
	mark = trace_mark(t);
	if (load_client_run_with(h->dir, n.port, 8, 60, NULL, NULL, status, 480))
		goto out;
	for (i = 0; i < 480; i++)
		failed += status[i] >= 500;
	ASSERT_EQ(failed, 120, "pool_retry: nb1's and nb3's failures, passed up");
	/* nginx's failures: unclaimed (its cause nb1 or nb3); the backends' own: claimed. */
	truth[0] = (struct truth_svc){ .service = n.name,
				       .verdict = "unclaimed",
				       .cause = NULL,
				       .target = "/r/%d",
				       .ids = 480,
				       .mod = 4 };
	truth[1] = (struct truth_svc){ .pid = b1->pid,
				       .verdict = "claimed",
				       .cause = "",
				       .target = "/r/%d",
				       .ids = 480,
				       .mod = 4 };
	truth[2] = (struct truth_svc){ .pid = b3.pid,
				       .verdict = "claimed",
				       .cause = "",
				       .target = "/r/%d",
				       .ids = 480,
				       .mod = 4 };
	truth__tally_trace(&tally, t, mark, truth, 3, 3 * 120);
	truth__expect(&tally, "pool_retry", 3 * 120, 0);
	svc = service_in_mode(h, n.name, "nginx");
	printf("%s: mode %s, %lld requests, %lld tied by nginx's tier, %lld unknown\n", n.name,
	       j_str(svc, "mode"), j_int(svc, "requests"), j_int(svc, "tied_by_nginx"),
	       j_int(svc, "unknown"));
	ASSERT_STREQ(j_str(svc, "mode"), "nginx", "pool_retry: its mode");
	ASSERT_EQ(j_int(svc, "tied_by_nginx"), 480, "pool_retry: every request tied");
	e1 = claimd_edge(h, n.name, "nb1");
	e3 = claimd_edge(h, n.name, "nb3");
	printf("%s -> nb1: %lld calls, %lld callee failures, %lld both failed, class %s; "
	       "-> nb3: %lld calls, %lld callee failures, %lld both failed, class %s\n",
	       n.name, j_int(e1, "calls"), j_int(e1, "callee_failures"), j_int(e1, "both_failed"),
	       j_str(e1, "class"), j_int(e3, "calls"), j_int(e3, "callee_failures"),
	       j_int(e3, "both_failed"), j_str(e3, "class"));
	/* Every request called nb1 once; each of its failures went to nb3 once more. */
	ASSERT_EQ(j_int(e1, "calls"), 480, "pool_retry: nb1 called once per request");
	ASSERT_EQ(j_int(e1, "callee_failures"), 120, "pool_retry: nb1's failures");
	ASSERT_EQ(j_int(e1, "both_failed"), 120, "pool_retry: each failed its request");
	ASSERT_EQ(j_int(e3, "calls"), 120, "pool_retry: nb3 called for each of nb1's failures");
	ASSERT_EQ(j_int(e3, "callee_failures"), 120, "pool_retry: nb3 failed each");
	ASSERT_EQ(j_int(e3, "both_failed"), 120, "pool_retry: each failed its request");
	ASSERT_STREQ(j_str(e1, "class"), "fail-close", "pool_retry: nb1's edge learned");
	ASSERT_STREQ(j_str(e3, "class"), "fail-close", "pool_retry: nb3's edge learned");
out:
	json_object_put(e1);
	json_object_put(e3);
	json_object_put(svc);
	nginx_stop(&n);
	svc_stop(&b3);
}

void test_nginx_proxy(void)
{
	struct svc b1 = { 0 }, b2 = { 0 };
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };

	if (!test__need_root())
		return;
	if (claimd_traced_start(&h, &t, NULL))
		goto out;
	if (svc_start(&b1, &(struct svc_spec){ .name = "nb1", .fail_mod = 4 }, h.dir) ||
	    svc_start(&b2, &(struct svc_spec){ .name = "nb2" }, h.dir))
		goto out;
	if (test__start_subtest("serial"))
		serial(&h, &t, &b1, b2.port);
	if (test__start_subtest("concurrent"))
		concurrent(&h, &t, &b1);
	if (test__start_subtest("refused"))
		refused(&h, &t, &b1);
	if (test__start_subtest("pool_retry"))
		pool_retry(&h, &t, &b1);
out:
	svc_stop(&b1);
	svc_stop(&b2);
	claimd_traced_stop(&h, &t);
}
