// SPDX-License-Identifier: GPL-2.0
/*
 * One fleet through Prometheus (issue 16), end to end. Three "hosts" are
 * network namespaces the test makes, joined by veth pairs with addresses
 * of their own (A 10.213.1.1 - 10.213.1.2 B 10.213.2.2 - 10.213.2.1 C);
 * each has its own claimd (own pin directory, control socket and state,
 * --netns: only its namespace's processes), and a real Prometheus scrapes
 * all three with the shipped rules. curl -> frontend on A and on C call
 * backend on B, which fails every third request itself and calls db on C.
 *
 * - Names across hosts: A and C know backend only by its address, B names
 *   it; the fleet edge frontend -> backend in Prometheus sums A's and C's
 *   calls, which are backend's requests as B counts them.
 * - Fleet classes: C's frontend sees 30 callee failures (fail-close); A,
 *   with only 3, takes fail-close from the fleet (claimd --fleet-classes):
 *   A's edge says source fleet, and the kernel's verdicts on those 3
 *   failures are unclaimed, rule fail-close-edge, cause backend.
 * - claimctl storm --prometheus: the path curl > frontend > backend > db
 *   crosses all three hosts; with one retry per hop its radius is 3.
 * - Prometheus stopped: A goes on serving, on its own classes, and says so
 *   (status, claimd_fleet_up 0, one line in its log).
 * Every verdict is checked against the truth. Namespaces (and their veths)
 * and processes are removed by the test on every path out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "netns.h"
#include "prom.h"
#include "sockets.h"
#include "test_progs.h"
#include "truth.h"

#define BACKEND_PORT  "8080"
#define FRONTEND_PORT "8081"
#define DB_PORT	      "9090"
#define A_TO_B	      "10.213.1.2:" BACKEND_PORT
#define C_TO_B	      "10.213.2.2:" BACKEND_PORT
#define B_TO_C	      "10.213.2.1:" DB_PORT

enum { HOST_A, HOST_B, HOST_C, N_HOSTS };

struct host {
	struct netns_h ns;
	struct claimd_h claimd;
	struct trace_cap trace;
	char metrics[32]; /* 127.0.0.1:port */
};

struct service {
	pid_t pid;
	const char *name;
};

/* A chain_service.py in host h's namespace, listening on every address. */
static int service_start(struct service *s, const struct host *h, const char *name,
			 const char *port, const char *downstream, bool fails)
{
	char script[H_PATH], ready[H_PATH], log[H_PATH], env[64];
	const char *argv[16] = { "python3", script, "--bind",	    "0.0.0.0",
				 "--port",  port,   "--ready-file", ready };
	const char *envv[] = { env, NULL };
	int n = 8;

	s->name = name;
	peer_script("chain_service.py", script, sizeof(script));
	snprintf(ready, sizeof(ready), "%s/ready.%s", h->claimd.dir, name);
	snprintf(log, sizeof(log), "%s/svc.%s.log", h->claimd.dir, name);
	snprintf(env, sizeof(env), "CLAIMD_SERVICE=%s", name);
	if (downstream) {
		argv[n++] = "--downstream";
		argv[n++] = downstream;
	}
	if (fails) { /* id % 3 == 0, before any call down */
		argv[n++] = "--fail-mod";
		argv[n++] = "3";
		argv[n++] = "--fail-rem";
		argv[n++] = "0";
	}
	argv[n] = NULL;
	s->pid = netns_spawn(&h->ns, argv, envv, log);
	if (s->pid <= 0 || wait_file(ready, 10000)) {
		printf("service %s did not start (log %s)\n", name, log);
		return -1;
	}
	return 0;
}

