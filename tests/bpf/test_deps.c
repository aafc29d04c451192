// SPDX-License-Identifier: GPL-2.0
/*
 * Dependencies that speak no HTTP: redis-server, PostgreSQL 15 and MariaDB,
 * each over TCP and over its socket file, called by a threaded Python
 * service through the real client library (redis-py, psycopg2 on libpq,
 * PyMySQL) from a pool its handler threads share. The dependency answers
 * every fifth request's call with an error reply (tests/peers/dep_service.py):
 *
 *  - a service that passes those errors up (503): its edge to the
 *    dependency's listening process has every call (its requests', and
 *    those it made before serving: its pool's logins), the 20 failures
 *    both failed, fail-close; its failures are unclaimed, the dependency
 *    their cause;
 *  - a service that swallows them (a cache miss) and fails on its own
 *    for other requests: fail-open, its own failures claimed;
 *  - a pool opened before the service listened (its logins made before
 *    it serves anything): over TCP the same as passing up; over a socket
 *    file, whose connections claimd follows only once their process
 *    serves, joined mid-stream (below);
 *  - a claimd started after the service, which joins its connections
 *    mid-stream: a Redis command written whole tells what a connection
 *    over a socket file speaks; over TCP, and for PostgreSQL and MySQL,
 *    whose first bytes (the login) went unseen, it is not known: unknown.
 *
 *  - the cache on its socket file dead under the service (redis_down_unix),
 *    or dead before the service ever reached it: a file claimd knows for
 *    a service's from its listener, not a probe; or stopped cleanly, its
 *    file gone, before claimd started: known only when the operator names
 *    it (--dependency-socket); a cache over TCP whose
 *    errors are swallowed, dead under a service that fails on its own
 *    after its call: its edge, by its name kept, still fail-open;
 *
 *  - PostgreSQL offering TLS, which libpq's default negotiates: the
 *    framing is left, never a claim.
 *
 * Every verdict is tallied against that truth: 0 wrong.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "depservers.h"
#include "edge_expect.h"
#include "harness.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"
#include "unixaddr.h"

#define REQUESTS 100
#define FAIL_MOD 5 /* the dependency fails ids % 5 == 0; a swallowing service, % 5 == 1 */

#define POOL 4 /* connections in the service's pool (dep_service.py --threads) */

/* OWN_FAILURES: none planned from the dependency; LAZY_OWN_FAILURES too, its first call its first connect. */
enum shape {
	PASSES_UP,
	SWALLOWS,
	POOL_FIRST,
	JOINED,
	OVER_TLS,
	OWN_FAILURES,
	LAZY_OWN_FAILURES,
	SWALLOWS_FAILS_AFTER /* swallows, and fails on its own after its call */
};

/*
 * The calls a service makes once it listens and before it serves: Redis,
 * the SET of the key its failing calls use; PostgreSQL and MySQL, its
 * pool's logins. Tied to no request, they are on its edge all the same.
 */
static int startup_calls(enum dep_kind kind)
{
	return kind == DEP_REDIS ? 1 : POOL;
}

struct dep_svc {
	pid_t pid;
	int port;
	char name[32];
	char log[H_PATH]; /* its stdout and stderr: unplanned dependency errors */
};

