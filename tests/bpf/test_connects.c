// SPDX-License-Identifier: GPL-2.0
/*
 * A TCP connect that fails before its SYN leaves changes no socket state:
 * a service in a network namespace with no route to its dependency gets
 * ENETUNREACH at once, and passes the failure up (502). claimd sees the
 * connect at the cgroup hook every connect passes before it is tried
 * (bpf/connects.c): each 502 is unclaimed, its cause the call to the
 * address it was given; the service's own failures (503) claimed. Over
 * IPv4 and IPv6. Driven by curl inside the namespace, where the service
 * listens on its loopback. (A connect to a socket file that fails:
 * dependencies/redis_down_unix.)
 *
 * An event loop's connect is its process's: Node.js calling its backend
 * over a socket file, a new connection per call, the backend then killed
 * (its file left: every connect refused). Each 502 passed up is unknown
 * (untied-call), never claimed.
 *
 * And a connect that fails to a socket file listed as a probe is no
 * call: glibc asks nscd's socket before each name it resolves, nscd there
 * or not. A service that so probes a missing file at every request, and
 * fails on its own for some: each failure claimed, no connect counted.
 * The same file not listed (--probe-socket) is a dependency's, for all
 * claimd can tell: one that never started, or stopped before claimd came
 * and took its file away. Each failure unknown, never claimed; the name
 * asked about once, no socket file found there. A socket file called by
 * another name than its server bound (/var/run for /run) is the same
 * dependency when its connects fail.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "netns.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"

#define REQUESTS 40
#define FAIL_MOD 4 /* the service's own failures: id % 4 == 1 */

/* GET /r/id from the service at port, by curl inside ns: its status, or -1. */
static int ns_get(const struct netns_h *ns, int port, int id)
{
	char url[96], out[64] = "";
	const char *argv[] = { "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", url, NULL };

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/r/%d", port, id);
	if (netns_run(ns, argv, out, sizeof(out), 10000))
		return -1;
	return atoi(out);
}

/* The service in ns calling host:80, where no route leads: its verdicts against the truth. */
static void no_route(const struct netns_h *ns, const char *host, const char *addr, const char *dir)
{
	struct svc_spec spec = { .name = "unrouted",
				 .downstream = 80,
				 .down_host = host,
				 .fail_mod = FAIL_MOD,
				 .fail_rem = 1,
				 .ns = ns };
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc s = { 0 };
	struct truth_tally tally = { 0 };
	struct truth_svc truth[2];
	long long before;
	int id, wrong = 0;

	if (claimd_traced_start(&h, &t, NULL))
		goto out;
	before = claimd_status_count(&h, "connects_failed_at_once", true);
	if (!ASSERT_OK(svc_start(&s, &spec, dir), "service"))
		goto out;
	truth__own_or_passed(truth, s.pid, "/r/%d", REQUESTS, FAIL_MOD, 1, addr);
	for (id = 0; id < REQUESTS; id++)
		wrong += ns_get(ns, s.port, id) != (id % FAIL_MOD == 1 ? 503 : 502);
	ASSERT_EQ(wrong, 0, "curl: its own failures 503, the dependency's 502");
	truth__tally_trace(&tally, &t, 0, truth, 2, REQUESTS);
	truth__expect(&tally, "no route", REQUESTS, 0);
	ASSERT_EQ(claimd_status_count(&h, "connects_failed_at_once", true) - before,
		  REQUESTS - REQUESTS / FAIL_MOD, "each connect that failed, counted");
out:
	svc_stop(&s);
	claimd_traced_stop(&h, &t);
}

/*
 * Each request first connects to a socket file never served, then fails on
 * its own or not; listed: the file is a probe claimd is told of.
 */
static void probe_unserved(const char *dir, bool listed)
{
	char probe[H_PATH];
	const char *extra[] = { "--probe-socket", probe, NULL };
	struct svc_spec spec = {
		.name = "prober", .fail_mod = FAIL_MOD, .fail_rem = 1, .probe_socket = probe
	};
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc s = { 0 };
	struct truth_tally tally = { 0 };
	struct truth_svc truth = { .service = "prober",
				   .verdict = "claimed",
				   .cause = "",
				   .target = "/r/%d",
				   .ids = REQUESTS,
				   .mod = FAIL_MOD,
				   .rem = 1 };
	int fails = REQUESTS / FAIL_MOD;

	snprintf(probe, sizeof(probe), "%s/nscd-socket", dir);
	if (claimd_traced_start(&h, &t, listed ? extra : NULL))
		goto out;
	if (!ASSERT_OK(svc_start(&s, &spec, dir), "service"))
		goto out;
	truth.pid = s.pid;
	ASSERT_EQ(svc_drive(s.port, REQUESTS), fails, "its own failures");
	truth__tally_trace(&tally, &t, 0, &truth, 1, fails);
	if (listed)
		truth__expect(&tally, "a probe listed, its file missing", fails, 0);
	else
		truth__expect(&tally, "a socket file never served, missing", 0, fails);
	/* Each request's connect failed; only one not listed is counted, its file asked about once. */
	ASSERT_EQ(claimd_status_count(&h, "connects_failed_at_once", true), 0,
		  "no failed call counted");
	ASSERT_EQ(claimd_status_count(&h, "connects_failed_unserved", true), listed ? 0 : REQUESTS,
		  "failed connects to a name never served, not listed");
	ASSERT_EQ(claimd_status_count(&h, "socket_files_asked", false), listed ? 0 : 1,
		  "names asked about");
	ASSERT_EQ(claimd_status_count(&h, "socket_files_found_dead", false), 0,
		  "no socket file found there");
out:
	svc_stop(&s);
	claimd_traced_stop(&h, &t);
}