/* curl in host h asks its frontend for /r/[from-to]; how many answers came back. */
static int requests(const struct host *h, int from, int to)
{
	char url[96], out[4096], *p;
	const char *argv[] = {
		"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}\\n", url, NULL
	};
	int answered = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:" FRONTEND_PORT "/r/[%d-%d]", from, to);
	netns_run(&h->ns, argv, out, sizeof(out), 60000);
	for (p = out; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		answered += atoi(p) >= 200;
	return answered;
}

/* The sum of a count over host h's edges from frontend to backend, however it names backend. */
static long long frontend_edges(const struct host *h, const char *field)
{
	struct json_object *arr = claimctl_json(&h->claimd, (const char *const[]){ "edges", NULL });
	long long sum = 0;
	size_t i;

	for (i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *callee = j_str(e, "callee");

		if (!strcmp(j_str(e, "caller"), "frontend") && !j_bool(e, "root") &&
		    (!strcmp(callee, "backend") || !strcmp(callee, A_TO_B) ||
		     !strcmp(callee, C_TO_B)))
			sum += j_int(e, field);
	}
	json_object_put(arr);
	return sum;
}

static bool is_fleet_fail_close(struct json_object *e, void *ctx)
{
	(void)ctx;
	return !strcmp(j_str(e, "class"), "fail-close") &&
	       !strcmp(j_str(e, "class_source"), "fleet") && j_bool(e, "in_kernel");
}

static bool has_failures(struct json_object *e, void *ctx)
{
	return j_int(e, "callee_failures") >= *(int *)ctx;
}

/* claimctl status's "fleet" object has this state, and uses (when not NULL) these classes. */
static bool fleet_state_is(const struct host *h, const char *state, const char *using,
			   int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	struct json_object *st = NULL;
	bool ok = false;

	while (!ok && now_ms() < end) {
		json_object_put(st);
		st = claimctl_json(&h->claimd, (const char *const[]){ "status", NULL });
		ok = !strcmp(j_str(j_get(st, "fleet"), "state"), state) &&
		     (!using || !strcmp(j_str(j_get(st, "fleet"), "using"), using));
		if (!ok)
			sleep_ms(200);
	}
	if (!ok)
		printf("fleet state: %s\n", json_object_to_json_string(j_get(st, "fleet")));
	json_object_put(st);
	return ok;
}

/* What the fleet knew when it went wrong. */
static void prom_dump(int port)
{
	static const char *const q[] = { "claimd_edge_callee_failures_total",
					 "claimd_edge_both_failed_total",
					 "claimd:edge_callee_failures:increase5m",
					 "claimd:edge_ratio:rate5m", "claimd:service_address" };
	size_t i;

	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		struct json_object *r = prom_query(port, q[i]);

		printf("%s: %s\n", q[i], r ? json_object_to_json_string(r) : "-");
		json_object_put(r);
	}
}

/* Does host h's claimd know the service name (it served requests there)? */
static bool serves(const struct host *h, const char *name)
{
	struct json_object *arr =
		claimctl_json(&h->claimd, (const char *const[]){ "services", NULL });
	bool found = false;
	size_t i;

	for (i = 0; arr && i < json_object_array_length(arr); i++)
		found |= !strcmp(j_str(json_object_array_get_idx(arr, i), "service"), name);
	json_object_put(arr);
	return found;
}

/* Each claimd sees its own namespace's services only (--netns). */
static void check_filtered(const struct host *hosts)
{
	ASSERT_TRUE(serves(&hosts[HOST_A], "frontend"), "A: frontend");
	ASSERT_FALSE(serves(&hosts[HOST_A], "backend"), "A: not B's backend");
	ASSERT_TRUE(serves(&hosts[HOST_B], "backend"), "B: backend");
	ASSERT_FALSE(serves(&hosts[HOST_B], "frontend"), "B: not A's or C's frontend");
	ASSERT_FALSE(serves(&hosts[HOST_B], "db"), "B: not C's db");
	ASSERT_TRUE(serves(&hosts[HOST_C], "db"), "C: db");
	ASSERT_FALSE(serves(&hosts[HOST_C], "backend"), "C: not B's backend");
}

/* storm --prometheus: the chain across the three hosts, one retry per hop. */
static void check_storm(const struct host *a, int prom_port)
{
	char url[64], out[1 << 16];
	const char *args[] = { "storm", "--prometheus", url, "--retries", "1", "--json", NULL };
	struct json_object *rep, *roots;
	int radius = -1;
	size_t i;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", prom_port);
	if (!ASSERT_EQ(claimctl_run(&a->claimd, args, out, sizeof(out)), 0, "storm --prometheus"))
		return;
	rep = json_tokener_parse(out);
	roots = j_get(rep, "roots");
	for (i = 0; i < json_object_array_length(roots); i++) {
		struct json_object *r = json_object_array_get_idx(roots, i);

		if (!strcmp(j_str(r, "root"), "curl"))
			radius = j_int(r, "radius_now");
	}
	printf("storm across hosts: %s\n", out);
	ASSERT_TRUE(strstr(out, "[\"curl\",\"frontend\",\"backend\",\"db\"]"),
		    "the path crosses A, B and C by name");
	ASSERT_EQ(radius, 3, "radius 3 from curl, one retry per hop");
	json_object_put(rep);
}

/* The edge caller -> callee in an array of edges (borrowed), or NULL. */
static struct json_object *edge_in(struct json_object *edges, const char *caller,
				   const char *callee)
{
	size_t i;

	for (i = 0; i < json_object_array_length(edges); i++) {
		struct json_object *e = json_object_array_get_idx(edges, i);

		if (!strcmp(j_str(e, "caller"), caller) && !strcmp(j_str(e, "callee"), callee))
			return e;
	}
	return NULL;
}