/* dep_service.py, as name, calling d over TCP or its socket file. 0 or -1. */
static int dep_svc_start(struct dep_svc *s, const char *name, const struct dep_server *d,
			 bool over_unix, enum shape shape, const char *dir)
{
	char script[H_PATH], ready[H_PATH], env[64], buf[32], pool[8];
	const char *argv[20] = { "/usr/bin/python3",
				 script,
				 "--dep",
				 dep_kind_name(d->kind),
				 "--addr",
				 over_unix ? d->unix_addr : d->tcp_addr,
				 "--ready-file",
				 ready,
				 "--threads",
				 pool };
	const char *envv[] = { env, NULL };
	int n = 10;

	snprintf(pool, sizeof(pool), "%d", POOL);
	snprintf(s->name, sizeof(s->name), "%s", name);
	peer_script("dep_service.py", script, sizeof(script));
	snprintf(ready, sizeof(ready), "%s/ready.%s", dir, name);
	snprintf(s->log, sizeof(s->log), "%s/svc.%s.log", dir, name);
	snprintf(env, sizeof(env), "CLAIMD_SERVICE=%s", name);
	if (shape == SWALLOWS || shape == SWALLOWS_FAILS_AFTER)
		argv[n++] = "--swallow";
	if (shape == SWALLOWS_FAILS_AFTER)
		argv[n++] = "--fail-after";
	if (shape == LAZY_OWN_FAILURES)
		argv[n++] = "--lazy";
	if (shape == OWN_FAILURES || shape == LAZY_OWN_FAILURES) {
		/* No planned error from the dependency. */
		argv[n++] = "--dep-fail-mod";
		argv[n++] = "0";
	}
	/* Its own failures, for ids % 5 == 1. */
	if (shape == SWALLOWS || shape == OWN_FAILURES || shape == LAZY_OWN_FAILURES ||
	    shape == SWALLOWS_FAILS_AFTER) {
		argv[n++] = "--fail-mod";
		argv[n++] = "5";
		argv[n++] = "--fail-rem";
		argv[n++] = "1";
	}
	if (shape == POOL_FIRST || shape == JOINED)
		argv[n++] = "--pool-first";
	unlink(ready);
	s->pid = proc_spawn(argv, envv, s->log);
	if (s->pid <= 0 || wait_file(ready, 20000) || read_file(ready, buf, sizeof(buf)) <= 0) {
		char text[4096];

		read_file(s->log, text, sizeof(text));
		printf("service %s did not start; its log:\n%s\n", name, text);
		return -1;
	}
	s->port = atoi(buf);
	return 0;
}

/* Stops it; started, then failed: what it said (a start's failure printed it already). */
static void dep_svc_stop(struct dep_svc *s)
{
	if (test__failed_now() && s->port > 0)
		file_print("the service's log", s->log);
	if (s->pid > 0)
		proc_stop(s->pid, 5000);
	s->pid = 0;
}

/*
 * The edge name -> callee as operators see it: in claimctl graph (the
 * map's and the storm analysis's source) and in /metrics (where claimd
 * says it serves it), with every call.
 */
static void check_exports(const struct claimd_h *h, const char *name, const char *callee, int calls)
{
	struct json_object *g = claimctl_json(h, (const char *const[]){ "graph", NULL });
	struct json_object *edges = j_get(g, "edges");
	static char text[1 << 20];
	char url[96];
	const char *argv[] = { "curl", "-s", url, NULL };
	char want[H_PATH * 2];
	const char *line;
	long long graph_calls = -1, metric_calls = -1;
	int i;

	for (i = 0; edges && i < (int)json_object_array_length(edges); i++) {
		struct json_object *e = json_object_array_get_idx(edges, i);

		if (!strcmp(j_str(e, "caller"), name) && !strcmp(j_str(e, "callee"), callee))
			graph_calls = j_int(e, "calls");
	}
	json_object_put(g);
	ASSERT_EQ(graph_calls, calls, "claimctl graph: the edge's calls");
	/* Where this claimd serves /metrics, as it says. */
	g = claimctl_json(h, (const char *const[]){ "status", NULL });
	snprintf(url, sizeof(url), "%smetrics", j_str(g, "metrics"));
	json_object_put(g);
	if (!ASSERT_OK(proc_run(argv, text, sizeof(text), 10000), "curl /metrics"))
		return;
	snprintf(want, sizeof(want), "caller=\"%s\",callee=\"%s\"", name, callee);
	for (line = text; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *end = strchr(line, '\n'), *hit = strstr(line, want);

		if (!strncmp(line, "claimd_edge_calls_total{", 24) && hit && (!end || hit < end))
			metric_calls = atoll(strchr(hit, '}') + 1);
	}
	ASSERT_EQ(metric_calls, calls, "claimd_edge_calls_total");
}

