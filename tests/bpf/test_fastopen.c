// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Fast Open, end to end: a request that rides in the SYN, written by a
 * non-blocking caller whose write returns before the connection is made.
 * In a network namespace of the test's own: its sysctl lets clients and
 * servers send data in the SYN without cookies, and an HTB class on its
 * loopback lets one packet through and holds the next ones, so a SYN's
 * answer comes after the write that sent it has returned, as it does over
 * any real network (on a bare loopback it comes inside that write).
 *
 * curl --tcp-fastopen (a non-blocking connect, TCP_FASTOPEN_CONNECT) calls
 * fo-front, which calls fo-be the same way (tests/peers/chain_service.py
 * --fastopen); fo-be fails every fifth request, fo-front passes those
 * failures up. claimd (--netns) must see every call: the edge fo-front ->
 * fo-be counts each, and fo-front's failures are unclaimed, fo-be's
 * claimed. A call it missed would leave fo-front's failures its own: a
 * confident wrong answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "netns.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"

#define REQUESTS 20
#define FAIL_MOD 5
#define FAILURES (REQUESTS / FAIL_MOD)

/* The namespace's Fast Open: client and server (1 | 2), no cookie either side (4 | 0x200). */
#define FASTOPEN_NO_COOKIES "net.ipv4.tcp_fastopen=519"

static int ns_cmd(const struct netns_h *ns, const char *const argv[])
{
	char out[512] = "";
	int rc = netns_run(ns, argv, out, sizeof(out), 10000);

	if (rc)
		printf("in %s, %s failed (%d): %s\n", ns->name, argv[0], rc, out);
	return rc;
}

/* Fast Open on, and a loopback that answers a SYN only after its write returned. */
static int ns_setup(const struct netns_h *ns)
{
	const char *sysctl[] = { "sysctl", "-qw", FASTOPEN_NO_COOKIES, NULL };
	const char *qdisc[] = { "tc",	  "qdisc", "add", "dev",     "lo", "root",
				"handle", "1:",	   "htb", "default", "10", NULL };
	/* 64 kbit/s, a 100-byte burst: about 20 ms a packet after the first. */
	const char *class[] = { "tc",	   "class", "add",    "dev",  "lo",	"parent", "1:",
				"classid", "1:10",  "htb",    "rate", "64kbit", "ceil",	  "64kbit",
				"burst",   "100",   "cburst", "100",  NULL };

	return ns_cmd(ns, sysctl) || ns_cmd(ns, qdisc) || ns_cmd(ns, class) ? -1 : 0;
}

/* The namespace's count of connects whose data rode in the SYN (TCPFastOpenActive). */
static long fastopen_active(const struct netns_h *ns)
{
	const char *argv[] = { "cat", "/proc/net/netstat", NULL };
	static char out[16384];
	char *names, *values, *save_n, *save_v, *n, *v;

	if (netns_run(ns, argv, out, sizeof(out), 10000))
		return -1;
	/* Pairs of lines: "TcpExt: name name ...", then "TcpExt: value value ...". */
	names = strstr(out, "TcpExt:");
	values = names ? strstr(names + 1, "TcpExt:") : NULL;
	if (!values)
		return -1;
	*strchr(names, '\n') = '\0';
	if (strchr(values, '\n'))
		*strchr(values, '\n') = '\0';
	n = strtok_r(names, " ", &save_n);
	v = strtok_r(values, " ", &save_v);
	while (n && v) {
		if (!strcmp(n, "TCPFastOpenActive"))
			return atol(v);
		n = strtok_r(NULL, " ", &save_n);
		v = strtok_r(NULL, " ", &save_v);
	}
	return -1;
}

