// SPDX-License-Identifier: GPL-2.0
/*
 * Go services through the Go probes (bpf/runtimes/go.c), with real Go 1.19
 * programs built here (tests/peers/go/goservice), plain and stripped:
 *
 *  - chain: a Go load driver (4 goroutines, 250 requests) -> Go front ->
 *    Go middle -> Go backend failing every fifth id: the front -> middle and
 *    middle -> backend edges exact (calls, callee failures, both failed),
 *    fail-close, every verdict against the truth (backend claimed, the two
 *    above unclaimed, each caused by the next) with none wrong or unknown,
 *    the services in mode goroutine, the driver's root edge to the front
 *    exact (it serves nothing: counted in the kernel as root calls), and the
 *    answers the driver got exactly what the programs give without claimd
 *    (every fifth id 502, others 200);
 *  - stripped: the same chain with the binaries built -ldflags=-s -w (no
 *    symbols, no DWARF: .gopclntab and the offset table are enough);
 *  - tls: the same chain over TLS (Go's crypto/tls, HTTP/1.1): the
 *    server's socket found under the *tls.Conn;
 *  - fanout: a Go handler calling three backends each on a goroutine it
 *    starts (WaitGroup), the second failing every fifth id: each request
 *    with its three calls, inside its own lifetime, its failures unclaimed
 *    and caused by the failing backend; each edge exact;
 *  - fanout_wait: a fan-out handler that stops waiting after 250 ms and
 *    answers 504, its calls still running, in front of a backend slow
 *    where it would fail: those failures unknown (unfinished-call), none
 *    claimed;
 *  - tls_calls: a plain front calling a backend over TLS: its calls unseen,
 *    its failures unknown, none claimed;
 *  - callee_down: a plain front whose callee is down (its dial refused on
 *    a goroutine of net/http's own): its failures unknown, none claimed;
 *  - callee_down_unix: the same over a socket file, the backend stopped
 *    (no state change shows that dial fail: the hook on Unix connects);
 *  - handler_dials_unix: a handler dialing its backend's socket file on
 *    its own goroutine (as go-redis does), the backend stopped: each
 *    failure passed up unclaimed, the service's own claimed, none unknown;
 *  - pool: a handler handing its call to workers started before any request
 *    (through a channel): the calls cannot be tied to their requests, so
 *    the service's failures are unknown (untied-call), never claimed;
 *  - started_before: a Go chain serving, its keep-alive connections open,
 *    before claimd starts: followed as exactly from claimd's start on;
 *  - no_go: claimd --no-go, the same chain followed by syscalls, taken
 *    for multiplexed (Go), its calls tied as relays: every verdict right;
 *  - grpc, grpc_stripped: grpc-go unary (goservice grpc-serve), a
 *    driver -> front -> backend failing every fifth id with UNAVAILABLE:
 *    the front -> backend edge exact and fail-close, the front's failures
 *    unclaimed, the backend's claimed, none wrong or unknown;
 *  - go_version_refused, grpc_version_refused: goservice copied with its Go
 *    version (go1.29) or its grpc-go version (1.93) rewritten, outside the
 *    offset table: refused, said in the log and counted, never probed; a
 *    pair run from it stays with the syscall path, taken for multiplexed:
 *    its calls tied as relays, or, not relays, tied to nothing (unknown).
 * Every Go process must live until the test stops it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probes/go/goexec.h"
#include "gopatch.h"
#include "harness.h"
#include "services.h"
#include "sockets.h"
#include "test_progs.h"
#include "truth.h"

#define CLIENTS	 4
#define REQUESTS 250
#define FAIL_MOD 5
#define FAILURES (REQUESTS / FAIL_MOD)
#define GO_MAX	 4

struct gosvc {
	pid_t pid;
	int port;
	bool tls;
	char name[32];
};

struct gorun {
	struct claimd_h *h;
	const char *exe; /* goservice or goservice.stripped, or a full path */
	bool tls;	 /* services serve over TLS */
	bool grpc;	 /* gRPC (grpc-serve, grpc-load): addresses without a scheme */
	bool gc;	 /* services collect garbage without pause (goservice -gc) */
	bool gives_up;	 /* the front answers its failures 504: it stopped waiting */
	struct gosvc svc[GO_MAX];
	int n;
};

/* The program r runs: a peer built here, or a file named by its full path. */
static const char *exe_of(const struct gorun *r, char *buf, size_t len)
{
	if (r->exe[0] == '/')
		snprintf(buf, len, "%s", r->exe);
	else
		snprintf(buf, len, "%s/tests/go/%s", test__build_dir(), r->exe);
	return buf;
}

/* Starts a goservice named name ('serve' with args); its port once it listens. */
static struct gosvc *go_start(struct gorun *r, const char *name, const char *const args[])
{
	char exe[H_PATH], ready[H_PATH], env[64], buf[32];
	const char *argv[16] = { exe, r->grpc ? "grpc-serve" : "serve", "-ready", ready };
	const char *envv[] = { env, NULL };
	struct gosvc *s = &r->svc[r->n];
	int i, a = 4;

	if (r->n >= GO_MAX)
		return NULL;
	exe_of(r, exe, sizeof(exe));
	snprintf(ready, sizeof(ready), "%s/%s.ready", r->h->dir, name);
	snprintf(env, sizeof(env), "CLAIMD_SERVICE=%s", name);
	if (r->tls)
		argv[a++] = "-tls";
	if (r->gc)
		argv[a++] = "-gc";
	for (i = 0; args && args[i] && a < 15; i++)
		argv[a++] = args[i];
	s->pid = proc_spawn(argv, envv, NULL);
	if (s->pid <= 0 || wait_file(ready, 10000) || read_file(ready, buf, sizeof(buf)) <= 0) {
		printf("%s did not start\n", name);
		return NULL;
	}
	s->port = atoi(buf);
	s->tls = r->tls;
	snprintf(s->name, sizeof(s->name), "%s", name);
	r->n++;
	return s;
}

/* Stops them all; each must have lived until now: no Go process crashed under the probes. */
static void go_stop_all(struct gorun *r)
{
	while (r->n > 0) {
		const struct gosvc *s = &r->svc[--r->n];
		int st = proc_stop(s->pid, 2000);

		if (!ASSERT_TRUE(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, s->name))
			printf("%s: wait status %#x, not stopped by our SIGTERM\n", s->name, st);
	}
}

static const char *url_of(const struct gosvc *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s://127.0.0.1:%d", s->tls ? "https" : "http", s->port);
	return buf;
}

/*
 * The Go driver against s: requests ids (0 ..) from clients goroutines at
 * once. Its summary (per answer how many, and the ids that failed), or
 * NULL (asserted): the caller's to put.
 */