/*
 * The trace's failed requests of pid from mark on whose cause is a call of
 * protocol proto answered with an error reply: what claimctl trace shows.
 */
static int error_reply_causes(const struct trace_cap *t, size_t mark, pid_t pid, const char *proto)
{
	struct json_object *lines = trace_read_from(t, mark);
	int i, n = 0;

	for (i = 0; i < (int)json_object_array_length(lines); i++) {
		struct json_object *rec = json_object_array_get_idx(lines, i);
		struct json_object *cause = j_get(rec, "cause");
		struct json_object *eg = j_get(rec, "egress"), *call;

		if (j_int(rec, "pid") != pid || !cause || !eg)
			continue;
		call = json_object_array_get_idx(eg, j_int(cause, "egress"));
		n += call && !strcmp(j_str(call, "protocol"), proto) && j_bool(call, "error_reply");
	}
	json_object_put(lines);
	return n;
}

/*
 * Does claimd join the connections of this shape mid-stream, not knowing
 * what they speak? A late claimd's over TCP; over a socket file, those
 * made before their process served, unless a Redis command tells it.
 */
static bool joined_blind(enum shape shape, bool over_unix, enum dep_kind kind)
{
	if (shape == JOINED)
		return !over_unix;
	return shape == POOL_FIRST && over_unix && kind != DEP_REDIS;
}

/* One service of the given shape against d: its edge and its verdicts checked. */
static void run(struct claimd_h *h, struct trace_cap *t, const struct dep_server *d, bool over_unix,
		enum shape shape)
{
	static const char *const shapes[] = { "up", "sw", "pf", "jn", "tl" };
	static const char *const late_extra[] = { "--metrics", "none", NULL };
	char name[32], callee[H_PATH + 32];
	struct dep_svc s = { 0 };
	struct claimd_h late = { 0 };
	struct trace_cap lt = { 0 };
	struct truth_tally tally = { 0 };
	struct truth_svc truth = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	int fails = REQUESTS / FAIL_MOD;
	size_t mark;

	snprintf(name, sizeof(name), "%s-%s-%s", dep_kind_name(d->kind), over_unix ? "unix" : "tcp",
		 shapes[shape]);
	dep_server_callee(d, over_unix, callee, sizeof(callee));
	if (!ASSERT_OK(dep_svc_start(&s, name, d, over_unix, shape, h->dir), "service start"))
		goto out;
	if (shape == JOINED) {
		/* A claimd of its own, started once s is up: it joins s's connections mid-stream. */
		snprintf(late.pin, sizeof(late.pin), "/sys/fs/bpf/claimd-test-%d-late", getpid());
		if (claimd_traced_start(&late, &lt, late_extra))
			goto out;
		h = &late;
		t = &lt;
	}
	mark = trace_mark(t);
	ASSERT_EQ(svc_drive(s.port, REQUESTS), fails, "failures the client saw");
	truth.pid = s.pid;
	truth.service = name;
	truth.verdict = "unclaimed";
	truth.cause = callee;
	if (shape == SWALLOWS) {
		/* Its own failures make no call: 80 calls, the dependency's 20 failures among them. */
		edge_expect(h, name, callee,
			    &(struct edge_want){ REQUESTS - fails + startup_calls(d->kind), fails,
						 0, "fail-open" },
			    name);
		truth.verdict = "claimed";
		truth.cause = "";
		truth.rem = 1;
	} else if (shape != OVER_TLS && !joined_blind(shape, over_unix, d->kind)) {
		/* A pool opened before listening made its calls as a root caller. */
		int startup = shape == PASSES_UP ? startup_calls(d->kind) : 0;

		edge_expect(h, name, callee,
			    &(struct edge_want){ REQUESTS + startup, fails, fails, "fail-close" },
			    name);
	}
	truth__tally_trace(&tally, t, mark, &truth, 1, fails);
	if (shape == OVER_TLS) {
		/* Whatever claimd makes of it, never claimed, and every failure recorded. */
		truth__expect(&tally, name, -1, -1);
		ASSERT_EQ(tally.right + tally.unknown, fails, "every failure recorded");
	} else if (joined_blind(shape, over_unix, d->kind))
		truth__expect(&tally, name, 0, fails);
	else
		truth__expect(&tally, name, fails, 0);
	if (shape == PASSES_UP)
		check_exports(h, name, callee, REQUESTS + startup_calls(d->kind));
	if (shape == PASSES_UP)
		ASSERT_EQ(error_reply_causes(t, mark, s.pid, dep_kind_name(d->kind)), fails,
			  "causes: the dependency's error replies, its protocol named");
out:
	if (late.dir[0])
		claimd_traced_stop(&late, &lt);
	dep_svc_stop(&s);
}

