// SPDX-License-Identifier: GPL-2.0
/*
 * The architectures real services use (design.md), end to end: claimd must
 * be right on each, or honestly unknown, never confidently wrong. Each
 * subtest puts one real shape in front of a keep-alive backend that fails
 * every fifth request (tests/peers/chain_service.py), drives it with 4
 * clients sending 240 requests of known ids (GET /r/<id>), and checks the
 * edge shape -> backend (exact calls, callee failures, both failed,
 * fail-close) and, from the trace, every request: its status, its one call,
 * and the verdict of each failure against the truth (unclaimed, caused by
 * the backend).
 *
 *   pool_proxy          tests/peers/pool_proxy.c: worker threads sharing a
 *                       pool of probed keep-alive connections, request heads
 *                       in one 10-iovec writev, answer heads relayed before
 *                       the body is read;
 *   pool_proxy_tls      the same, clients over TLS through memory BIOs;
 *   requests_session    tests/peers/session_service.py: handler threads
 *                       sharing one requests.Session;
 *   broken_framing      pool_proxy writing one request head in more iovecs
 *                       than claimd frames: that request (a failing one)
 *                       must be unknown, the connection healed, and the
 *                       later calls on it counted again.
 *
 * claimd follows only the backend and the shape (--pid), so the kernel
 * counters the test reads are theirs alone; both are started first and
 * seeded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"

#define CLIENTS	   4
#define PER_CLIENT 60
#define TOTAL	   (CLIENTS * PER_CLIENT)
#define FAIL_MOD   5  /* the backend fails id % FAIL_MOD == 0 */
#define BREAK_ID   50 /* a failing id: a guess would be confidently wrong */
#define FRAMED_IOV 64 /* iovecs of one writev claimd frames */
#define BACKEND	   "shapes-be"
#define FRONT	   "shapes-front"

enum shape { POOL, POOL_TLS, SESSION, BROKEN };

struct run {
	enum shape shape;
	struct claimd_h h;
	struct trace_cap t;
	struct svc be;
	pid_t front;
	char cert[H_PATH], key[H_PATH], stats[H_PATH];
	int status[TOTAL]; /* what the client got, per id */
	int failed;	   /* ids the client saw fail */
	uint32_t hash[TOTAL];
};

/* What the trace said of the front's requests. */
struct seen {
	int lines, unmatched, missing, twice, bad_status, bad_egress, flagged;
	int wrong_cause, shown_wrong, shown_unknown;
	struct truth_tally tally;
	bool broken_seen;
	char broken_verdict[32], broken_rule[32], broken_flags[128];
};

static bool shape_tls(const struct run *r)
{
	return r->shape == POOL_TLS;
}

static int make_cert(struct run *r)
{
	char san[] = "subjectAltName=IP:127.0.0.1", out[4096];
	const char *argv[] = { "openssl", "req",     "-x509", "-newkey",       "rsa:2048",
			       "-nodes",  "-keyout", r->key,  "-out",	       r->cert,
			       "-days",	  "1",	     "-subj", "/CN=127.0.0.1", "-addext",
			       san,	  NULL };

	snprintf(r->cert, sizeof(r->cert), "%s/cert.pem", r->h.dir);
	snprintf(r->key, sizeof(r->key), "%s/key.pem", r->h.dir);
	if (proc_run(argv, out, sizeof(out), 30000) != 0) {
		printf("openssl failed: %s\n", out);
		return -1;
	}
	return 0;
}