static struct json_object *go_drive(struct gorun *r, const struct gosvc *s, int requests,
				    int clients)
{
	char exe[H_PATH], addr[64], out[H_PATH], n[16], c[16], buf[1 << 16];
	const char *argv[] = { exe,
			       r->grpc ? "grpc-load" : "load",
			       r->grpc ? "-addr" : "-url",
			       addr,
			       "-n",
			       n,
			       "-c",
			       c,
			       "-out",
			       out,
			       NULL };
	const char *envv[] = { "CLAIMD_SERVICE=goload", NULL };
	pid_t pid;

	exe_of(r, exe, sizeof(exe));
	if (r->grpc)
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", s->port);
	else
		url_of(s, addr, sizeof(addr));
	snprintf(out, sizeof(out), "%s/load-%s.json", r->h->dir, s->name);
	snprintf(n, sizeof(n), "%d", requests);
	snprintf(c, sizeof(c), "%d", clients);
	unlink(out);
	pid = proc_spawn(argv, envv, NULL);
	if (!ASSERT_EQ(proc_wait(pid, 120000), 0, "driver") ||
	    !ASSERT_GT(read_file(out, buf, sizeof(buf)), 0, "driver summary"))
		return NULL;
	return json_tokener_parse(buf);
}

/*
 * The Go driver against s: REQUESTS ids from CLIENTS goroutines. Checks its
 * answers are the programs' own: every fifth id failed (502; gRPC
 * UNAVAILABLE), the rest succeeded (200; OK).
 */
static bool go_load(struct gorun *r, const struct gosvc *s)
{
	const char *key = r->grpc ? "codes" : "statuses";
	struct json_object *o = go_drive(r, s, REQUESTS, CLIENTS), *failed;
	size_t i;
	bool ok = true;

	if (!o)
		return false;
	failed = j_get(o, "failed");
	ok &= ASSERT_EQ(j_int(j_get(o, key), r->grpc ? "OK" : "200"), REQUESTS - FAILURES,
			"answers ok");
	ok &= ASSERT_EQ(j_int(j_get(o, key), r->grpc	   ? "Unavailable"
					     : r->gives_up ? "504"
							   : "502"),
			FAILURES, "answers failed");
	for (i = 0; i < json_object_array_length(failed); i++)
		ok &= ASSERT_EQ(json_object_get_int(json_object_array_get_idx(failed, i)) %
					FAIL_MOD,
				0, "only every fifth id failed");
	json_object_put(o);
	return ok;
}

/* Until claimd says it probes the Go program (the processes are marked as they listen). */
static bool go_probed(struct claimd_h *h, int files)
{
	const char *args[] = { "status", NULL };
	long long n = 0;
	int i;

	for (i = 0; i < 50 && n < files; i++) {
		struct json_object *st = claimctl_json(h, args);

		n = j_int(st, "go_files");
		json_object_put(st);
		if (n < files)
			sleep_ms(200);
	}
	/* The listen records of the later processes reach claimd within its drain timer. */
	sleep_ms(500);
	return ASSERT_GE(n, files, "claimd probes the Go program");
}

/*
 * Goroutine lineage is probed once a serving Go program calls from a
 * goroutine tied to no request (docs/go.md): a pair of its own (prefix:
 * their names), its front fanning out, asks for it, and claimd probes it
 * within a tick. Then the fronts under test are followed from their first
 * request.
 */
static bool lineage_probed(struct claimd_h *h, const char *exe, const char *prefix, bool gc)
{
	const char *args[] = { "status", NULL };
	struct gorun w = { .h = h, .exe = exe, .gc = gc };
	char name[2][40], url[64];
	struct gosvc *b, *f = NULL;
	long long n = 0;
	int i;

	snprintf(name[0], sizeof(name[0]), "%sw", prefix);
	snprintf(name[1], sizeof(name[1]), "%swb", prefix);
	b = go_start(&w, name[1], NULL);
	if (b)
		f = go_start(
			&w, name[0],
			(const char *[]){ "-call", url_of(b, url, sizeof(url)), "-fanout", NULL });

	for (i = 0; f && i < 50 && n < 1; i++) {
		struct json_object *st;

		if (i % 5 == 0)
			http_get(f->port, "/r/1");
		st = claimctl_json(h, args);
		n = j_int(st, "go_lineage_files");
		json_object_put(st);
		if (n < 1)
			sleep_ms(200);
	}
	go_stop_all(&w);
	return ASSERT_GE(n, 1, "goroutine lineage probed");
}

static bool calls_done(struct json_object *e, void *arg)
{
	return j_int(e, "calls") >= *(int *)arg;
}

/*
 * The edge caller -> callee: every call, failures callee failures, all but
 * untaught of them teaching their class (calls written after their
 * request's answer: counted, their request not judged by them).
 */
static void check_edge_untaught(struct claimd_h *h, const char *caller, const char *callee,
				int failures, int untaught, const char *cls)
{
	int want = REQUESTS;
	struct json_object *e = claimd_wait_edge(h, caller, callee, calls_done, &want, 60000);

	if (!ASSERT_OK_PTR(e, callee))
		return;
	printf("%s -> %s: calls %lld, callee failures %lld, both %lld, %s\n", caller, callee,
	       j_int(e, "calls"), j_int(e, "callee_failures"), j_int(e, "both_failed"),
	       j_str(e, "class"));
	ASSERT_EQ(j_int(e, "calls"), REQUESTS, "calls");
	ASSERT_EQ(j_int(e, "callee_failures"), failures, "callee failures");
	ASSERT_EQ(j_int(e, "both_failed"), failures - untaught, "both failed");
	if (cls)
		ASSERT_STREQ(j_str(e, "class"), cls, "class");
	json_object_put(e);
}

/* The edge caller -> callee: calls, callee failures and both failed exact. */
static void check_edge(struct claimd_h *h, const char *caller, const char *callee, int failures,
		       const char *cls)
{
	check_edge_untaught(h, caller, callee, failures, 0, cls);
}

/*
 * The edge caller -> callee of a service whose calls are made by workers
 * tied to no request: every call and callee failure on it all the same,
 * no class taught (both_failed only among the requests that teach).
 */
static void check_untied_edge(struct claimd_h *h, const char *caller, const char *callee)
{
	int want = REQUESTS;
	struct json_object *e = claimd_wait_edge(h, caller, callee, calls_done, &want, 60000);

	if (!ASSERT_OK_PTR(e, callee))
		return;
	printf("%s -> %s: calls %lld, callee failures %lld, tied %lld, both %lld, %s\n", caller,
	       callee, j_int(e, "calls"), j_int(e, "callee_failures"), j_int(e, "tied_failures"),
	       j_int(e, "both_failed"), j_str(e, "class"));
	ASSERT_FALSE(j_bool(e, "root"), "a service's edge");
	ASSERT_EQ(j_int(e, "calls"), REQUESTS, "calls");
	ASSERT_EQ(j_int(e, "callee_failures"), FAILURES, "callee failures");
	ASSERT_LE(j_int(e, "both_failed"), j_int(e, "tied_failures"), "both failed");
	json_object_put(e);
}

/*
 * The driver serves nothing: its calls are root calls, counted in the
 * kernel on the root edge goload -> callee, each failed one a callee failure.
 */