/*
 * The causes of the failed requests of pid from mark on that are not its
 * own (500): how many are a transport failure of a call to the socket file
 * at path (its address headers/unixaddr.h's hash of its name), named as
 * callee (its server's name, kept once the server is gone).
 */
static int causes_on_file(const struct trace_cap *t, size_t mark, pid_t pid, const char *path,
			  const char *callee)
{
	struct json_object *lines = trace_read_from(t, mark);
	__u64 h = CLAIMD_UNIX_FNV_BASIS;
	char want[64];
	int i, n = 0;

	for (i = 0; path[i]; i++)
		h = claimd_unix_hash_step(h, (__u8)path[i]);
	snprintf(want, sizeof(want), "unix:#%016llx", (unsigned long long)h);
	for (i = 0; i < (int)json_object_array_length(lines); i++) {
		struct json_object *rec = json_object_array_get_idx(lines, i);
		struct json_object *cause = j_get(rec, "cause");
		struct json_object *call;

		if (j_int(rec, "pid") != pid || j_int(rec, "status") == 500 || !cause)
			continue;
		call = json_object_array_get_idx(j_get(rec, "egress"), j_int(cause, "egress"));
		n += call && !strcmp(j_str(call, "addr"), want) &&
		     j_bool(call, "transport_failure") && !strcmp(j_str(cause, "callee"), callee);
	}
	json_object_put(lines);
	return n;
}

/*
 * The cache dies under a service that reaches it over its socket file:
 * killed (its file left behind: every connect refused), then its file
 * gone (no such file). redis-py finds its pooled connections closed and
 * connects again, and passes each failure up (503). No byte moves on a
 * connect that fails, and no socket state changes: only the hook on Unix
 * connects sees it (bpf/connects.c). Each 503 is unclaimed, its cause
 * the connect to that file; the service's own failures (500) claimed.
 *
 * DOWN_BEFORE_USE: the cache dies before the service ever reached it
 * (started after, connecting at its first call). No followed connection
 * ever used its file: claimd knows it for a service's from its listener,
 * seen while the cache lived (kernel/unix_served.h), not for a probe.
 *
 * DOWN_BEFORE_CLAIMD: the cache died before claimd started (an operator
 * starting it in the middle of an outage), and claimd never saw it
 * listen. The service's first connect to the file asks claimd what it is
 * (bpf/connects.c); that request's failure is unknown meanwhile, or
 * already unclaimed, never claimed. A socket file nobody listens on is a
 * dead server's: every failure after is unclaimed, its cause the file.
 *
 * STOPPED_BEFORE_CLAIMD: the cache was stopped cleanly before claimd
 * started, and took its file away at shutdown: nothing there tells a
 * dependency's name from a probe's. The operator names the file
 * (--dependency-socket): every failure is unclaimed from the first, its
 * cause the file.
 *
 * STOPPED_THEN_RESTARTED: claimd saw the cache listen; the cache was then
 * stopped cleanly, its file gone, and claimd started again. The names of
 * socket files served are kept with the state (departed.json): every
 * failure is unclaimed from the first, its cause the file.
 */