/* The shape under test, in front of the backend; its pid (its port in *port), or -1. */
static pid_t front_start(struct run *r, int *port)
{
	char exe[H_PATH], ready[H_PATH], log[H_PATH], bport[16], brk[16], buf[32];
	const char *envv[] = { "CLAIMD_SERVICE=" FRONT, NULL };
	const char *argv[16];
	int n = 0;
	pid_t pid;

	snprintf(ready, sizeof(ready), "%s/front.ready", r->h.dir);
	snprintf(log, sizeof(log), "%s/front.log", r->h.dir);
	snprintf(r->stats, sizeof(r->stats), "%s/front.stats", r->h.dir);
	snprintf(bport, sizeof(bport), "%d", r->be.port);
	snprintf(brk, sizeof(brk), "%d", BREAK_ID);
	if (r->shape == SESSION) {
		argv[n++] = "python3";
		argv[n++] = peer_script("session_service.py", exe, sizeof(exe));
		argv[n++] = "--ready-file";
	} else {
		snprintf(exe, sizeof(exe), "%s/tests/pool_proxy", test__build_dir());
		argv[n++] = exe;
		argv[n++] = "--threads";
		argv[n++] = "8";
		argv[n++] = "--stats";
		argv[n++] = r->stats;
		argv[n++] = "--ready";
	}
	argv[n++] = ready;
	argv[n++] = "--backend";
	argv[n++] = bport;
	if (shape_tls(r)) {
		argv[n++] = "--tls";
		argv[n++] = r->cert;
		argv[n++] = r->key;
	}
	if (r->shape == BROKEN) {
		argv[n++] = "--break-once";
		argv[n++] = brk;
	}
	argv[n] = NULL;
	pid = proc_spawn(argv, envv, log);
	if (pid <= 0 || wait_file(ready, 15000) || read_file(ready, buf, sizeof(buf)) <= 0) {
		printf("%s did not start (log %s)\n", argv[0], log);
		if (pid > 0)
			proc_stop(pid, 2000);
		return -1;
	}
	*port = atoi(buf);
	return pid;
}

/* CLIENTS threads, PER_CLIENT requests each, one connection per request. */
static int drive(struct run *r, int port)
{
	int id;

	if (load_client_run(r->h.dir, port, CLIENTS, PER_CLIENT, shape_tls(r) ? r->cert : NULL,
			    r->status, TOTAL))
		return -1;
	for (id = 0; id < TOTAL; id++)
		r->failed += r->status[id] >= 500 || r->status[id] == 0;
	return 0;
}

/* The failures the backend was told to make, as the client saw them. */
static void check_client(const struct run *r)
{
	int id, off = 0;

	for (id = 0; id < TOTAL; id++)
		off += r->status[id] != (id % FAIL_MOD ? 200 : 503);
	ASSERT_EQ(off, 0, "client: statuses other than the backend's pattern");
	ASSERT_EQ(r->failed, (TOTAL + FAIL_MOD - 1) / FAIL_MOD, "client: failures");
}

static bool edge_done(struct json_object *e, void *ctx)
{
	const int *want = ctx;

	return j_int(e, "calls") >= want[0] && j_int(e, "callee_failures") >= want[1];
}

static void check_edge(const struct run *r)
{
	bool broken = r->shape == BROKEN;
	int want[2] = { TOTAL - broken, r->failed - broken };
	struct json_object *e;
	long long calls, cf, both;

	e = claimd_settled_edge(&r->h, FRONT, BACKEND, edge_done, want, 15000);
	if (!ASSERT_OK_PTR(e, "edge " FRONT " -> " BACKEND))
		return;
	calls = j_int(e, "calls");
	cf = j_int(e, "callee_failures");
	both = j_int(e, "both_failed");
	printf("edge %s -> %s: calls %lld (requests %d), callee_failures %lld, both_failed %lld "
	       "(failures %d), class %s\n",
	       FRONT, BACKEND, calls, TOTAL, cf, both, r->failed, j_str(e, "class"));
	if (broken) {
		/*
		 * One call's answer may be lost with its framing; none invented.
		 * Its request, unknown, counts its call but teaches no class:
		 * both_failed is among the callee failures of requests that do.
		 */
		ASSERT_GE(calls, TOTAL - 1, "edge: calls counted again after the loss");
		ASSERT_LE(calls, TOTAL, "edge: calls");
		ASSERT_GE(cf, r->failed - 1, "edge: callee failures");
		ASSERT_LE(cf, r->failed, "edge: callee failures");
		ASSERT_EQ(both, j_int(e, "tied_failures"), "edge: both failed");
		ASSERT_GE(both, cf - 1, "edge: both failed");
	} else {
		ASSERT_EQ(calls, TOTAL, "edge: calls");
		ASSERT_EQ(cf, r->failed, "edge: callee failures");
		ASSERT_EQ(both, r->failed, "edge: both failed");
	}
	ASSERT_STREQ(j_str(e, "class"), "fail-close", "edge: class");
	json_object_put(e);
}