static void check_root_edge(struct claimd_h *h, const char *callee)
{
	int want = REQUESTS;
	struct json_object *e = claimd_wait_edge(h, "goload", callee, calls_done, &want, 60000);

	if (!ASSERT_OK_PTR(e, "the driver's root edge"))
		return;
	ASSERT_TRUE(j_bool(e, "root"), "a root edge");
	ASSERT_EQ(j_int(e, "calls"), REQUESTS, "root edge: calls");
	ASSERT_EQ(j_int(e, "callee_failures"), FAILURES, "root edge: callee failures");
	ASSERT_EQ(j_int(e, "retries"), 0, "root edge: no retries (every id is new)");
	json_object_put(e);
}

/* Each service's mode and requests in claimctl services. */
static void check_modes(struct claimd_h *h, const struct gorun *r)
{
	const char *args[] = { "services", NULL };
	struct json_object *arr = claimctl_json(h, args);
	int i, found = 0;
	size_t k;

	for (k = 0; k < json_object_array_length(arr); k++) {
		struct json_object *o = json_object_array_get_idx(arr, k);

		for (i = 0; i < r->n; i++) {
			if (strcmp(j_str(o, "service"), r->svc[i].name))
				continue;
			found++;
			ASSERT_STREQ(j_str(o, "mode"), "goroutine", r->svc[i].name);
			ASSERT_EQ(j_int(o, "multiplexed"), 0, "none multiplexed");
			/* Seen by the Go probes only: the syscall path leaves them alone. */
			ASSERT_EQ(j_int(o, "requests"), REQUESTS, "each request counted once");
		}
	}
	ASSERT_EQ(found, r->n, "every Go service listed");
	json_object_put(arr);
}

/*
 * The verdicts of the chain of n services (the last failing on its own,
 * the others passing it up) in the trace from mark on, against the truth:
 * right and unknown as given, none wrong.
 */
static void check_chain_truth(const struct trace_cap *t, size_t mark, const struct truth_svc *shape,
			      int n, const pid_t *pids, const char *const *names, const char *what,
			      int right, int unknown)
{
	struct truth_tally tally = { 0 };
	struct truth_svc truth[GO_MAX];

	truth__chain(truth, n, shape, pids, names);
	truth__tally_trace(&tally, t, mark, truth, n, right + unknown);
	truth__expect(&tally, what, right, unknown);
}

/* The kernel's counts of Go requests followed per goroutine, and of calls handed over. */
static void kernel_count(struct claimd_h *h, long long *per_goroutine, long long *handed)
{
	const char *args[] = { "status", NULL };
	struct json_object *st = claimctl_json(h, args);

	*per_goroutine = j_int(j_get(st, "kernel"), "go_requests");
	*handed = j_int(j_get(st, "kernel"), "go_calls_handed");
	json_object_put(st);
}

/*
 * What the probes did for a chain's REQUESTS requests (before: the counts
 * at its start): a plain net/http program (gohttp) is framed by its
 * syscalls, each call handed over at one probe (the front's and the
 * middle's), no request seen by a probe; any other is followed per
 * goroutine, each of the three services' requests by its probes.
 */
static void check_probe_work(struct claimd_h *h, const char *exe, const long long before[2])
{
	bool plain = !strncmp(exe, "gohttp", 6);
	long long now[2];

	kernel_count(h, now, now + 1);
	ASSERT_EQ(now[0] - before[0], plain ? 0 : 3 * REQUESTS, "requests seen by probes");
	ASSERT_EQ(now[1] - before[1], plain ? 2 * REQUESTS : 0, "calls handed to a connection");
}

/*
 * A chain of three Go services (front -> mid -> back, the back failing
 * every FAIL_MOD-th id) named from prefix, run from exe, over TLS if tls;
 * gc: every service collects garbage without pause, so that its requests'
 * and calls' functions run their entries twice now and then (fanout()).
 */
static void chain(struct claimd_h *h, struct trace_cap *t, const char *exe, const char *prefix,
		  bool tls, bool gc)
{
	char front[32], mid[32], back[32], url[64], fm[8];
	struct gorun r = { .h = h, .exe = exe, .tls = tls, .gc = gc };
	const struct truth_svc shape = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	struct gosvc *b, *m, *f;
	long long counted[2];
	size_t mark;

	snprintf(front, sizeof(front), "%sfront", prefix);
	snprintf(mid, sizeof(mid), "%smid", prefix);
	snprintf(back, sizeof(back), "%sback", prefix);
	snprintf(fm, sizeof(fm), "%d", FAIL_MOD);
	b = go_start(&r, back, (const char *[]){ "-fail-mod", fm, NULL });
	m = b ? go_start(&r, mid, (const char *[]){ "-call", url_of(b, url, sizeof(url)), NULL })
	      : NULL;
	f = m ? go_start(&r, front, (const char *[]){ "-call", url_of(m, url, sizeof(url)), NULL })
	      : NULL;
	if (!ASSERT_OK_PTR(f, "Go chain started") || !go_probed(h, 1))
		goto out;
	mark = trace_mark(t);
	kernel_count(h, counted, counted + 1);
	if (!go_load(&r, f))
		goto out;
	check_probe_work(h, exe, counted);
	check_edge(h, front, mid, FAILURES, "fail-close");
	check_edge(h, mid, back, FAILURES, "fail-close");
	check_root_edge(h, front);
	{
		const pid_t pids[3] = { f->pid, m->pid, b->pid };
		const char *const names[3] = { front, mid, back };

		check_chain_truth(t, mark, &shape, 3, pids, names, prefix, 3 * FAILURES, 0);
	}
	check_modes(h, &r);
out:
	go_stop_all(&r);
}

static bool in_lifetime(struct json_object *in, struct json_object *e)
{
	return j_int(e, "start_ns") >= j_int(in, "start_ns") &&
	       j_int(e, "end_ns") <= j_int(in, "end_ns") && j_int(e, "end_ns") > 0;
}

/*
 * A request that fans out to three callees, each call on a goroutine of its
 * own; the services named fe, fe1, fe2 (failing every FAIL_MOD-th id) and
 * fe3. gc: the services collect garbage without pause. Each collection asks
 * every goroutine to stop at its next function prologue (the stack check
 * fails on purpose), and the function then runs again from its entry, its
 * entry probe with it: about one call in a hundred here, roundTrip's entry
 * seen twice. A call whose writing thread lost its CPU between its write
 * and the write's tracepoint may be seen written after its request was
 * answered (a busy host): that request then lacks it and says so
 * (calls_unwritten), a failure of it is unknown (unfinished-call), never
 * claimed, and the call counts on its edge all the same.
 */