/*
 * The callee of pid's calls from mark on, into out: of its failures' causes
 * (failed true), or of its calls that answered (false). How many such
 * records had it, or -1 when two named it otherwise.
 */
static int callee_of(struct trace_cap *t, size_t mark, pid_t pid, bool failed, char *out,
		     size_t len)
{
	struct json_object *lines = trace_read_from(t, mark);
	int i, n = 0;

	for (i = 0; i < (int)json_object_array_length(lines); i++) {
		struct json_object *rec = json_object_array_get_idx(lines, i);
		struct json_object *cause = j_get(rec, "cause");
		struct json_object *calls = j_get(rec, "egress");
		struct json_object *call = json_object_is_type(calls, json_type_array)
						   ? json_object_array_get_idx(calls, 0)
						   : NULL;
		const char *name =
			failed ? (cause ? j_str(cause, "callee") : NULL)
			       : (call && j_int(call, "status") == 200 ? j_str(call, "callee")
								       : NULL);

		if (j_int(rec, "pid") != pid || !name)
			continue;
		if (n++ && strcmp(out, name)) {
			printf("callees %s and %s\n", out, name);
			n = -1;
			break;
		}
		snprintf(out, len, "%s", name);
	}
	json_object_put(lines);
	return n;
}

/*
 * A service calling its backend's socket file by another name than the
 * one the backend bound: /var/run/... where it bound /run/... (Debian's
 * /var/run is a link to /run). Its calls are followed by the names their
 * sockets were bound by; once the backend is gone, its connects fail by
 * the name the service gives, which claimd knows from the listener's
 * other names (kernel/unix_served.h): each failure passed up is
 * unclaimed, its cause the backend by the name its calls had; the
 * service's own failures claimed.
 */
static void socket_file_alias(const char *dir)
{
	char rundir[] = "/run/claimd-alias.XXXXXX", bound[H_PATH + 8], called[H_PATH],
	     name[256] = "", down[256] = "";
	struct svc_spec be_spec = { .name = "alias-be", .bind = bound };
	struct svc_spec spec = {
		.name = "alias-front", .down_unix = called, .fail_mod = FAIL_MOD, .fail_rem = 1
	};
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc be = { 0 }, s = { 0 };
	struct truth_tally tally = { 0 };
	struct truth_svc truth[2];
	char run[H_PATH];
	size_t mark;

	if (!realpath("/var/run", run) || strcmp(run, "/run")) {
		test__skip("/var/run is not a link to /run here");
		return;
	}
	if (!ASSERT_OK_PTR(mkdtemp(rundir), "a directory under /run"))
		return;
	snprintf(bound, sizeof(bound), "unix:%s/be.sock", rundir);
	snprintf(called, sizeof(called), "/var%s/be.sock", rundir);
	/* Listening before claimd starts: its names learned at claimd's start. */
	if (!ASSERT_OK(svc_start(&be, &be_spec, dir), "backend") ||
	    claimd_traced_start(&h, &t, NULL) || !ASSERT_OK(svc_start(&s, &spec, dir), "service"))
		goto out;
	ASSERT_TRUE(claimd_status_reaches(&h, "socket_files_learned", 2),
		    "the backend's socket file learned, by both names");
	mark = trace_mark(&t);
	ASSERT_EQ(svc_drive(s.port, REQUESTS), REQUESTS / FAIL_MOD, "the backend up: own failures");
	/* Their records all in before the next mark: none of them taken for the next phase's. */
	ASSERT_GE(trace_wait(&t, trace_is_ingress_of, &s.pid, REQUESTS, 10000), REQUESTS,
		  "the backend up: each request's record");
	ASSERT_GT(callee_of(&t, mark, s.pid, false, down, sizeof(down)), 0, "its calls' callee");
	svc_stop(&be);
	truth__own_or_passed(truth, s.pid, "/r/%d", REQUESTS, FAIL_MOD, 1, NULL);
	mark = trace_mark(&t);
	ASSERT_EQ(svc_drive(s.port, REQUESTS), REQUESTS, "the backend gone: every request failed");
	truth__tally_trace(&tally, &t, mark, truth, 2, REQUESTS);
	truth__expect(&tally, "a socket file called by another name", REQUESTS, 0);
	ASSERT_EQ(callee_of(&t, mark, s.pid, true, name, sizeof(name)),
		  REQUESTS - REQUESTS / FAIL_MOD, "each failure's cause, one callee");
	ASSERT_STREQ(name, down, "the callee its calls had");
out:
	svc_stop(&s);
	svc_stop(&be);
	claimd_traced_stop(&h, &t);
	snprintf(run, sizeof(run), "%s/be.sock", rundir);
	unlink(run);
	rmdir(rundir);
}