enum cache_death {
	DOWN_AFTER_USE,
	DOWN_BEFORE_USE,
	DOWN_BEFORE_CLAIMD,
	STOPPED_BEFORE_CLAIMD,
	STOPPED_THEN_RESTARTED
};

static void redis_kill(struct dep_server *d)
{
	kill(d->pid, SIGKILL);
	proc_wait(d->pid, 5000);
	d->pid = 0;
}

/* The first request after the cache died before claimd: never claimed; its name then learned. */
static bool first_connect_asks(struct claimd_h *h, struct trace_cap *t, pid_t pid, int port)
{
	struct truth_svc truth = { .service = "redis-down-early",
				   .pid = pid,
				   .verdict = "unclaimed",
				   .target = "/r/%d",
				   .ids = 1 };
	struct truth_tally tally = { 0 };
	size_t mark = trace_mark(t);

	ASSERT_EQ(http_get(port, "/r/0"), 503, "the first request: the cache's failure passed up");
	truth__tally_trace(&tally, t, mark, &truth, 1, 1);
	truth__expect(&tally, "the first connect to a file never seen served", -1, -1);
	ASSERT_EQ(tally.right + tally.unknown, 1, "its failure unclaimed or unknown");
	return ASSERT_TRUE(claimd_status_reaches(h, "socket_files_found_dead", 1),
			   "a socket file found there, nobody listening");
}

/* --dependency-socket takes a socket file's name, and not a probe's: else a usage error. */
static void dependency_socket_refused(const char *arg, const char *says)
{
	char claimd[H_PATH], out[1024] = "";
	const char *argv[] = { claimd, "--dependency-socket", arg, NULL };
	int status;

	snprintf(claimd, sizeof(claimd), "%s/claimd", test__build_dir());
	status = proc_run(argv, out, sizeof(out), 10000);
	ASSERT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 64, arg);
	ASSERT_OK_PTR(strstr(out, says), out);
}

/* redis-server stopped as its init system stops it: its socket file goes with it. */
static void redis_stop(struct dep_server *d)
{
	kill(d->pid, SIGTERM);
	if (proc_wait(d->pid, 10000) == -1)
		proc_stop(d->pid, 1000);
	d->pid = 0;
	ASSERT_TRUE(access(d->sock, F_OK) == -1 && errno == ENOENT,
		    "redis-server took its socket file away at shutdown");
}

/*
 * The cache d dies (when) before the service first calls it, with claimd
 * at h (its trace t) started again where the case says. false when that
 * failed.
 */
static bool cache_dies_early(struct claimd_h *h, struct trace_cap *t, struct dep_server *d,
			     enum cache_death when, long long learned)
{
	const char *listed[] = { "--dependency-socket", d->sock, NULL };

	switch (when) {
	case DOWN_AFTER_USE:
		return true;
	case DOWN_BEFORE_USE:
	case STOPPED_THEN_RESTARTED:
		/* Its listener seen once (claimd looks every few seconds), then it dies. */
		if (!ASSERT_TRUE(claimd_status_reaches(h, "socket_files_learned", learned + 1),
				 "the cache's socket file learned from its listener"))
			return false;
		if (when == DOWN_BEFORE_USE) {
			redis_kill(d);
			return true;
		}
		/* Stopped, its file gone; claimd started again, its state kept. */
		redis_stop(d);
		trace_stop(t);
		claimd_stop(h);
		return ASSERT_OK(claimd_start(h, NULL), "claimd started again") &&
		       ASSERT_OK(trace_start(t, h), "trace");
	case DOWN_BEFORE_CLAIMD:
		/* Dead, its file left, before a claimd starts: this one never saw it listen. */
		redis_kill(d);
		claimd_traced_stop(h, t);
		return !claimd_traced_start(h, t, NULL);
	case STOPPED_BEFORE_CLAIMD:
		/* Stopped, its file gone, before a claimd told of the file starts. */
		redis_stop(d);
		claimd_traced_stop(h, t);
		return !claimd_traced_start(h, t, listed);
	}
	return false;
}