static void fanout(struct claimd_h *h, struct trace_cap *t, const char *fe, bool gc)
{
	struct gorun r = { .h = h, .exe = "gohttp", .gc = gc };
	char u[3][64], fm[8], name[4][32];
	struct gosvc *b[3] = { NULL }, *f = NULL;
	struct json_object *all = NULL;
	int i, seen = 0, three = 0, failed = 0, right = 0, unwritten = 0, untaught = 0;
	size_t k, mark;

	snprintf(fm, sizeof(fm), "%d", FAIL_MOD);
	for (i = 0; i < 4; i++)
		snprintf(name[i], sizeof(name[i]), i ? "%s%d" : "%s", fe, i);
	for (i = 0; i < 3 && (!i || b[i - 1]); i++)
		b[i] = go_start(&r, name[i + 1],
				i == 1 ? (const char *[]){ "-fail-mod", fm, NULL } : NULL);
	if (!b[2] || !lineage_probed(h, r.exe, fe, gc))
		goto out;
	f = go_start(&r, name[0],
		     (const char *[]){ "-call", url_of(b[0], u[0], 64), "-call",
				       url_of(b[1], u[1], 64), "-call", url_of(b[2], u[2], 64),
				       "-fanout", NULL });
	if (!ASSERT_OK_PTR(f, "fan-out started") || !go_probed(h, 1))
		goto out;
	mark = trace_mark(t);
	if (!go_load(&r, f))
		goto out;
	trace_wait(t, trace_is_ingress_of, &f->pid, REQUESTS, 20000);
	all = trace_read_from(t, mark);
	for (k = 0; k < json_object_array_length(all); k++) {
		struct json_object *o = json_object_array_get_idx(all, k), *eg;
		int mask = 0;
		size_t j;

		if (!trace_is_ingress_of(o, &f->pid))
			continue;
		seen++;
		eg = j_get(o, "egress");
		for (j = 0; j < json_object_array_length(eg); j++) {
			struct json_object *e = json_object_array_get_idx(eg, j);
			const char *callee = j_str(e, "callee");

			for (i = 0; i < 3; i++)
				if (!strcmp(callee, r.svc[i].name) && in_lifetime(o, e))
					mask |= 1 << i;
		}
		if (json_object_array_length(eg) == 3 && mask == 7) {
			three++;
		} else if (json_object_array_length(eg) + j_int(o, "calls_unwritten") == 3 &&
			   __builtin_popcount(mask) == json_object_array_length(eg)) {
			/* A call seen written after the answer: said, and judged by none. */
			unwritten++;
			test__why("fan-out: a request whose call was seen written after its "
				  "answer: %s",
				  json_object_to_json_string(o));
		} else { /* what it saw instead, for the failure to show */
			test__why("fan-out: a request not with its three calls: %s",
				  json_object_to_json_string(o));
		}
		if (j_int(o, "status") >= 500) {
			failed++;
			right += !strcmp(j_str(o, "verdict"), "unclaimed") &&
				 !strcmp(j_str(j_get(o, "cause"), "callee"), name[2]);
			if (!(mask & 2) && !strcmp(j_str(o, "verdict"), "unknown") &&
			    !strcmp(j_str(o, "rule"), "unfinished-call") &&
			    j_int(o, "calls_unwritten")) {
				right++;
				untaught++;
			}
		}
	}
	printf("fan-out: %d requests, %d with their three calls, %d with a call seen written "
	       "after its answer, %d failed, %d unclaimed by %s or unknown for want of its call\n",
	       seen, three, unwritten, failed, right, name[2]);
	ASSERT_EQ(seen, REQUESTS, "requests seen");
	if (three + unwritten != REQUESTS)
		claimd_losses_explain(h);
	ASSERT_EQ(three + unwritten, REQUESTS,
		  "each with its three calls inside its lifetime, or saying which it lacks");
	ASSERT_EQ(failed, FAILURES, "failures");
	ASSERT_EQ(right, FAILURES,
		  "each unclaimed, caused by the failing callee, or unknown without its call");
	check_edge_untaught(h, name[0], name[2], FAILURES, untaught, "fail-close");
	check_edge(h, name[0], name[1], 0, NULL);
	check_edge(h, name[0], name[3], 0, NULL);
	check_modes(h, &r);
	{
		const char *args[] = { "status", NULL };
		struct json_object *st = claimctl_json(h, args);

		printf("%s: Go entries run twice, taken once: %lld so far; probes at a stack check "
		       "that failed, taken at the start over: %lld\n",
		       name[0], j_int(j_get(st, "kernel"), "go_entries_repeated"),
		       j_int(j_get(st, "kernel"), "go_entries_started_over"));
		json_object_put(st);
	}
out:
	json_object_put(all);
	go_stop_all(&r);
}

/*
 * Starts names[1], failing every FAIL_MOD-th id, then names[0] calling it
 * (with one more option, flag value, when given). The caller, or NULL;
 * the callee in *back.
 */
static struct gosvc *go_pair(struct gorun *r, const char *const names[2], const char *flag,
			     const char *value, struct gosvc **back)
{
	char callee[64], fm[8];
	struct gosvc *b;

	snprintf(fm, sizeof(fm), "%d", FAIL_MOD);
	b = *back = go_start(r, names[1], (const char *[]){ "-fail-mod", fm, NULL });
	if (!b)
		return NULL;
	if (r->grpc)
		snprintf(callee, sizeof(callee), "127.0.0.1:%d", b->port);
	else
		url_of(b, callee, sizeof(callee));
	return go_start(r, names[0], (const char *[]){ "-call", callee, flag, value, NULL });
}

/*
 * Loads the front f of the pair names (b behind it) and checks the pair's
 * verdicts against the truth (check_chain_truth): right and unknown as
 * given, none wrong.
 */
static void pair_truth(struct gorun *r, struct trace_cap *t, const struct gosvc *f,
		       const struct gosvc *b, const char *const names[2], const char *what,
		       int right, int unknown)
{
	const struct truth_svc shape = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	size_t mark;

	if (!ASSERT_OK_PTR(f, what) || !go_probed(r->h, 1))
		return;
	mark = trace_mark(t);
	if (go_load(r, f)) {
		const pid_t pids[2] = { f->pid, b->pid };

		check_chain_truth(t, mark, &shape, 2, pids, names, what, right, unknown);
	}
}

static void pool(struct claimd_h *h, struct trace_cap *t)
{
	struct gorun r = { .h = h, .exe = "gohttp" };
	const char *const names[2] = { "gpool", "gpoolback" };
	struct gosvc *b = NULL, *f;

	f = go_pair(&r, names, "-pool", "2", &b);
	/* The backend's own failures claimed; the pool's unknown, none claimed. */
	pair_truth(&r, t, f, b, names, "pool", FAILURES, FAILURES);
	if (f)
		check_untied_edge(h, names[0], names[1]);
	go_stop_all(&r);
}

/*
 * A plain net/http front (gohttp, framed by its syscalls) calling a backend
 * over TLS (goservice -tls, followed per goroutine): the calls' bytes are
 * ciphertext, so the front's requests cannot be judged: its failures
 * unknown (untied-call, counted as go_calls_tls), never claimed; the
 * backend's own failures claimed.
 */