static int id_of(const struct run *r, struct json_object *o)
{
	uint32_t h = strtoul(j_str(o, "target_hash"), NULL, 16);
	int id;

	for (id = 0; j_str(o, "target_hash")[0] && id < TOTAL; id++)
		if (r->hash[id] == h)
			return id;
	return -1;
}

static bool has_flag(struct json_object *o, const char *flag)
{
	struct json_object *f = j_get(o, "flags");
	size_t i;

	for (i = 0; i < json_object_array_length(f); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(f, i)), flag))
			return true;
	return false;
}

/* Its one call, to the backend, with the status the client got. */
static bool egress_right(const struct run *r, struct json_object *o, int id)
{
	struct json_object *eg = j_get(o, "egress"), *e;

	if (json_object_array_length(eg) != 1)
		return false;
	e = json_object_array_get_idx(eg, 0);
	return !strcmp(j_str(e, "callee"), BACKEND) && j_int(e, "status") == r->status[id] &&
	       j_int(e, "start_ns") >= j_int(o, "start_ns") &&
	       j_int(e, "end_ns") <= j_int(o, "end_ns");
}

static void note_broken(struct seen *s, struct json_object *o)
{
	s->broken_seen = true;
	snprintf(s->broken_verdict, sizeof(s->broken_verdict), "%s", j_str(o, "verdict"));
	snprintf(s->broken_rule, sizeof(s->broken_rule), "%s", j_str(o, "rule"));
	snprintf(s->broken_flags, sizeof(s->broken_flags), "%s",
		 json_object_to_json_string_ext(j_get(o, "flags"), JSON_C_TO_STRING_PLAIN));
}