static void redis_down_unix(struct claimd_h *h, struct trace_cap *t, enum cache_death when)
{
	static const char *const phases[] = { "refused", "no such file" };
	static const char *const names[] = { "redis-down", "redis-down-first", "redis-down-early",
					     "redis-stopped-early", "redis-stopped-restart" };
	int stopped = when == STOPPED_BEFORE_CLAIMD || when == STOPPED_THEN_RESTARTED;
	struct dep_server d = { 0 };
	struct dep_svc s = { 0 };
	long long failed_before = claimd_status_count(h, "connects_failed_at_once", true);
	long long learned = claimd_status_count(h, "socket_files_learned", false);
	char path[H_PATH], callee[H_PATH + 32];
	int phase;

	if (!ASSERT_OK(dep_server_start(&d, DEP_REDIS, false), "redis"))
		goto out;
	snprintf(path, sizeof(path), "%s", d.sock);
	/* Named by its server, or, never seen served, by its path. */
	if (when != DOWN_AFTER_USE)
		snprintf(callee, sizeof(callee), "unix:%s", path);
	else
		dep_server_callee(&d, true, callee, sizeof(callee));
	if (!cache_dies_early(h, t, &d, when, learned))
		goto out;
	if (when != DOWN_AFTER_USE)
		failed_before = claimd_status_count(h, "connects_failed_at_once", true);
	if (!ASSERT_OK(dep_svc_start(&s, names[when], &d, true,
				     when == DOWN_AFTER_USE ? OWN_FAILURES : LAZY_OWN_FAILURES,
				     h->dir),
		       "service start"))
		goto out;
	if (when == DOWN_AFTER_USE) {
		ASSERT_EQ(svc_drive(s.port, REQUESTS), REQUESTS / FAIL_MOD,
			  "the cache up: own failures");
		/* Their records all in before the next mark: none of them taken for the next phase's. */
		ASSERT_GE(trace_wait(t, trace_is_ingress_of, &s.pid, REQUESTS, 10000), REQUESTS,
			  "the cache up: each request's record");
		redis_kill(&d);
	} else if (when == DOWN_BEFORE_CLAIMD && !first_connect_asks(h, t, s.pid, s.port)) {
		goto out;
	}
	/* A cache stopped cleanly left no file: no phase where connects are refused. */
	for (phase = stopped; phase < 2; phase++) {
		struct truth_svc truth[2];
		struct truth_tally tally = { 0 };
		char what[64];
		size_t mark;

		truth__own_or_passed(truth, s.pid, "/r/%d", REQUESTS, FAIL_MOD, 1, NULL);
		if (phase == 1 && !stopped)
			ASSERT_OK(unlink(path), "its socket file removed");
		mark = trace_mark(t);
		ASSERT_EQ(svc_drive(s.port, REQUESTS), REQUESTS, "every request failed");
		truth__tally_trace(&tally, t, mark, truth, 2, REQUESTS);
		snprintf(what, sizeof(what), "redis down (%s)", phases[phase]);
		truth__expect(&tally, what, REQUESTS, 0);
		ASSERT_EQ(causes_on_file(t, mark, s.pid, path, callee),
			  REQUESTS - REQUESTS / FAIL_MOD,
			  "each 503's cause: a connect to the socket file that failed, named");
	}
	ASSERT_GE(claimd_status_count(h, "connects_failed_at_once", true) - failed_before,
		  (2 - stopped) * (REQUESTS - REQUESTS / FAIL_MOD), "failed connects counted");
out:
	dep_svc_stop(&s);
	dep_server_stop(&d);
}