static void tls_calls(struct claimd_h *h, struct trace_cap *t)
{
	struct gorun rb = { .h = h, .exe = "goservice", .tls = true };
	struct gorun rf = { .h = h, .exe = "gohttp" };
	const char *const names[2] = { "gtcfront", "gtcback" };
	const char *args[] = { "status", NULL };
	struct json_object *st;
	char fm[8], url[64];
	struct gosvc *b, *f = NULL;
	long long before;

	snprintf(fm, sizeof(fm), "%d", FAIL_MOD);
	b = go_start(&rb, names[1], (const char *[]){ "-fail-mod", fm, NULL });
	if (b)
		f = go_start(&rf, names[0],
			     (const char *[]){ "-call", url_of(b, url, sizeof(url)), NULL });
	st = claimctl_json(h, args);
	before = j_int(j_get(st, "kernel"), "go_calls_tls");
	json_object_put(st);
	pair_truth(&rf, t, f, b, names, "calls over TLS", FAILURES, FAILURES);
	st = claimctl_json(h, args);
	ASSERT_EQ(j_int(j_get(st, "kernel"), "go_calls_tls") - before, REQUESTS,
		  "each call over TLS counted");
	json_object_put(st);
	go_stop_all(&rf);
	go_stop_all(&rb);
}

/*
 * Service name's row once it counted requests, its failures (failed, each
 * one) none claimed, each unknown or unclaimed: what a front whose callee
 * is down must show, said as what.
 */
/* name's row once it counts requests (10 s at most), printed as what: a new reference. */
static struct json_object *front_row(struct claimd_h *h, const char *name, const char *what,
				     int requests)
{
	struct json_object *row = NULL;
	int i;

	for (i = 0; i < 50; i++) {
		json_object_put(row);
		row = claimd_service(h, name);
		if (j_int(row, "requests") >= requests)
			break;
		sleep_ms(200);
	}
	printf("%s: %lld requests, %lld failed: %lld claimed, %lld unclaimed, %lld unknown\n", what,
	       j_int(row, "requests"), j_int(row, "failures"), j_int(row, "claimed"),
	       j_int(row, "unclaimed"), j_int(row, "unknown"));
	return row;
}

static void down_front_check(struct claimd_h *h, const char *name, const char *what, int requests,
			     int failed)
{
	struct json_object *row = front_row(h, name, what, requests);

	ASSERT_EQ(j_int(row, "failures"), failed, "the failures the callee's absence made");
	ASSERT_EQ(j_int(row, "claimed"), 0, "none claimed");
	ASSERT_EQ(j_int(row, "unknown") + j_int(row, "unclaimed"), failed,
		  "each unknown or unclaimed");
	json_object_put(row);
}

/*
 * A plain front calling its backend over a socket file, the backend then
 * stopped; the front's verdicts on the failures that made:
 *
 *  - by net/http's transport (goservice -call-unix: it dials on a
 *    goroutine of its own, a connection a call): a dial that fails there
 *    is its process's (bpf/connects.c), so each failure the front passes
 *    up (502) is unknown (untied-call), never claimed;
 *  - in_handler, by the handler itself (goservice -dial-unix), as go-redis
 *    dials on its caller's goroutine, the front failing every fifth id on
 *    its own (500): the dial is made by the goroutine serving the request,
 *    so it is that request's call; each failure passed up is unclaimed,
 *    the service's own (while the backend served) claimed, none unknown.
 */
/* The in_handler front's verdicts from mark on against the truth: its own failures, or its dial's. */
static void dialed_check(struct trace_cap *t, size_t mark, pid_t pid, int n, bool backend_up,
			 const char *what)
{
	struct truth_svc truth = { .pid = pid,
				   .verdict = backend_up ? "claimed" : "unclaimed",
				   .cause = backend_up ? "" : "gube",
				   .target = "/r/%d",
				   .ids = n,
				   .mod = backend_up ? 5 : 0 };
	struct truth_tally tally = { 0 };
	int failures = backend_up ? n / 5 : n;

	truth__tally_trace(&tally, t, mark, &truth, 1, failures);
	truth__expect(&tally, what, failures, 0);
}

static void backend_down_unix(struct claimd_h *h, struct trace_cap *t, bool in_handler)
{
	const char *front = in_handler ? "gdialfront" : "gunixfront";
	struct gorun r = { .h = h, .exe = "gohttp" };
	char sock[H_PATH], bind[H_PATH + 8];
	struct svc_spec be_spec = { .name = "gube", .bind = bind };
	struct json_object *row;
	struct svc be = { 0 };
	struct gosvc *f;
	int n = REQUESTS / 5;
	size_t mark;

	snprintf(sock, sizeof(sock), "%s/%s.sock", h->dir, front);
	snprintf(bind, sizeof(bind), "unix:%s", sock);
	if (!ASSERT_OK(svc_start(&be, &be_spec, h->dir), "backend on a socket file"))
		goto out;
	if (in_handler)
		f = go_start(&r, front,
			     (const char *[]){ "-dial-unix", sock, "-fail-mod", "5", NULL });
	else
		f = go_start(&r, front,
			     (const char *[]){ "-call", "http://be", "-call-unix", sock, NULL });
	if (!ASSERT_OK_PTR(f, "front started") || !go_probed(h, 1))
		goto out;
	mark = trace_mark(t);
	ASSERT_EQ(svc_drive(f->port, n), in_handler ? n / 5 : 0,
		  "the backend up: none failed but the front's own");
	if (in_handler)
		dialed_check(t, mark, f->pid, n, true, "the handler's dial up");
	svc_stop(&be);
	mark = trace_mark(t);
	ASSERT_EQ(svc_drive(f->port, n), n, "the backend gone: every request failed");
	if (in_handler)
		dialed_check(t, mark, f->pid, n, false, "the handler's dial down");
	if (!in_handler) {
		down_front_check(h, front, "callee down over a socket file", 2 * n, n);
		goto out;
	}
	row = front_row(h, front, "the handler's dial down", 2 * n);
	ASSERT_EQ(j_int(row, "failures"), n + n / 5, "every failure");
	ASSERT_EQ(j_int(row, "claimed"), n / 5, "its own failures claimed");
	ASSERT_EQ(j_int(row, "unclaimed"), n, "each dial that failed: its request's, unclaimed");
	ASSERT_EQ(j_int(row, "unknown"), 0, "none unknown");
	json_object_put(row);
out:
	go_stop_all(&r);
	svc_stop(&be);
}

/*
 * A plain front that dials its backend's socket file for every call
 * (goservice -call-unix: net/http dials on goroutines of its own, a
 * connection a call), DIAL_CLIENTS requests at once, failing every fifth
 * id on its own after its call (500). Answers written on other threads
 * meet dials still in their connect, their socket not connected yet and
 * not failed either: read at a later answer (bpf/go_dials.c), never taken
 * for failed. Every failure of its own claimed, none unknown (when such a
 * dial was taken for failed, about 1 failure in 200 was unknown here).
 * Then the backend stopped, its file left: every dial refused, several at
 * once, each failure (502) unknown (untied-call), none claimed.
 */