/* A trace line worth reading, the first few of a kind. */
static void show(int *shown, const char *what, int id, struct json_object *o)
{
	if ((*shown)++ < 3)
		printf("request %d %s: %s\n", id, what,
		       json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

static void check_line(const struct run *r, struct seen *s, struct json_object *o, int *count)
{
	bool lost = has_flag(o, "framing-lost") || has_flag(o, "untied-call") ||
		    has_flag(o, "response-lost");
	int id = id_of(r, o);
	const char *want;

	s->lines++;
	if (id < 0) {
		s->unmatched++;
		return;
	}
	if (count[id]++) {
		s->twice++;
		return;
	}
	s->bad_status += j_int(o, "status") != r->status[id];
	s->flagged += json_object_array_length(j_get(o, "flags")) != 0;
	if (!lost && !egress_right(r, o, id))
		show(&s->bad_egress, "without exactly its call", id, o);
	if (r->shape == BROKEN && id == BREAK_ID)
		note_broken(s, o);
	if (!j_bool(o, "failed"))
		return;
	want = r->status[id] >= 500 ? "unclaimed" : NULL;
	if (!truth__check_ingress(&s->tally, o, want))
		show(&s->shown_wrong, "wrongly judged", id, o);
	else if (!strcmp(j_str(o, "verdict"), "unclaimed") &&
		 strcmp(j_str(j_get(o, "cause"), "callee"), BACKEND))
		show(&s->wrong_cause, "unclaimed with the wrong cause", id, o);
	else if (strcmp(j_str(o, "verdict"), "claimed") && strcmp(j_str(o, "verdict"), "unclaimed"))
		show(&s->shown_unknown, "judged unknown", id, o);
}

static void read_trace(struct run *r, struct seen *s)
{
	struct json_object *all;
	int count[TOTAL] = { 0 }, id;
	size_t i;

	trace_wait(&r->t, trace_is_ingress_of, &r->front, TOTAL, 15000);
	sleep_ms(300); /* anything invented would arrive by now */
	trace_stop(&r->t);
	all = trace_read(&r->t);
	for (i = 0; i < json_object_array_length(all); i++) {
		struct json_object *o = json_object_array_get_idx(all, i);

		if (trace_is_ingress_of(o, &r->front))
			check_line(r, s, o, count);
	}
	json_object_put(all);
	for (id = 0; id < TOTAL; id++)
		s->missing += !count[id];
}

static void check_trace(struct run *r)
{
	bool broken = r->shape == BROKEN;
	struct seen s = { 0 };

	read_trace(r, &s);
	printf("trace: %d requests of %s, %d unmatched, %d missing, %d twice, %d wrong status, "
	       "%d without exactly their call, %d flagged, %d unclaimed with a wrong cause\n",
	       s.lines, FRONT, s.unmatched, s.missing, s.twice, s.bad_status, s.bad_egress,
	       s.flagged, s.wrong_cause);
	truth__print(&s.tally, FRONT);
	ASSERT_EQ(s.lines, TOTAL, "trace: requests reported");
	ASSERT_EQ(s.unmatched + s.missing + s.twice, 0, "trace: each request exactly once");
	ASSERT_EQ(s.bad_status, 0, "trace: statuses as the client got them");
	ASSERT_EQ(s.bad_egress, 0, "trace: requests without exactly their own call");
	ASSERT_EQ(s.tally.wrong, 0, "verdicts: wrong");
	ASSERT_EQ(s.wrong_cause, 0, "verdicts: unclaimed, caused by another than the backend");
	ASSERT_EQ(s.tally.unchecked, 0, "verdicts: failures the client did not see");
	if (!broken) {
		ASSERT_EQ(s.flagged, 0, "trace: requests flagged");
		ASSERT_EQ(s.tally.unknown, 0, "verdicts: unknown");
		ASSERT_EQ(s.tally.right, r->failed, "verdicts: right");
		return;
	}
	printf("request %d (broken framing): verdict \"%s\", rule \"%s\", flags %s\n", BREAK_ID,
	       s.broken_verdict, s.broken_rule, s.broken_flags);
	if (!ASSERT_TRUE(s.broken_seen, "broken request reported"))
		return;
	ASSERT_TRUE(strcmp(s.broken_verdict, "claimed") && strcmp(s.broken_verdict, "unclaimed"),
		    "broken request: no confident verdict");
	ASSERT_STREQ(s.broken_rule, "framing-lost", "broken request: rule");
	ASSERT_TRUE(strstr(s.broken_flags, "\"framing-lost\"") != NULL,
		    "broken request: flagged framing-lost");
	/* The broken call, and at most the next one on its connection, which heals it. */
	ASSERT_GE(s.tally.unknown, 1, "verdicts: unknown");
	ASSERT_LE(s.tally.unknown, 2, "verdicts: unknown");
	ASSERT_EQ(s.tally.right + s.tally.unknown, r->failed, "verdicts: right or unknown");
}

static void check_kernel(const struct run *r)
{
	const char *args[] = { "status", NULL };
	struct json_object *st = claimctl_json(&r->h, args), *k = j_get(st, "kernel");
	long long lost = j_int(k, "framing_lost"), healed = j_int(k, "framing_healed");

	if (!ASSERT_OK_PTR(k, "status: kernel"))
		goto out;
	printf("kernel: framing_lost %lld, framing_healed %lld, requests_unknown_framing_lost "
	       "%lld, "
	       "calls_answer_lost %lld, parse_errors %lld, tls_connections %lld, "
	       "tls_calls_without_socket %lld, tls_calls_tied_by_read %lld\n",
	       lost, healed, j_int(k, "requests_unknown_framing_lost"),
	       j_int(k, "calls_answer_lost"), j_int(k, "parse_errors"), j_int(k, "tls_connections"),
	       j_int(k, "tls_calls_without_socket"), j_int(k, "tls_calls_tied_by_read"));
	ASSERT_EQ(j_int(k, "ringbuf_drops"), 0, "kernel: ring buffer drops");
	if (r->shape == BROKEN) {
		ASSERT_GE(lost, 1, "kernel: framing lost");
		ASSERT_GE(healed, 1, "kernel: framing healed");
	} else {
		ASSERT_EQ(lost, 0, "kernel: framing lost");
	}
	if (shape_tls(r)) {
		ASSERT_GE(j_int(k, "tls_connections"), TOTAL, "kernel: TLS connections");
		ASSERT_EQ(j_int(k, "tls_calls_without_socket"), 0, "kernel: SSL calls untied");
		/* No SSL call here makes a system call: each is tied by the socket I/O before it. */
		ASSERT_GT(j_int(k, "tls_calls_tied_by_read"), 0, "kernel: SSL calls tied by read");
	}
out:
	json_object_put(st);
}

/* The proxy did what the shape says (its stats, written when it stops). */
static void check_pool(const struct run *r)
{
	static char buf[4096];
	struct json_object *s;

	if (!ASSERT_GT(read_file(r->stats, buf, sizeof(buf)), 0, "proxy stats"))
		return;
	printf("pool_proxy: %s", buf);
	s = json_tokener_parse(buf);
	ASSERT_GT(j_int(s, "reused_other"), 0, "pool: calls on connections another thread opened");
	ASSERT_EQ(j_int(s, "probed_alive"), j_int(s, "reused"), "pool: every reuse probed");
	ASSERT_GE(j_int(s, "head_iovecs"), 8, "pool: iovecs of a request head");
	if (r->shape == BROKEN) {
		ASSERT_GT(j_int(s, "break_iovecs"), FRAMED_IOV, "pool: iovecs of the broken head");
		/* The edge's count includes them: the connection was followed again. */
		ASSERT_GT(j_int(s, "after_break"), 0,
			  "pool: calls on the broken connection after it");
	}
	json_object_put(s);
}

static void run_shape(enum shape shape)
{
	struct run *r = calloc(1, sizeof(*r));
	char bepid[16], frontpid[16];
	const char *extra[] = { "--pid", bepid, "--pid", frontpid, NULL };
	int port, id;

	if (!ASSERT_OK_PTR(r, "alloc"))
		return;
	r->shape = shape;
	for (id = 0; id < TOTAL; id++) {
		char target[32];

		snprintf(target, sizeof(target), "/r/%d", id);
		r->hash[id] = truth__target_hash(target);
	}
	if (!ASSERT_OK(tmpdir_make(r->h.dir, sizeof(r->h.dir)), "tmpdir"))
		goto out;
	if (shape_tls(r) && !ASSERT_OK(make_cert(r), "certificate"))
		goto out;
	if (!ASSERT_OK(svc_start(&r->be,
				 &(struct svc_spec){
					 .name = BACKEND, .fail_mod = FAIL_MOD, .keepalive = true },
				 r->h.dir),
		       "backend"))
		goto out;
	r->front = front_start(r, &port);
	if (!ASSERT_GT(r->front, 0, "front"))
		goto out;
	snprintf(bepid, sizeof(bepid), "%d", r->be.pid);
	snprintf(frontpid, sizeof(frontpid), "%d", r->front);
	if (!ASSERT_OK(claimd_start(&r->h, extra), "claimd start") ||
	    !ASSERT_OK(trace_start(&r->t, &r->h), "trace"))
		goto out;
	if (drive(r, port))
		goto out;
	check_client(r);
	check_edge(r);
	check_trace(r);
	check_kernel(r);
	if (shape != SESSION) {
		proc_stop(r->front, 5000); /* it writes its stats */
		r->front = 0;
		check_pool(r);
	}
out:
	if (test__failed_now())
		claimd_print_log(&r->h);
	trace_stop(&r->t);
	if (r->front > 0)
		proc_stop(r->front, 2000);
	svc_stop(&r->be);
	claimd_stop(&r->h);
	if (r->h.dir[0])
		tmpdir_remove(r->h.dir);
	free(r);
}

void test_shapes(void)
{
	if (!test__need_root())
		return;
	if (test__start_subtest("pool_proxy"))
		run_shape(POOL);
	if (test__start_subtest("pool_proxy_tls"))
		run_shape(POOL_TLS);
	if (test__start_subtest("requests_session"))
		run_shape(SESSION);
	if (test__start_subtest("broken_framing"))
		run_shape(BROKEN);
}