/*
 * A cache over TCP whose errors the service swallows (a miss), the
 * service failing on its own after its call for some requests, killed
 * under it: each call refused and swallowed, and each of the service's
 * own failures has a failed call. The edge is fail-open, learned while
 * the cache lived. The cache's name outlives its process (model/names.c),
 * so the refused calls stay on that edge and each own failure is claimed
 * (a fail-open edge's failure cannot be its cause), where an edge to an
 * address never seen before would have unclaimed them.
 */
static void cache_down_swallowed(struct claimd_h *h, struct trace_cap *t, bool restart)
{
	const char *name = restart ? "redis-tcp-swrestart" : "redis-tcp-swdown";
	struct dep_server d = { 0 };
	struct dep_svc s = { 0 };
	char callee[H_PATH + 32];
	/* Claimed for the cache's failed call, on its fail-open edge. */
	struct truth_svc truth = { .service = name,
				   .verdict = "claimed",
				   .cause = callee,
				   .target = "/r/%d",
				   .ids = REQUESTS,
				   .mod = FAIL_MOD,
				   .rem = 1 };
	struct truth_tally tally = { 0 };
	int fails = REQUESTS / FAIL_MOD;
	size_t mark;

	if (!ASSERT_OK(dep_server_start(&d, DEP_REDIS, false), "redis"))
		goto out;
	dep_server_callee(&d, false, callee, sizeof(callee));
	if (!ASSERT_OK(dep_svc_start(&s, name, &d, false, SWALLOWS_FAILS_AFTER, h->dir),
		       "service start"))
		goto out;
	truth.pid = s.pid;
	ASSERT_EQ(svc_drive(s.port, REQUESTS), fails, "the cache up: its own failures");
	/* Every request calls: the dependency's 20 failures swallowed, none both failed. */
	edge_expect(h, name, callee,
		    &(struct edge_want){ REQUESTS + startup_calls(d.kind), fails, 0, "fail-open" },
		    "the cache up");
	redis_kill(&d);
	/* claimd started again, its state kept: the memory, and the name of the cache gone. */
	if (restart) {
		trace_stop(t);
		claimd_stop(h);
		if (!ASSERT_OK(claimd_start(h, NULL), "claimd started again") ||
		    !ASSERT_OK(trace_start(t, h), "trace"))
			goto out;
		mark = trace_mark(t);
	}
	/* A few requests first, then what they met is synced into the kernel. */
	ASSERT_EQ(svc_drive(s.port, 2 * FAIL_MOD), 2, "the cache gone: its own failures");
	ASSERT_TRUE(claimd_ticks_wait(h, 2), "claimd ticked");
	mark = trace_mark(t);
	ASSERT_EQ(svc_drive(s.port, REQUESTS), fails, "the cache gone: its own failures, again");
	truth__tally_trace(&tally, t, mark, &truth, 1, fails);
	truth__expect(&tally, "its own failures, the swallowed cache gone", fails, 0);
	/* Every call since refused, on the cache's edge: still fail-open. */
	if (!restart)
		edge_expect(h, name, callee,
			    &(struct edge_want){
				    2 * REQUESTS + 2 * FAIL_MOD + startup_calls(d.kind),
				    fails + 2 * FAIL_MOD + REQUESTS, 2 + fails, "fail-open" },
			    "the cache gone");
	else
		edge_expect(h, name, callee,
			    &(struct edge_want){ REQUESTS + 2 * FAIL_MOD, REQUESTS + 2 * FAIL_MOD,
						 2 + fails, "fail-open" },
			    "the cache gone, claimd started again");
out:
	dep_svc_stop(&s);
	dep_server_stop(&d);
}