#define DIAL_REQUESTS 1500
#define DIAL_CLIENTS  8

static void dials_at_once_unix(struct claimd_h *h, struct trace_cap *t)
{
	struct gorun r = { .h = h, .exe = "gohttp" };
	struct truth_svc truth = { .service = "gdialsfront",
				   .verdict = "claimed",
				   .cause = "",
				   .target = "/r/%d",
				   .ids = DIAL_REQUESTS,
				   .mod = FAIL_MOD };
	struct truth_tally up = { 0 }, down = { 0 };
	char sock[H_PATH], bind[H_PATH + 8];
	struct svc_spec be_spec = { .name = "gdialsback", .bind = bind };
	struct json_object *o;
	struct svc be = { 0 };
	struct gosvc *f;
	size_t mark;

	snprintf(sock, sizeof(sock), "%s/gdialsback.sock", h->dir);
	snprintf(bind, sizeof(bind), "unix:%s", sock);
	if (!ASSERT_OK(svc_start(&be, &be_spec, h->dir), "backend on a socket file"))
		goto out;
	f = go_start(&r, "gdialsfront",
		     (const char *[]){ "-call", "http://be", "-call-unix", sock, "-fail-mod", "5",
				       NULL });
	if (!ASSERT_OK_PTR(f, "front started") || !go_probed(h, 1))
		goto out;
	truth.pid = f->pid;
	mark = trace_mark(t);
	o = go_drive(&r, f, DIAL_REQUESTS, DIAL_CLIENTS);
	ASSERT_EQ(j_int(j_get(o, "statuses"), "500"), DIAL_REQUESTS / FAIL_MOD,
		  "the backend up: the front's own failures only");
	json_object_put(o);
	truth__tally_trace(&up, t, mark, &truth, 1, DIAL_REQUESTS / FAIL_MOD);
	truth__expect(&up, "dials at once, the backend up", DIAL_REQUESTS / FAIL_MOD, 0);
	svc_stop(&be);
	truth.verdict = "unclaimed";
	truth.cause = NULL;
	truth.ids = DIAL_REQUESTS / 5;
	truth.mod = 0;
	mark = trace_mark(t);
	o = go_drive(&r, f, DIAL_REQUESTS / 5, DIAL_CLIENTS);
	ASSERT_EQ(j_int(j_get(o, "statuses"), "502"), DIAL_REQUESTS / 5,
		  "the backend gone: every request failed");
	json_object_put(o);
	truth__tally_trace(&down, t, mark, &truth, 1, DIAL_REQUESTS / 5);
	truth__expect(&down, "dials at once, the backend gone", 0, DIAL_REQUESTS / 5);
out:
	go_stop_all(&r);
	svc_stop(&be);
}

/*
 * A plain front (framed by its syscalls) whose callee is down: its dial,
 * refused, runs on a goroutine of net/http's own, which serves no request,
 * so each of its failures (502, every request) is unknown (untied-call),
 * never claimed for want of a failed call it could not see.
 */
static void callee_down(struct claimd_h *h)
{
	struct gorun r = { .h = h, .exe = "gohttp" };
	struct json_object *o = NULL;
	struct gosvc *f;
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", sock_free_port());
	f = go_start(&r, "gdownfront", (const char *[]){ "-call", url, NULL });
	if (!ASSERT_OK_PTR(f, "front started") || !go_probed(h, 1))
		goto out;
	o = go_drive(&r, f, REQUESTS / 5, CLIENTS);
	if (o)
		down_front_check(h, "gdownfront", "callee down", REQUESTS / 5, REQUESTS / 5);
out:
	json_object_put(o);
	go_stop_all(&r);
}

/*
 * A handler that stops waiting for its fan-out (goservice -fanout -wait-ms:
 * a select on a timer) and answers 504, its calls' goroutines left running,
 * in front of a backend slow where it would fail (-slow-ms). Those calls
 * have no end at the answer, and a goroutine's call may as well be one left
 * to finish on its own: the failures are unknown (unfinished-call), never
 * claimed for want of a failed call; the backend fails nothing.
 */
static void fanout_wait(struct claimd_h *h, struct trace_cap *t)
{
	struct gorun r = { .h = h, .exe = "gohttp", .gives_up = true };
	const char *const names[2] = { "gwait", "gwaitback" };
	char fm[8], url[64];
	struct gosvc *b, *f = NULL;

	snprintf(fm, sizeof(fm), "%d", FAIL_MOD);
	b = go_start(&r, names[1], (const char *[]){ "-fail-mod", fm, "-slow-ms", "800", NULL });
	if (b)
		f = go_start(&r, names[0],
			     (const char *[]){ "-call", url_of(b, url, sizeof(url)), "-fanout",
					       "-wait-ms", "250", NULL });
	pair_truth(&r, t, f, b, names, "fanout_wait", 0, FAILURES);
	go_stop_all(&r);
}

/*
 * grpc-go unary: driver -> front -> backend failing every fifth id with
 * UNAVAILABLE: the front -> backend edge exact and fail-close, the front's
 * failures unclaimed (caused by the backend), the backend's claimed. gc:
 * both collect garbage without pause (chain()).
 */
static void grpc_chain(struct claimd_h *h, struct trace_cap *t, const char *exe, const char *prefix,
		       bool gc)
{
	struct gorun r = { .h = h, .exe = exe, .grpc = true, .gc = gc };
	const struct truth_svc shape = { .target = NULL };
	char front[32], back[32];
	const char *const names[2] = { front, back };
	struct gosvc *b, *f;
	size_t mark;

	snprintf(front, sizeof(front), "%sfront", prefix);
	snprintf(back, sizeof(back), "%sback", prefix);
	f = go_pair(&r, names, NULL, NULL, &b);
	if (!ASSERT_OK_PTR(f, "gRPC chain started") || !go_probed(h, 1))
		goto out;
	mark = trace_mark(t);
	if (!go_load(&r, f))
		goto out;
	check_edge(h, front, back, FAILURES, "fail-close");
	{
		const pid_t pids[2] = { f->pid, b->pid };

		check_chain_truth(t, mark, &shape, 2, pids, names, prefix, 2 * FAILURES, 0);
	}
	check_modes(h, &r);
out:
	go_stop_all(&r);
}

/* A claimd of the test's own ends: its log shown on failure, everything stopped. */
static void own_claimd_end(struct claimd_h *h, struct trace_cap *t, struct gorun *r)
{
	if (test__failed_now())
		claimd_print_log(h);
	go_stop_all(r);
	trace_stop(t);
	claimd_stop(h);
	tmpdir_remove(h->dir);
}

/*
 * A Go chain serving before claimd starts, its keep-alive connections open:
 * claimd finds the processes by their sockets (seeded), probes their
 * program, and follows the next requests on those connections as exactly.
 */