/* graph and top --prometheus: the fleet's edge, by name, with every host's calls. */
static void check_graph_top(const struct host *a, int prom_port, long long calls)
{
	char url[64], out[1 << 16];
	const char *graph[] = { "graph", "--prometheus", url, "--format", "json", NULL };
	const char *top[] = { "top", "--prometheus", url, "--once", "--json", NULL };
	struct json_object *g, *f, *e;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", prom_port);
	if (ASSERT_EQ(claimctl_run(&a->claimd, graph, out, sizeof(out)), 0, "graph --prometheus")) {
		g = json_tokener_parse(out);
		e = edge_in(j_get(g, "edges"), "frontend", "backend");
		ASSERT_EQ(j_int(e, "calls"), calls,
			  "graph: frontend -> backend, every host's calls");
		ASSERT_STREQ(j_str(e, "class"), "fail-close", "graph: the fleet's class");
		e = edge_in(j_get(g, "edges"), "curl", "frontend");
		ASSERT_TRUE(j_bool(e, "root"), "graph: curl is a root caller");
		json_object_put(g);
	}
	if (ASSERT_EQ(claimctl_run(&a->claimd, top, out, sizeof(out)), 0, "top --prometheus")) {
		f = json_tokener_parse(out);
		ASSERT_OK_PTR(edge_in(j_get(f, "edges"), "backend", "db"),
			      "top: backend -> db, named across B and C");
		json_object_put(f);
	}
}

/* Prometheus stopped: A serves on its own classes and says so. */
static void check_unreachable(struct host *a, struct prom_h *prom, pid_t frontend)
{
	char url[64], out[1 << 16], log[1 << 16], *p;
	const char *argv[] = { "curl", "-s", url, NULL };
	struct json_object *e;
	int said = 0;

	prom_stop(prom, false);
	if (!ASSERT_TRUE(fleet_state_is(a, "unreachable", "local", 10000),
			 "status: unreachable, local classes"))
		return;
	ASSERT_EQ(requests(a, 9, 14), 6, "A keeps serving");
	e = claimd_edge(&a->claimd, "frontend", "backend");
	ASSERT_STREQ(j_str(e, "class_source"), "none", "local classes only");
	ASSERT_STREQ(j_str(e, "class"), "unknown", "5 failures here: unknown");
	json_object_put(e);
	snprintf(url, sizeof(url), "http://%s/metrics", a->metrics);
	proc_run(argv, out, sizeof(out), 10000);
	ASSERT_TRUE(strstr(out, "\nclaimd_fleet_up 0\n"), "claimd_fleet_up 0");
	ASSERT_FALSE(strstr(out, "\nclaimd_fleet_errors_total 0\n"), "errors counted");
	sleep_ms(2500); /* more failed rounds: still said once */
	if (read_file(a->claimd.log, log, sizeof(log)) > 0)
		for (p = log; (p = strstr(p, "using this host's classes only")); p++)
			said++;
	ASSERT_EQ(said, 1, "said once in the log");
	ASSERT_EQ(proc_wait(frontend, 0), -1, "frontend still up");
}

static void check_truth(struct host *hosts, const struct service *svc)
{
	struct truth_svc shape = { .target = "/r/%d", .ids = 90, .mod = 3, .rem = 0 };
	struct truth_svc fe = shape, be = shape;
	struct truth_tally ta = { 0 }, tb = { 0 };

	fe.pid = svc[0].pid;
	fe.service = "frontend";
	fe.verdict = "unclaimed";
	fe.cause = "backend";
	be.pid = svc[1].pid;
	be.service = "backend";
	be.verdict = "claimed";
	be.cause = "";
	/* A: 0, 3, 6 (fleet fail-close), 9, 12 (after Prometheus stopped). */
	truth__tally_trace(&ta, &hosts[HOST_A].trace, 0, &fe, 1, 5);
	truth__expect(&ta, "A frontend (fleet)", 5, 0);
	/* B: A's 5 and C's 30 failures are backend's own. */
	truth__tally_trace(&tb, &hosts[HOST_B].trace, 0, &be, 1, 35);
	truth__expect(&tb, "B backend", 35, 0);
}