static void run_kind(struct claimd_h *h, struct trace_cap *t, enum dep_kind kind)
{
	struct dep_server d = { 0 };
	char sub[64];

	if (!ASSERT_OK(dep_server_start(&d, kind, false), dep_kind_name(kind)))
		goto out;
	snprintf(sub, sizeof(sub), "%s_tcp", dep_kind_name(kind));
	if (test__start_subtest(sub))
		run(h, t, &d, false, PASSES_UP);
	snprintf(sub, sizeof(sub), "%s_unix", dep_kind_name(kind));
	if (test__start_subtest(sub))
		run(h, t, &d, true, PASSES_UP);
	/* Swallowed errors: over TCP for Redis, over the socket file for the others. */
	snprintf(sub, sizeof(sub), "%s_swallowed", dep_kind_name(kind));
	if (test__start_subtest(sub))
		run(h, t, &d, kind != DEP_REDIS, SWALLOWS);
	snprintf(sub, sizeof(sub), "%s_pool_before_listen", dep_kind_name(kind));
	if (test__start_subtest(sub))
		run(h, t, &d, kind == DEP_POSTGRES, POOL_FIRST);
	snprintf(sub, sizeof(sub), "%s_joined_tcp", dep_kind_name(kind));
	if (test__start_subtest(sub))
		run(h, t, &d, false, JOINED);
	if (kind == DEP_REDIS && test__start_subtest("redis_joined_unix"))
		run(h, t, &d, true, JOINED);
	if (kind == DEP_REDIS && test__start_subtest("redis_down_unix"))
		redis_down_unix(h, t, DOWN_AFTER_USE);
	if (kind == DEP_REDIS && test__start_subtest("redis_down_before_use"))
		redis_down_unix(h, t, DOWN_BEFORE_USE);
	if (kind == DEP_REDIS && test__start_subtest("redis_swallowed_down_tcp"))
		cache_down_swallowed(h, t, false);
	if (kind == DEP_REDIS && test__start_subtest("redis_swallowed_down_restart"))
		cache_down_swallowed(h, t, true);
	/* The last of Redis's: each starts claimd again. */
	if (kind == DEP_REDIS && test__start_subtest("redis_down_before_claimd"))
		redis_down_unix(h, t, DOWN_BEFORE_CLAIMD);
	if (kind == DEP_REDIS && test__start_subtest("redis_stopped_before_claimd")) {
		dependency_socket_refused("redis.sock", "wants a socket file's path");
		dependency_socket_refused("/run/nscd/socket", "is a probe's");
		redis_down_unix(h, t, STOPPED_BEFORE_CLAIMD);
	}
	if (kind == DEP_REDIS && test__start_subtest("redis_stopped_claimd_restarted"))
		redis_down_unix(h, t, STOPPED_THEN_RESTARTED);
out:
	dep_server_stop(&d);
}

/*
 * PostgreSQL offering TLS: libpq's default (sslmode prefer) negotiates it,
 * and the connection's framing is left (docs/protocols.md). Its
 * plaintext goes through OpenSSL, where claimd frames HTTP only.
 */
static void postgres_tls(struct claimd_h *h, struct trace_cap *t)
{
	struct dep_server d = { 0 };

	if (ASSERT_OK(dep_server_start(&d, DEP_POSTGRES, true), "postgres with TLS"))
		run(h, t, &d, false, OVER_TLS);
	dep_server_stop(&d);
}

void test_dependencies(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };

	if (!test__need_root())
		return;
	if (claimd_traced_start(&h, &t, NULL))
		goto out;
	run_kind(&h, &t, DEP_REDIS);
	run_kind(&h, &t, DEP_POSTGRES);
	run_kind(&h, &t, DEP_MYSQL);
	if (test__start_subtest("postgres_tls"))
		postgres_tls(&h, &t);
out:
	claimd_traced_stop(&h, &t);
}