static void started_before(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct gorun r = { .h = &h, .exe = "gohttp" };
	const struct truth_svc shape = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	const char *const names[2] = { "gbfront", "gbback" };
	struct gosvc *b, *f;

	if (!ASSERT_OK(tmpdir_make(h.dir, sizeof(h.dir)), "directory"))
		return;
	f = go_pair(&r, names, NULL, NULL, &b);
	/* Traffic first: the front's pooled connection to the backend stays open. */
	if (!ASSERT_OK_PTR(f, "chain started") || !go_load(&r, f))
		goto out;
	if (!ASSERT_OK(claimd_start(&h, NULL), "claimd start") ||
	    !ASSERT_OK(trace_start(&t, &h), "trace") || !go_probed(&h, 1) || !go_load(&r, f))
		goto out;
	check_edge(&h, names[0], names[1], FAILURES, "fail-close");
	{
		const pid_t pids[2] = { f->pid, b->pid };

		check_chain_truth(&t, 0, &shape, 2, pids, names, "started before", 2 * FAILURES, 0);
	}
	check_modes(&h, &r);
out:
	own_claimd_end(&h, &t, &r);
}

/*
 * A Go chain whose first requests come before claimd has read its program
 * (claimd stopped meanwhile, as a busy host may hold it back): the programs
 * see their syscalls, and a thread's bytes are no request's of its own in
 * a Go program, so no verdict may be confident: the failures unknown,
 * unread-program. Once claimd has read it, the Go probes follow the next
 * requests exactly.
 */
static void before_read(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct gorun r = { .h = &h, .exe = "gohttp" };
	const struct truth_svc shape = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	const char *const names[2] = { "gufront", "guback" };
	const char *st[] = { "status", NULL };
	struct truth_svc truth[2];
	struct truth_tally tally = { 0 };
	struct json_object *s;
	struct gosvc *b, *f = NULL;
	bool served;
	size_t mark;

	if (!ASSERT_OK(claimd_start(&h, NULL), "claimd start") ||
	    !ASSERT_OK(trace_start(&t, &h), "trace") ||
	    !ASSERT_OK(kill(h.pid, SIGSTOP), "claimd held back"))
		goto out;
	f = go_pair(&r, names, NULL, NULL, &b);
	served = f && go_load(&r, f);
	kill(h.pid, SIGCONT);
	if (!ASSERT_TRUE(served, "served while claimd was held back"))
		goto out;
	{
		const pid_t pids[2] = { f->pid, b->pid };

		truth__chain(truth, 2, &shape, pids, names);
		truth__tally_trace(&tally, &t, 0, truth, 2, 2 * FAILURES);
		truth__expect(&tally, "before its program was read", 0, 2 * FAILURES);
	}
	s = claimctl_json(&h, st);
	ASSERT_EQ(j_int(j_get(s, "unknown_verdicts"), "unread-program"), 2 * FAILURES,
		  "failures unknown: unread-program");
	ASSERT_GE(j_int(j_get(s, "kernel"), "processes_unread"), 2, "both followed unread");
	json_object_put(s);
	if (!ASSERT_TRUE(claimd_programs_read(&h), "programs read") || !go_probed(&h, 1))
		goto out;
	mark = trace_mark(&t);
	if (go_load(&r, f)) {
		const pid_t pids[2] = { f->pid, b->pid };

		check_chain_truth(&t, mark, &shape, 2, pids, names, "once read", 2 * FAILURES, 0);
	}
out:
	own_claimd_end(&h, &t, &r);
}

/*
 * claimd --no-go: the same Go chain followed by its syscalls, as a refused
 * program's (refused_pair): its processes known for Go all the same and
 * taken for multiplexed, the front's calls tied as the relays they are;
 * every verdict right, and the answers the programs' own.
 */
static void no_go(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct gorun r = { .h = &h, .exe = "goservice" };
	const struct truth_svc shape = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	const char *const names[2] = { "gnfront", "gnback" };
	const char *extra[] = { "--no-go", NULL }, *st[] = { "status", NULL };
	struct truth_svc truth[2];
	struct truth_tally tally = { 0 };
	struct json_object *s = NULL;
	struct gosvc *b, *f = NULL;

	if (!ASSERT_OK(claimd_start(&h, extra), "claimd --no-go") ||
	    !ASSERT_OK(trace_start(&t, &h), "trace"))
		goto out;
	f = go_pair(&r, names, NULL, NULL, &b);
	if (!ASSERT_OK_PTR(f, "chain started") || !go_load(&r, f))
		goto out;
	{
		const pid_t pids[2] = { f->pid, b->pid };

		truth__chain(truth, 2, &shape, pids, names);
		truth__tally_trace(&tally, &t, 0, truth, 2, 2 * FAILURES);
		truth__expect(&tally, "no-go", 2 * FAILURES, 0);
	}
	s = claimctl_json(&h, st);
	ASSERT_EQ(j_int(s, "go_files"), 0, "no Go program probed");
	ASSERT_GE(j_int(j_get(s, "go_refused_by"), "off"), 1, "refused: claimd --no-go");
out:
	json_object_put(s);
	own_claimd_end(&h, &t, &r);
}

/*
 * A front -> backend pair run by r (its program refused, or claimd
 * --no-go): the driver's answers the programs' own, no verdict of the pair
 * wrong against the truth (failures: the failed requests the syscall path
 * is waited for to report), neither service followed per goroutine. Its
 * goroutines share threads, so the pair is taken for multiplexed from its
 * first socket: a call is tied only by what it carries of its request.
 * query NULL: the front's call repeats its request (method, target, user
 * agent), a relay, tied as one: every failure right. Else the call's
 * target adds ?query: tied to nothing, the front's failures unknown
 * (untied-call), never claimed; the backend's, which makes no call,
 * claimed. failures 0 (gRPC, unframed): no verdict at all.
 */
static void refused_pair(struct gorun *r, struct trace_cap *t, const char *const names[2],
			 const char *what, int failures, const char *query)
{
	const struct truth_svc shape = { .target = r->grpc ? NULL : "/r/%d",
					 .ids = REQUESTS,
					 .mod = FAIL_MOD };
	const char *services[] = { "services", NULL };
	char back_target[64];
	struct truth_svc truth[2];
	struct truth_tally tally = { 0 };
	struct json_object *arr;
	struct gosvc *b = NULL, *f;
	size_t k, mark = trace_mark(t);

	f = go_pair(r, names, query ? "-call-query" : NULL, query, &b);
	if (!ASSERT_OK_PTR(f, "pair started") || !go_load(r, f))
		return;
	{
		const pid_t pids[2] = { f->pid, b->pid };

		truth__chain(truth, 2, &shape, pids, names);
		if (query) {
			snprintf(back_target, sizeof(back_target), "/r/%%d?%s", query);
			truth[1].target = back_target;
		}
		truth__tally_trace(&tally, t, mark, truth, 2, failures);
		if (!failures)
			truth__expect(&tally, what, 0, 0);
		else if (query)
			truth__expect(&tally, what, FAILURES, FAILURES);
		else
			truth__expect(&tally, what, 2 * FAILURES, 0);
	}
	arr = claimctl_json(r->h, services);
	for (k = 0; k < json_object_array_length(arr); k++) {
		struct json_object *o = json_object_array_get_idx(arr, k);

		if (!strcmp(j_str(o, "service"), names[0]) ||
		    !strcmp(j_str(o, "service"), names[1]))
			ASSERT_TRUE(strcmp(j_str(o, "mode"), "goroutine"),
				    "not followed per goroutine");
		if (failures && !query && !strcmp(j_str(o, "service"), names[0]))
			ASSERT_STREQ(j_str(o, "mode"), "relay", "the front's calls tied as relays");
	}
	json_object_put(arr);
}