/* A's three failures: the fleet's fail-close in the kernel, cause backend. */
static bool is_fleet_verdict(struct json_object *line, void *ctx)
{
	struct json_object *cause = j_get(line, "cause");

	(void)ctx;
	return !strcmp(j_str(line, "type"), "ingress") &&
	       !strcmp(j_str(line, "service"), "frontend") &&
	       !strcmp(j_str(line, "verdict"), "unclaimed") &&
	       !strcmp(j_str(line, "rule"), "fail-close-edge") &&
	       !strcmp(j_str(cause, "callee"), "backend") &&
	       !strcmp(j_str(cause, "class_source"), "fleet");
}

void test_fleet(void)
{
	static const char *const names[N_HOSTS] = { "a", "b", "c" };
	struct host hosts[N_HOSTS] = { 0 };
	struct service svc[4] = { 0 }; /* frontend A, backend B, frontend C, db C */
	struct prom_h prom = { 0 };
	char fleet[64], q[256], prom_url[64];
	const char *targets[N_HOSTS + 1] = { NULL };
	long long calls;
	int i, thirty = 30, three = 3;

	if (!test__need_root())
		return;
	if (access(PROMETHEUS, X_OK)) {
		ASSERT_OK(-1, PROMETHEUS " (Debian package prometheus) is installed");
		return;
	}
	for (i = 0; i < N_HOSTS; i++)
		if (!ASSERT_OK(netns_make(&hosts[i].ns, names[i]), "network namespace"))
			goto out;
	if (!ASSERT_OK(netns_link(&hosts[HOST_A].ns, "10.213.1.1/24", &hosts[HOST_B].ns,
				  "10.213.1.2/24"),
		       "veth A-B") ||
	    !ASSERT_OK(netns_link(&hosts[HOST_C].ns, "10.213.2.1/24", &hosts[HOST_B].ns,
				  "10.213.2.2/24"),
		       "veth C-B"))
		goto out;

	/* Prometheus's port first: A's claimd reads the fleet from it. */
	for (i = 0; i < N_HOSTS; i++) {
		snprintf(hosts[i].metrics, sizeof(hosts[i].metrics), "127.0.0.1:%d",
			 sock_free_port());
		targets[i] = hosts[i].metrics;
	}
	if (!ASSERT_OK(tmpdir_make(hosts[HOST_A].claimd.dir, sizeof(hosts[HOST_A].claimd.dir)),
		       "tmpdir") ||
	    !ASSERT_OK(prom_start(&prom, hosts[HOST_A].claimd.dir, targets), "start prometheus"))
		goto out;
	snprintf(prom_url, sizeof(prom_url), "http://127.0.0.1:%d", prom.port);
	for (i = 0; i < N_HOSTS; i++) {
		const char *extra[] = { "--netns",
					hosts[i].ns.path,
					"--metrics",
					hosts[i].metrics,
					"--fleet-classes",
					prom_url,
					"--fleet-interval",
					"1",
					"--fleet-timeout",
					"500",
					NULL };

		if (i != HOST_A)
			extra[4] = NULL; /* only A reads the fleet back */
		snprintf(hosts[i].claimd.pin, sizeof(hosts[i].claimd.pin),
			 "/sys/fs/bpf/claimd-test-%d-%s", getpid(), names[i]);
		if (!ASSERT_OK(claimd_start(&hosts[i].claimd, extra), "claimd start") ||
		    !ASSERT_OK(trace_start(&hosts[i].trace, &hosts[i].claimd), "trace"))
			goto out;
	}

	if (service_start(&svc[3], &hosts[HOST_C], "db", DB_PORT, NULL, false) ||
	    service_start(&svc[1], &hosts[HOST_B], "backend", BACKEND_PORT, B_TO_C, true) ||
	    service_start(&svc[0], &hosts[HOST_A], "frontend", FRONTEND_PORT, A_TO_B, false) ||
	    service_start(&svc[2], &hosts[HOST_C], "frontend", FRONTEND_PORT, C_TO_B, false))
		goto out;

	/* The fleet names backend (B's addresses) and db (C's) before anyone fails. */
	if (!ASSERT_TRUE(prom_wait(prom.port, "count(claimd:service_address{callee=\"backend\"})",
				   2, 30000),
			 "B names backend at both its addresses") ||
	    !ASSERT_TRUE(fleet_state_is(&hosts[HOST_A], "ok", NULL, 10000), "A reads the fleet"))
		goto out;
	sleep_ms(2500); /* two more rounds: A has the names too */
	ASSERT_EQ(requests(&hosts[HOST_A], 1, 2), 2, "A warm-up");
	ASSERT_EQ(requests(&hosts[HOST_C], 91, 92), 2, "C warm-up");
	json_object_put(claimd_wait_edge(&hosts[HOST_A].claimd, "frontend", "backend", has_failures,
					 (int[]){ 0 }, 10000));
	/* Both callers' edges scraped before any failure: the fleet's increase starts at 0. */
	if (!ASSERT_TRUE(
		    prom_wait(prom.port,
			      "count(claimd:edge_callee_failures_total:named{caller=\"frontend\","
			      "callee=\"backend\"} == 0)",
			      2, 15000),
		    "A's and C's edges, by name, at 0"))
		goto out;

	/* C teaches the fleet: 30 callee failures, each failing its frontend. */
	ASSERT_EQ(requests(&hosts[HOST_C], 0, 89), 90, "C's 90 requests answered");
	json_object_put(claimd_wait_edge(&hosts[HOST_C].claimd, "frontend", C_TO_B, has_failures,
					 &thirty, 10000));
	if (!ASSERT_TRUE(
		    prom_wait(prom.port,
			      "claimd:edge_class:rate5m{caller=\"frontend\",callee=\"backend\"}", 1,
			      30000),
		    "the fleet: frontend -> backend is fail-close")) {
		prom_dump(prom.port);
		goto out;
	}
	{
		struct json_object *e =
			claimd_wait_edge(&hosts[HOST_A].claimd, "frontend", "backend",
					 is_fleet_fail_close, NULL, 15000);

		ASSERT_OK_PTR(e, "A's edge takes fail-close from the fleet, into the kernel");
		json_object_put(e);
	}

	/* A's own three failures: too few for a class of its own. */
	ASSERT_EQ(requests(&hosts[HOST_A], 0, 8), 9, "A's 9 requests answered");
	{
		struct json_object *e = claimd_wait_edge(&hosts[HOST_A].claimd, "frontend",
							 "backend", has_failures, &three, 10000);

		ASSERT_EQ(j_int(e, "callee_failures"), 3, "3 local callee failures");
		ASSERT_STREQ(j_str(e, "class_source"), "fleet", "class from the fleet");
		json_object_put(e);
	}
	ASSERT_EQ(trace_wait(&hosts[HOST_A].trace, is_fleet_verdict, NULL, 3, 10000), 3,
		  "3 verdicts unclaimed by the fleet's fail-close, cause backend");

	/* The fleet edge by name, with the counts of both callers' claimd. */
	calls = frontend_edges(&hosts[HOST_A], "calls") + frontend_edges(&hosts[HOST_C], "calls");
	printf("frontend -> backend: A %lld + C %lld calls\n",
	       frontend_edges(&hosts[HOST_A], "calls"), frontend_edges(&hosts[HOST_C], "calls"));
	ASSERT_EQ(calls, 2 + 2 + 90 + 9, "every call counted on A and C");
	ASSERT_TRUE(prom_wait(prom.port,
			      "claimd:edge_calls:total{caller=\"frontend\",callee=\"backend\"}",
			      (double)calls, 15000),
		    "the fleet edge sums A's and C's calls");
	snprintf(q, sizeof(q), "sum(claimd_service_requests_total{service=\"backend\"})");
	ASSERT_TRUE(prom_wait(prom.port, q, (double)calls, 15000),
		    "B served as many as A and C called");
	ASSERT_TRUE(
		prom_wait(
			prom.port,
			"claimd:edge_callee_failures:total{caller=\"frontend\",callee=\"backend\"}",
			33, 15000),
		"30 + 3 callee failures");

	snprintf(fleet, sizeof(fleet), "claimd:edge_calls:total{caller=\"backend\",callee=\"db\"}");
	ASSERT_TRUE(prom_wait(prom.port, fleet, (double)calls - 33, 15000),
		    "backend -> db named across B and C");
	check_filtered(hosts);
	check_storm(&hosts[HOST_A], prom.port);
	check_graph_top(&hosts[HOST_A], prom.port, calls);
	check_unreachable(&hosts[HOST_A], &prom, svc[0].pid);
	check_truth(hosts, svc);
out:
	prom_stop(&prom, test__failed_now());
	for (i = 0; i < 4; i++)
		if (svc[i].pid > 0)
			proc_stop(svc[i].pid, 5000);
	for (i = 0; i < N_HOSTS; i++) {
		if (test__failed_now() && hosts[i].claimd.pid > 0)
			claimd_print_log(&hosts[i].claimd);
		trace_stop(&hosts[i].trace);
		claimd_stop(&hosts[i].claimd);
		netns_remove(&hosts[i].ns);
	}
	for (i = 0; i < N_HOSTS; i++)
		if (hosts[i].claimd.dir[0])
			tmpdir_remove(hosts[i].claimd.dir);
}