/* node_proxy.js calling the backend on socket file sock, a new connection per call: its pid. */
static pid_t node_start(const char *sock, const char *dir, int *port)
{
	char script[H_PATH], ready[H_PATH], opt[H_PATH + 16], log[H_PATH];
	const char *argv[] = { "node",	  peer_script("node_proxy.js", script, sizeof(script)),
			       "0",	  ready,
			       "--fresh", opt,
			       NULL };
	const char *env[] = { "CLAIMD_SERVICE=node-front", NULL };
	pid_t pid;

	snprintf(ready, sizeof(ready), "%s/ready.node", dir);
	snprintf(opt, sizeof(opt), "--socket=%s", sock);
	snprintf(log, sizeof(log), "%s/node.log", dir);
	pid = proc_spawn(argv, env, log);
	*port = pid > 0 ? wait_ready_port(ready, 20000) : -1;
	if (*port <= 0) {
		if (pid > 0)
			proc_stop(pid, 2000);
		return -1;
	}
	return pid;
}

/* The backend on a socket file, killed under a Node.js front. */
static void node_backend_down(const char *dir)
{
	char sock[H_PATH], bind[H_PATH + 8];
	struct svc_spec be_spec = { .name = "node-be", .bind = bind };
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc be = { 0 };
	struct truth_tally tally = { 0 };
	struct truth_svc truth = {
		.service = "node-front", .verdict = "unclaimed", .target = "/r/%d", .ids = REQUESTS
	};
	int port = 0;
	pid_t node = -1;
	size_t mark;

	snprintf(sock, sizeof(sock), "%s/be.sock", dir);
	snprintf(bind, sizeof(bind), "unix:%s", sock);
	if (claimd_traced_start(&h, &t, NULL) ||
	    !ASSERT_OK(svc_start(&be, &be_spec, dir), "backend"))
		goto out;
	node = node_start(sock, dir, &port);
	if (!ASSERT_GT(node, 0, "node front"))
		goto out;
	truth.pid = node;
	ASSERT_EQ(svc_drive(port, REQUESTS), 0, "the backend up: every request served");
	svc_stop(&be);
	mark = trace_mark(&t);
	ASSERT_EQ(svc_drive(port, REQUESTS), REQUESTS, "the backend down: every request failed");
	truth__tally_trace(&tally, &t, mark, &truth, 1, REQUESTS);
	/* Never claimed: each unknown, the call outside any request's own. */
	truth__expect(&tally, "node, its backend down", -1, -1);
	ASSERT_EQ(tally.right + tally.unknown, REQUESTS, "every failure recorded");
out:
	if (node > 0)
		proc_stop(node, 2000);
	svc_stop(&be);
	claimd_traced_stop(&h, &t);
}

void test_connects(void)
{
	struct netns_h ns = { 0 };
	char dir[H_DIR];

	if (!test__need_root() || !ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "dir"))
		return;
	/* Its loopback only: no route to anywhere else. */
	if (!ASSERT_OK(netns_make(&ns, "nr"), "network namespace"))
		goto out;
	if (test__start_subtest("no_route"))
		no_route(&ns, "192.0.2.9", "192.0.2.9:80", dir);
	if (test__start_subtest("no_route_ipv6"))
		no_route(&ns, "[2001:db8::9]", "[2001:db8::9]:80", dir);
	if (test__start_subtest("probe_listed"))
		probe_unserved(dir, true);
	if (test__start_subtest("unserved_missing"))
		probe_unserved(dir, false);
	if (test__start_subtest("socket_file_alias"))
		socket_file_alias(dir);
	if (test__start_subtest("node_backend_down"))
		node_backend_down(dir);
out:
	netns_remove(&ns);
	tmpdir_remove(dir);
}