/*
 * A copy of goservice whose Go version (in .go.buildinfo) or grpc-go
 * version (its user agent constants) is rewritten to one the offset table
 * does not cover: claimd refuses the file, once for all the processes
 * running it (a log line naming it, its versions and the class;
 * go_refused_by), and its pairs stay with the syscall path (refused_pair).
 * grpc: a gRPC pair first (the syscall path frames no HTTP/2: its requests
 * get no verdict, none wrong), then a net/http pair from the same file,
 * refused as a whole.
 */
static void version_refused(bool grpc)
{
	const char *cls = grpc ? "grpc-version" : "go-version";
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	char src[H_PATH], exe[H_PATH], from[64], to[64], line[H_PATH + 256];
	struct gorun r = { .h = &h, .exe = exe };
	const char *const http_names[2] = { "gvfront", "gvback" };
	const char *const query_names[2] = { "gvqfront", "gvqback" };
	const char *const grpc_names[2] = { "grvfront", "grvback" };
	const char *st[] = { "status", NULL };
	static struct goexec g;
	struct json_object *s = NULL;
	long long before;

	if (!ASSERT_OK(tmpdir_make(h.dir, sizeof(h.dir)), "directory"))
		return;
	snprintf(src, sizeof(src), "%s/tests/go/goservice", test__build_dir());
	snprintf(exe, sizeof(exe), "%s/goservice.%s", h.dir, cls);
	if (!ASSERT_OK(goexec__open(src, &g), "goservice read"))
		goto out;
	if (grpc) {
		snprintf(from, sizeof(from), "grpc-go/%.31s", g.grpc_version);
		snprintf(to, sizeof(to), "grpc-go/1.9%.28s", g.grpc_version + 3);
		ASSERT_EQ(gopatch_copy(src, exe, NULL, 0, from, to, 0), 2, "both user agents");
	} else {
		/* go1.19.8 -> go1.29.8; the runtime's own copy, before .go.buildinfo, stays. */
		snprintf(from, sizeof(from), "%.31s", g.version);
		snprintf(to, sizeof(to), "go1.2%.26s", g.version + 5);
		ASSERT_EQ(gopatch_copy(src, exe, GOPATCH_BUILDINFO, GOPATCH_BUILDINFO_LEN, from, to,
				       1),
			  1, "the version in .go.buildinfo");
	}
	printf("%s: %s rewritten to %s\n", cls, from, to);
	if (test__failed_now() || !ASSERT_OK(claimd_start(&h, NULL), "claimd start") ||
	    !ASSERT_OK(trace_start(&t, &h), "trace"))
		goto out;
	/* Other Go programs on the host may be refused too: this one's count is the change. */
	s = claimctl_json(&h, st);
	before = j_int(j_get(s, "go_refused_by"), cls);
	json_object_put(s);
	if (grpc) {
		r.grpc = true;
		refused_pair(&r, &t, grpc_names, "grpc-version, gRPC", 0, NULL);
		r.grpc = false;
	}
	refused_pair(&r, &t, http_names, cls, 2 * FAILURES, NULL);
	if (!grpc)
		refused_pair(&r, &t, query_names, "go-version, calls not relays", 2 * FAILURES,
			     "via=front");
	snprintf(line, sizeof(line), "Go: %s (%s, grpc-go %s) of process", exe,
		 grpc ? g.version : to, grpc ? to + 8 : g.grpc_version);
	ASSERT_EQ(claimd_log_lines(&h, line), 1, "the log names the file and its versions, once");
	snprintf(line, sizeof(line), "not probed, left to the syscall path (%s): ", cls);
	ASSERT_GE(claimd_log_lines(&h, line), 1, "the log says why");
	s = claimctl_json(&h, st);
	ASSERT_GE(j_int(j_get(s, "go_refused_by"), cls) - before, 1, "counted under its class");
	ASSERT_GE(j_int(s, "go_refused"), j_int(j_get(s, "go_refused_by"), cls), "and in all");
	json_object_put(s);
out:
	own_claimd_end(&h, &t, &r);
}

void test_go(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	char exe[H_PATH];

	if (!test__need_root())
		return;
	snprintf(exe, sizeof(exe), "%s/tests/go/goservice.stripped", test__build_dir());
	if (access(exe, X_OK)) {
		test__skip("%s not built (make go-peers; needs golang-go)", exe);
		return;
	}
	if (test__start_subtest("started_before"))
		started_before();
	if (test__start_subtest("before_read"))
		before_read();
	if (test__start_subtest("no_go"))
		no_go();
	if (test__start_subtest("go_version_refused"))
		version_refused(false);
	if (test__start_subtest("grpc_version_refused"))
		version_refused(true);
	if (claimd_traced_start(&h, &t, NULL))
		goto out;
	if (test__start_subtest("chain"))
		chain(&h, &t, "gohttp", "go", false, false);
	if (test__start_subtest("chain_gc"))
		chain(&h, &t, "goservice", "gg", false, true);
	if (test__start_subtest("stripped"))
		chain(&h, &t, "gohttp.stripped", "gs", false, false);
	if (test__start_subtest("tls"))
		chain(&h, &t, "goservice", "gt", true, false);
	if (test__start_subtest("fanout"))
		fanout(&h, &t, "gfan", false);
	if (test__start_subtest("fanout_gc"))
		fanout(&h, &t, "ggc", true);
	if (test__start_subtest("pool"))
		pool(&h, &t);
	if (test__start_subtest("fanout_wait"))
		fanout_wait(&h, &t);
	if (test__start_subtest("tls_calls"))
		tls_calls(&h, &t);
	if (test__start_subtest("callee_down"))
		callee_down(&h);
	if (test__start_subtest("callee_down_unix"))
		backend_down_unix(&h, &t, false);
	if (test__start_subtest("handler_dials_unix"))
		backend_down_unix(&h, &t, true);
	if (test__start_subtest("dials_at_once_unix"))
		dials_at_once_unix(&h, &t);
	if (test__start_subtest("grpc"))
		grpc_chain(&h, &t, "goservice", "gr", false);
	if (test__start_subtest("grpc_gc"))
		grpc_chain(&h, &t, "goservice", "grg", true);
	if (test__start_subtest("grpc_stripped"))
		grpc_chain(&h, &t, "goservice.stripped", "grs", false);
out:
	claimd_traced_stop(&h, &t);
}