/* GET /r/<id> of port with curl --tcp-fastopen inside ns; the status, or -1. */
static int curl_fastopen(const struct netns_h *ns, int port, int id)
{
	char url[64], out[64] = "";
	const char *argv[] = { "curl",	       "-s",	    "--tcp-fastopen",
			       "-o",	       "/dev/null", "-w",
			       "%{http_code}", url,	    NULL };

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/r/%d", port, id);
	if (netns_run(ns, argv, out, sizeof(out), 10000))
		return -1;
	return atoi(out);
}

static bool edge_done(struct json_object *e, void *ctx)
{
	(void)ctx;
	return j_int(e, "calls") >= REQUESTS && j_int(e, "callee_failures") >= FAILURES;
}

static void check_edge(const struct claimd_h *h)
{
	struct json_object *e = claimd_wait_edge(h, "fo-front", "fo-be", edge_done, NULL, 15000);

	json_object_put(e);
	sleep_ms(1500); /* whatever claimd would add beyond the truth is in by now */
	e = claimd_edge(h, "fo-front", "fo-be");
	if (!ASSERT_OK_PTR(e, "edge fo-front -> fo-be"))
		return;
	printf("edge fo-front -> fo-be: calls %lld, callee_failures %lld, both_failed %lld\n",
	       j_int(e, "calls"), j_int(e, "callee_failures"), j_int(e, "both_failed"));
	ASSERT_EQ(j_int(e, "calls"), REQUESTS, "edge: every call counted");
	ASSERT_EQ(j_int(e, "callee_failures"), FAILURES, "edge: callee failures");
	ASSERT_EQ(j_int(e, "both_failed"), FAILURES, "edge: both failed");
	json_object_put(e);
}

void test_fastopen(void)
{
	const struct truth_svc shape = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	const char *const names[2] = { "fo-front", "fo-be" };
	struct svc be = { 0 }, front = { 0 };
	struct truth_tally tally = { 0 };
	struct truth_svc truth[2];
	struct netns_h ns = { 0 };
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	char dir[H_DIR] = "";
	long active;
	int id, wrong = 0;
	pid_t pids[2];

	if (!test__need_root())
		return;
	netns_stale_remove();
	if (!ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "temporary directory") ||
	    !ASSERT_OK(netns_make(&ns, "fo"), "network namespace") ||
	    !ASSERT_OK(ns_setup(&ns), "Fast Open and a held loopback in it"))
		goto out;
	{
		const char *extra[] = { "--netns", ns.path, NULL };

		if (!ASSERT_OK(claimd_start(&h, extra), "claimd start") ||
		    !ASSERT_OK(trace_start(&t, &h), "trace"))
			goto out;
	}
	if (!ASSERT_OK(svc_start(&be,
				 &(struct svc_spec){ .name = "fo-be",
						     .fail_mod = FAIL_MOD,
						     .fastopen = true,
						     .ns = &ns },
				 dir),
		       "backend") ||
	    !ASSERT_OK(svc_start(&front,
				 &(struct svc_spec){ .name = "fo-front",
						     .downstream = be.port,
						     .fastopen = true,
						     .ns = &ns },
				 dir),
		       "front"))
		goto out;
	active = fastopen_active(&ns);
	for (id = 0; id < REQUESTS; id++)
		wrong += curl_fastopen(&ns, front.port, id) != (id % FAIL_MOD ? 200 : 502);
	ASSERT_EQ(wrong, 0, "curl: every answer as the truth says");
	/* Both hops' connects: the requests really rode in their SYNs. */
	ASSERT_GE(fastopen_active(&ns) - active, 2 * REQUESTS, "connects with data in the SYN");
	check_edge(&h);
	pids[0] = front.pid;
	pids[1] = be.pid;
	truth__chain(truth, 2, &shape, pids, names);
	truth__tally_trace(&tally, &t, 0, truth, 2, 2 * FAILURES);
	truth__expect(&tally, "fast open chain", 2 * FAILURES, 0);
out:
	svc_stop(&front);
	svc_stop(&be);
	trace_stop(&t);
	claimd_stop(&h);
	netns_remove(&ns);
	tmpdir_remove(dir);
}
