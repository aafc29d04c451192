// SPDX-License-Identifier: GPL-2.0
/*
 * The same chain in shapes claimd must follow, or say it cannot: curl
 * calls tr-front, which calls tr-be (tests/peers/chain_service.py); tr-be
 * fails every fifth request, tr-front passes those failures up. Where
 * claimd can see every call, the edge tr-front -> tr-be counts each, and
 * tr-front's failures are unclaimed, tr-be's claimed. A call it missed
 * would leave tr-front's failures its own: a confident wrong answer.
 *
 *   fastopen   TCP Fast Open, each request riding in the SYN, written by a
 *              non-blocking caller whose write returns before the
 *              connection is made (curl --tcp-fastopen, chain_service.py
 *              --fastopen). In a network namespace of the test's own: its
 *              sysctl lets clients and servers send data in the SYN
 *              without cookies, and an HTB class on its loopback lets one
 *              packet through and holds the next ones, so a SYN's answer
 *              comes after the write that sent it has returned, as over
 *              any real network (on a bare loopback it comes inside it).
 *   ipv6       curl over IPv6 to tr-front, listening on ::1 only; tr-front
 *              calls 127.0.0.1, where tr-be listens on :: for both
 *              families (an IPv4 peer as a mapped IPv6 address).
 *   handoff    tr-front's handler threads hand each call to a pool of
 *              worker threads and wait for it (chain_service.py
 *              --handoff): a call made by a thread serving no request,
 *              for a request another thread read. claimd cannot tell
 *              which request it served: tr-front's failures are unknown
 *              (untied-call); its calls count on its edge all the same
 *              (every call, every callee failure) and teach it no class
 *              (no both_failed); tr-be's are claimed as ever.
 *   timeout    tr-be's failure set is slowness (chain_service.py
 *              --slow-ms): tr-front's calls there time out, it answers 502,
 *              and closes the connection only after (--down-timeout-ms):
 *              its thread answered without the call's answer, which it
 *              gave up (a failure). Without the rule for awaited calls,
 *              those 502s were claimed for want of a failed call.
 *   opaque     tr-front asks a key-value store (a line protocol, as a
 *              database's) after its call to tr-be, and fails when the
 *              store answers ERR, for other ids than tr-be fails. Its
 *              failures that tr-be explains are unclaimed as ever; those
 *              the store caused, which claimd cannot read, are unknown
 *              (opaque-call), where they were claimed; the edge is exact,
 *              its failed requests teaching it too.
 *   opaque_seeded  the same, claimd started after the services: the
 *              store's connection, opened at tr-front's start as a
 *              database pool is, is seeded, joined mid-stream; it shows no
 *              HTTP message start, and counts as opaque all the same.
 *   spawn      tr-front's handlers run curl for each call (chain_service.py
 *              --spawn): the call is a child process's, which serves
 *              nothing. Without the rule for a service's commands, its
 *              failure was claimed for want of a failed call in the
 *              request's log; now, as for hand-offs, tr-front's failures
 *              are unknown (untied-call); the calls are curl's, on its
 *              root edges, and tr-front has no edge.
 *   spawn_pid  the same under a claimd that follows the two services by
 *              --pid alone: the curl each runs is not listed, but started
 *              by a process listed, and is followed as it is without a
 *              filter. Without that, its calls were unseen and tr-front's
 *              failures claimed.
 *   port_front  the chain under a claimd that follows tr-front's port
 *              alone (--port, seeded): tr-be is not followed, its failures
 *              not judged, but tr-front's calls to it are, as every call
 *              of a process that serves a port listed: tr-front's failures
 *              are unclaimed, their cause named by tr-be's address.
 *              Without that, its calls were unseen and its failures
 *              claimed, 4 of 4.
 *   port_spawn  the same with spawn: curl's calls, made by a child of a
 *              process that serves a port listed, are followed too, and
 *              tr-front's failures are unknown (untied-call).
 *   port_opaque the same with opaque: the store's connection, opened
 *              before claimd started, to a port not listed, is seeded as
 *              one of tr-front's, and the failures the store causes are
 *              unknown (opaque-call).
 *   cgroup_front, cgroup_spawn, cgroup_opaque  as port_front, port_spawn
 *              and port_opaque, claimd following tr-front's cgroup alone
 *              (--cgroup, seeded), the client, tr-be and the store
 *              outside it: a process in the cgroup has every call
 *              followed, whatever it calls, and so do the commands it
 *              runs, which start in its cgroup.
 *   port_pool_before_listen  claimd follows tr-front's port alone, started
 *              before tr-front, which opens its store's connection before
 *              it listens (a pool made at start): claimd looks for that
 *              call as tr-front begins to serve (seeded.at_listen).
 *   port_listen_lost  the same, tr-front's listener's record lost: claimd
 *              is held (SIGSTOP) while listeners opened and closed on
 *              another port listed fill its ring buffer (--ringbuf-size
 *              4096) with records of a listener's size. Having seen records dropped, claimd
 *              looks for the processes still waiting on one
 *              (records.lost_waits): tr-front's requests are judged as
 *              in port_pool_before_listen, where they stayed unknown.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cgroup.h"
#include "harness.h"
#include "netns.h"
#include "services.h"
#include "sockets.h"
#include "test_progs.h"
#include "truth.h"

#define REQUESTS 20
#define FAIL_MOD 5
#define FAILURES (REQUESTS / FAIL_MOD)
/* timeout: tr-be's slow answers, and tr-front's patience with its calls */
/* opaque: the ids the key-value store answers ERR (tr-be fails those at 0) */
#define KV_FAIL_REM 1
#define SLOW_MS	    800
/* listen_lost: listeners opened and closed, whose records fill claimd's ring buffer */
#define FILL_LISTENERS 200
#define TIMEOUT_MS     250

/* The namespace's Fast Open: client and server (1 | 2), no cookie either side (4 | 0x200). */
#define FASTOPEN_NO_COOKIES "net.ipv4.tcp_fastopen=519"

/* What one run of the chain is made of. */
struct chain {
	const struct netns_h *ns; /* where everything runs (NULL: here) */
	bool fastopen;
	bool handoff;	  /* tr-front's calls through worker threads: not tied to its requests */
	bool spawn;	  /* tr-front's calls made by curl in a child process: not tied either */
	bool timeout;	  /* tr-be slow where it would fail; tr-front gives its calls up */
	bool opaque;	  /* tr-front asks a key-value store too: its ERRs fail it */
	bool seeded;	  /* claimd starts after the services: their store's connection seeded */
	bool by_pid;	  /* ... and follows the two by --pid alone (seeded) */
	bool by_port;	  /* ... and follows tr-front's port alone (seeded) */
	bool port_first;  /* claimd follows tr-front's port alone, started before it */
	bool listen_lost; /* ... and tr-front's listener's record is lost to a full ring buffer */
	bool by_cgroup;	  /* claimd follows tr-front's cgroup alone (seeded); the rest outside */
	const char *front_bind, *be_bind;
	const char *front_host; /* how curl names tr-front's address (NULL: 127.0.0.1) */
	const char *extra;	/* one more curl option, or NULL */
};

static int run_cmd(const struct netns_h *ns, const char *const argv[], char *out, size_t len)
{
	return ns ? netns_run(ns, argv, out, len, 10000) : proc_run(argv, out, len, 10000);
}

static int ns_cmd(const struct netns_h *ns, const char *const argv[])
{
	char out[512] = "";
	int rc = netns_run(ns, argv, out, sizeof(out), 10000);

	if (rc)
		printf("in %s, %s failed (%d): %s\n", ns->name, argv[0], rc, out);
	return rc;
}

/* Fast Open on, and a loopback that answers a SYN only after its write returned. */
static int fastopen_setup(const struct netns_h *ns)
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

/* The count of connects whose data rode in the SYN (TCPFastOpenActive), where ch runs. */
static long fastopen_active(const struct chain *ch)
{
	const char *argv[] = { "cat", "/proc/net/netstat", NULL };
	static char out[16384];
	char *names, *values, *save_n, *save_v, *n, *v;

	if (run_cmd(ch->ns, argv, out, sizeof(out)))
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

/* GET /r/<id> of tr-front with curl; the status, or -1. */
static int curl_get(const struct chain *ch, int port, int id)
{
	char url[96], out[64] = "";
	const char *argv[] = { "curl",	       "-s", "-o",	"/dev/null", "-w",
			       "%{http_code}", url,  ch->extra, NULL };

	snprintf(url, sizeof(url), "http://%s:%d/r/%d", ch->front_host ?: "127.0.0.1", port, id);
	if (run_cmd(ch->ns, argv, out, sizeof(out)))
		return -1;
	return atoi(out);
}

static bool edge_done(struct json_object *e, void *ctx)
{
	(void)ctx;
	return j_int(e, "calls") >= REQUESTS && j_int(e, "callee_failures") >= FAILURES;
}

/*
 * tr-front's edge: every call and callee failure, tied to a request or not
 * (untied: made by threads serving none, so no both_failed and no class);
 * none where its calls are another process's (spawned).
 */
static void check_edge(const struct claimd_h *h, const char *callee, int calls, bool untied,
		       bool spawned)
{
	struct json_object *e;

	if (spawned) {
		claimd_ticks_wait(h, 2); /* an edge claimd would make is in by now */
		e = claimd_edge_of_kind(h, "tr-front", callee, 0);
		ASSERT_TRUE(!e || j_int(e, "calls") == 0, "no edge: the calls are curl's");
		json_object_put(e);
		return;
	}
	e = claimd_settled_edge(h, "tr-front", callee, edge_done, NULL, 15000);
	if (!ASSERT_OK_PTR(e, "edge tr-front -> tr-be"))
		return;
	printf("edge tr-front -> %s: calls %lld, callee_failures %lld, both_failed %lld, "
	       "class %s\n",
	       callee, j_int(e, "calls"), j_int(e, "callee_failures"), j_int(e, "both_failed"),
	       j_str(e, "class"));
	ASSERT_EQ(j_int(e, "calls"), calls, "edge: every call counted");
	ASSERT_EQ(j_int(e, "callee_failures"), FAILURES, "edge: callee failures");
	ASSERT_EQ(j_int(e, "both_failed"), untied ? 0 : FAILURES, "edge: both failed");
	if (untied)
		ASSERT_STREQ(j_str(e, "class"), "unknown", "edge: no class from untied calls");
	json_object_put(e);
}

/*
 * claimd held (SIGSTOP) while a process of its own opens and closes
 * listeners on fill_port, a port listed: their records, each a listener's
 * size, fill claimd's ring buffer, and what the programs write next is
 * dropped, until it goes on.
 */
static bool ring_hold_full(const struct claimd_h *h, int fill_port)
{
	char port[16], n[16], out[256] = "";
	const char *argv[] = { "python3",
			       "-c",
			       "import socket, sys\n"
			       "for _ in range(int(sys.argv[2])):\n"
			       "    s = socket.socket()\n"
			       "    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
			       "    s.bind(('127.0.0.1', int(sys.argv[1])))\n"
			       "    s.listen()\n"
			       "    s.close()\n",
			       port,
			       n,
			       NULL };

	snprintf(port, sizeof(port), "%d", fill_port);
	snprintf(n, sizeof(n), "%d", FILL_LISTENERS);
	kill(h->pid, SIGSTOP);
	if (proc_run(argv, out, sizeof(out), 30000)) {
		printf("listeners opened and closed: %s\n", out);
		return false;
	}
	return true;
}

/* claimd goes on: were records dropped, tr-front's listener's among them? */
static bool ring_go(const struct claimd_h *h)
{
	struct json_object *st;
	bool lost;

	kill(h->pid, SIGCONT);
	st = claimctl_json(h, (const char *const[]){ "status", NULL });
	printf("ring buffer held: %lld records dropped, %lld listeners' records read\n",
	       j_int(j_get(st, "kernel"), "ringbuf_drops"), j_int(j_get(st, "records"), "listen"));
	/*
	 * Records of one size, none read meanwhile: once one of the fill's
	 * was dropped, so was each after it, tr-front's listener's too.
	 */
	lost = ASSERT_LT(j_int(j_get(st, "records"), "listen"), 2 * FILL_LISTENERS,
			 "the ring full before tr-front listened");
	json_object_put(st);
	return lost;
}

/* The chain ch under a claimd of its own, checked against the truth. */
static void run_chain(const struct chain *ch, const char *dir, const char *const claimd_extra[])
{
	const struct truth_svc shape = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	const char *const names[2] = { "tr-front", "tr-be" };
	struct svc_spec be_spec = { .name = "tr-be",
				    .fail_mod = FAIL_MOD,
				    .slow_ms = ch->timeout ? SLOW_MS : 0,
				    .fastopen = ch->fastopen,
				    .ns = ch->ns,
				    .bind = ch->be_bind };
	struct svc_spec front_spec = { .name = "tr-front",
				       .fastopen = ch->fastopen,
				       .handoff = ch->handoff,
				       .spawn = ch->spawn,
				       .down_timeout_ms = ch->timeout ? TIMEOUT_MS : 0,
				       .ns = ch->ns,
				       .bind = ch->front_bind };
	struct svc_spec kv_spec = {
		.name = "tr-kv", .kv_store = true, .fail_mod = FAIL_MOD, .fail_rem = KV_FAIL_REM
	};
	struct svc be = { 0 }, front = { 0 }, kv = { 0 };
	struct truth_tally tally = { 0 };
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct truth_svc truth[3];
	bool untied = ch->handoff || ch->spawn;
	char be_name[64] = "tr-be"; /* as claimd names it: by its address when not followed */
	char front_pid[16], be_pid[16];
	const char *const by_pid[] = { "--pid", front_pid, "--pid", be_pid, NULL };
	char front_port[16], fill_port[16];
	const char *const by_port[] = { "--port", front_port, NULL };
	struct test_cgroup cg = { 0 };
	const char *const by_cgroup[] = { "--cgroup", cg.dir, NULL };
	bool front_up;
	const char *const lost[] = { "--port",	       front_port, "--port", fill_port,
				     "--ringbuf-size", "4096",	   NULL };
	long active;
	int failed, n_truth;
	int id, wrong = 0;
	pid_t pids[2];

	/* tr-front's port chosen first: claimd follows it before tr-front listens there. */
	if (ch->port_first) {
		front_spec.port = sock_free_port();
		snprintf(front_port, sizeof(front_port), "%d", front_spec.port);
		claimd_extra = by_port;
	}
	/* Another port listed, whose listeners' records fill the ring. */
	if (ch->listen_lost) {
		snprintf(fill_port, sizeof(fill_port), "%d", sock_free_port());
		claimd_extra = lost;
	}
	/* Seeded: the services and their store's connection are older than claimd. */
	if (!ch->seeded && (!ASSERT_OK(claimd_start(&h, claimd_extra), "claimd start") ||
			    !ASSERT_OK(trace_start(&t, &h), "trace")))
		goto out;
	if (!ASSERT_OK(svc_start(&be, &be_spec, dir), "backend"))
		goto out;
	if (ch->opaque && !ASSERT_OK(svc_start(&kv, &kv_spec, dir), "key-value store"))
		goto out;
	front_spec.kv = kv.port;
	front_spec.downstream = be.port;
	if (ch->listen_lost && !ASSERT_TRUE(ring_hold_full(&h, atoi(fill_port)), "ring filled")) {
		kill(h.pid, SIGCONT);
		goto out;
	}
	/* tr-front alone in a cgroup of the test's own: started from in it. */
	if (ch->by_cgroup && (!ASSERT_OK(test_cgroup_make(&cg), "a cgroup") ||
			      !ASSERT_OK(test_cgroup_join(&cg), "joined")))
		goto out;
	front_up = ASSERT_OK(svc_start(&front, &front_spec, dir), "front");
	if (ch->by_cgroup && !ASSERT_OK(test_cgroup_return(&cg), "the test back home"))
		goto out;
	if (!front_up || (ch->listen_lost && !ring_go(&h)))
		goto out;
	if (ch->by_pid) {
		snprintf(front_pid, sizeof(front_pid), "%d", (int)front.pid);
		snprintf(be_pid, sizeof(be_pid), "%d", (int)be.pid);
		claimd_extra = by_pid;
	}
	if (ch->by_port) {
		snprintf(front_port, sizeof(front_port), "%d", front.port);
		claimd_extra = by_port;
	}
	if (ch->by_cgroup)
		claimd_extra = by_cgroup;
	if (ch->by_port || ch->port_first || ch->by_cgroup)
		snprintf(be_name, sizeof(be_name), "127.0.0.1:%d", be.port);
	/* Its store's connection, opened before it listened: looked for as it began to serve. */
	if (ch->port_first && ch->opaque &&
	    !ASSERT_TRUE(claimd_status_reaches(&h, "seeded.at_listen", 1), "calls looked for"))
		goto out;
	if (ch->seeded && (!ASSERT_OK(claimd_start(&h, claimd_extra), "claimd start") ||
			   !ASSERT_OK(trace_start(&t, &h), "trace")))
		goto out;
	active = fastopen_active(ch);
	for (id = 0; id < REQUESTS; id++)
		wrong += curl_get(ch, front.port, id) !=
			 (id % FAIL_MOD && !(ch->opaque && id % FAIL_MOD == KV_FAIL_REM) ? 200
											 : 502);
	ASSERT_EQ(wrong, 0, "curl: every answer as the truth says");
	/* Both hops' connects: the requests really rode in their SYNs. */
	if (ch->fastopen)
		ASSERT_GE(fastopen_active(ch) - active, 2 * REQUESTS,
			  "connects with data in the SYN");
	check_edge(&h, be_name, REQUESTS, untied, ch->spawn);
	pids[0] = front.pid;
	pids[1] = be.pid;
	truth__chain(truth, 2, &shape, pids, names);
	/* The store's failures, passed up by tr-front: unclaimed, its cause unseen. */
	truth[2] = truth[0];
	truth[2].rem = KV_FAIL_REM;
	truth[2].cause = NULL;
	/* Slowness is no failure of tr-be's: only tr-front's fail then. */
	failed = ch->timeout ? FAILURES : 2 * FAILURES;
	n_truth = ch->opaque ? 3 : 2;
	/* tr-be not followed: only tr-front judged, its failures' cause named by address. */
	if (ch->by_port || ch->port_first || ch->by_cgroup) {
		failed -= ch->timeout ? 0 : FAILURES;
		truth[0].cause = be_name;
		truth[1] = truth[2];
		n_truth--;
	}
	truth__tally_trace(&tally, &t, 0, truth, n_truth, failed + (ch->opaque ? FAILURES : 0));
	/* Calls tied to no request: tr-front's failures unknown, never claimed; tr-be's right. */
	if (!truth__expect(&tally, "chain", untied ? failed - FAILURES : failed,
			   untied || ch->opaque ? FAILURES : 0)) {
		claimd_losses_explain(&h);
		claimd_services_explain(&h, names, 2);
	}
out:
	svc_stop(&front);
	svc_stop(&be);
	svc_stop(&kv);
	claimd_traced_stop(&h, &t);
	test_cgroup_remove(&cg);
}

static void subtest_fastopen(const char *dir)
{
	struct netns_h ns = { 0 };
	struct chain ch = { .ns = &ns, .fastopen = true, .extra = "--tcp-fastopen" };
	const char *extra[] = { "--netns", ns.path, NULL };

	if (ASSERT_OK(netns_make(&ns, "fo"), "network namespace") &&
	    ASSERT_OK(fastopen_setup(&ns), "Fast Open and a held loopback in it"))
		run_chain(&ch, dir, extra);
	netns_remove(&ns);
}

/*
 * A chain whose front a launcher starts (svc_spec.launched, daemon_after),
 * claimd following the launcher and tr-be by --pid; the test a subreaper
 * (as a container's init or a service manager), so that it takes the
 * front in, and can reap it, once the processes above it are gone.
 */
struct launched_chain {
	struct svc be, front;
	struct claimd_h h;
	struct trace_cap t;
};

/* tr-be started, and tr-front's launcher spawned (front_spec's downstream set): 0 or -1. */
static int launched_begin(struct launched_chain *r, struct svc_spec *front_spec, const char *dir)
{
	struct svc_spec be_spec = { .name = "tr-be", .fail_mod = FAIL_MOD, .keepalive = true };

	memset(r, 0, sizeof(*r));
	if (!ASSERT_OK(prctl(PR_SET_CHILD_SUBREAPER, 1), "the test a subreaper") ||
	    !ASSERT_OK(svc_start(&r->be, &be_spec, dir), "backend"))
		return -1;
	front_spec->downstream = r->be.port;
	return ASSERT_OK(svc_spawn(&r->front, front_spec, dir), "front's launcher") ? 0 : -1;
}

/* claimd following launcher and tr-be by --pid, and its trace: 0 or -1. */
static int launched_claimd(struct launched_chain *r, pid_t launcher)
{
	char l[16], b[16];
	const char *const by_pid[] = { "--pid", l, "--pid", b, NULL };

	snprintf(l, sizeof(l), "%d", (int)launcher);
	snprintf(b, sizeof(b), "%d", (int)r->be.pid);
	return ASSERT_OK(claimd_start(&r->h, by_pid), "claimd start") &&
			       ASSERT_OK(trace_start(&r->t, &r->h), "trace")
		       ? 0
		       : -1;
}

/* Both services' failures against the truth: every one right. */
static void launched_judge(struct launched_chain *r, const char *what)
{
	const struct truth_svc shape = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	const char *const names[2] = { "tr-front", "tr-be" };
	const pid_t pids[2] = { r->front.pid, r->be.pid };
	struct truth_tally tally = { 0 };
	struct truth_svc truth[2];

	truth__chain(truth, 2, &shape, pids, names);
	truth__tally_trace(&tally, &r->t, 0, truth, 2, 2 * FAILURES);
	if (!truth__expect(&tally, what, 2 * FAILURES, 0)) {
		claimd_losses_explain(&r->h);
		claimd_services_explain(&r->h, names, 2);
	}
}

static void launched_end(struct launched_chain *r)
{
	svc_stop(&r->front);
	svc_stop(&r->be);
	claimd_traced_stop(&r->h, &r->t);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/*
 * pid_launcher_gone: tr-front launched by a shell that waits for it;
 * tr-front and tr-be keep their connections alive, a client asks tr-front
 * half its requests, then the shell is killed: tr-front is orphaned to
 * the test, and the listed process above it is gone. The client asks the
 * rest on the same connection, followed from before. tr-front calls tr-be
 * on a new connection each time: the second half's connects come after
 * the shell is gone. Without a followed service staying followed, they
 * were unseen, and the failures of ids 10 and 15, whose calls went over
 * them, were claimed.
 */
static void subtest_pid_launcher_gone(const char *dir)
{
	struct svc_spec front_spec = {
		.name = "tr-front", .keepalive = true, .down_fresh = true, .launched = true
	};
	char paused[H_PATH], resume[H_PATH];
	const char *const pause[] = { "--keepalive", "--pause-after", "10",   "--pause-file",
				      paused,	     "--resume-file", resume, NULL };
	struct launched_chain r;
	int status[REQUESTS], id, wrong = 0;
	pid_t client = -1;

	snprintf(paused, sizeof(paused), "%s/client.paused", dir);
	snprintf(resume, sizeof(resume), "%s/client.resume", dir);
	unlink(paused);
	unlink(resume);
	if (launched_begin(&r, &front_spec, dir) ||
	    !ASSERT_OK(svc_ready(&r.front, &front_spec, dir), "front under its launcher") ||
	    launched_claimd(&r, r.front.launcher))
		goto out;
	client = load_client_start(dir, r.front.port, 1, REQUESTS, NULL, pause);
	if (client <= 0 || !ASSERT_OK(wait_file(paused, 30000), "the client's first half"))
		goto out;
	/* The launcher gone: tr-front's parent is the test, which --pid does not list. */
	proc_stop(r.front.launcher, 2000);
	r.front.launcher = 0;
	if (!ASSERT_EQ(proc_ppid(r.front.pid), getpid(), "tr-front orphaned to the test") ||
	    !ASSERT_OK(write_file(resume, "go\n"), "the client resumed"))
		goto out;
	if (load_client_finish(client, dir, REQUESTS, status, REQUESTS))
		goto out;
	client = -1;
	for (id = 0; id < REQUESTS; id++)
		wrong += status[id] != (id % FAIL_MOD ? 200 : 502);
	ASSERT_EQ(wrong, 0, "client: every answer as the truth says");
	check_edge(&r.h, "tr-be", REQUESTS + 1, false, false); /* and the client's warm-up's */
	launched_judge(&r, "chain, its launcher gone");
out:
	if (client > 0)
		proc_stop(client, 1000);
	launched_end(&r);
}

/*
 * pid_daemon: tr-front's launcher, a shell, starts it once claimd runs as
 * a daemon: forked twice, its first child gone at once, the shell gone
 * after. tr-front's parent is the test before it makes its first socket:
 * no process --pid lists is above it. Followed from its birth, its
 * requests are judged as any; without that, none was (8 failures looked
 * for, 4 found: tr-be's).
 */
static void subtest_pid_daemon(const char *dir)
{
	char go[H_PATH];
	struct svc_spec front_spec = { .name = "tr-front", .daemon_after = go };
	struct launched_chain r;

	snprintf(go, sizeof(go), "%s/daemon.go", dir);
	unlink(go);
	/* Until ready, the front's pid is its launcher's. */
	if (launched_begin(&r, &front_spec, dir) || launched_claimd(&r, r.front.pid) ||
	    !ASSERT_OK(write_file(go, "go\n"), "the launcher told to start it") ||
	    !ASSERT_OK(svc_ready(&r.front, &front_spec, dir), "front, a daemon") ||
	    !ASSERT_EQ(proc_ppid(r.front.pid), getpid(), "tr-front's parent the test"))
		goto out;
	ASSERT_EQ(svc_drive(r.front.port, REQUESTS), FAILURES, "failures the client saw");
	check_edge(&r.h, "tr-be", REQUESTS, false, false);
	launched_judge(&r, "chain, its front a daemon");
out:
	launched_end(&r);
}

/*
 * port_unix: tr-be on a socket file, tr-front calling it there, claimd
 * following tr-front's port alone (--port, seeded). --port lists TCP
 * ports: tr-be, which has none, is not followed, its failures not judged;
 * tr-front's calls to it are, as every call of a service the filter
 * follows, and tr-front's failures are unclaimed.
 */
static void subtest_port_unix(const char *dir)
{
	const struct truth_svc shape = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	const char *const names[2] = { "tr-front", "tr-be" };
	char sock[H_PATH], bind[H_PATH + 8], front_port[16];
	const char *const by_port[] = { "--port", front_port, NULL };
	struct svc be = { 0 }, front = { 0 };
	struct truth_tally tally = { 0 };
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct json_object *be_counts;
	struct truth_svc truth[2];
	pid_t pids[2];

	snprintf(sock, sizeof(sock), "%s/pu.sock", dir);
	snprintf(bind, sizeof(bind), "unix:%s", sock);
	if (!ASSERT_OK(svc_start(&be,
				 &(struct svc_spec){ .name = "tr-be",
						     .bind = bind,
						     .fail_mod = FAIL_MOD,
						     .keepalive = true },
				 dir),
		       "backend on a socket file") ||
	    !ASSERT_OK(svc_start(&front,
				 &(struct svc_spec){
					 .name = "tr-front", .down_unix = sock, .keepalive = true },
				 dir),
		       "front"))
		goto out;
	snprintf(front_port, sizeof(front_port), "%d", front.port);
	if (!ASSERT_OK(claimd_start(&h, by_port), "claimd start") ||
	    !ASSERT_OK(trace_start(&t, &h), "trace"))
		goto out;
	ASSERT_EQ(svc_drive(front.port, REQUESTS), FAILURES, "failures the client saw");
	check_edge(&h, "tr-be", REQUESTS, false, false);
	be_counts = claimd_service(&h, "tr-be");
	ASSERT_TRUE(!be_counts || j_int(be_counts, "requests") == 0,
		    "tr-be, on no port listed, not followed");
	json_object_put(be_counts);
	pids[0] = front.pid;
	pids[1] = be.pid;
	truth__chain(truth, 2, &shape, pids, names);
	truth__tally_trace(&tally, &t, 0, truth, 1, FAILURES);
	if (!truth__expect(&tally, "chain to a socket file", FAILURES, 0))
		claimd_services_explain(&h, names, 2);
out:
	svc_stop(&front);
	svc_stop(&be);
	claimd_traced_stop(&h, &t);
	unlink(sock);
}

/* The shapes run on the test's own loopback, by subtest name. */
static const struct {
	const char *name;
	struct chain ch;
} loopback_chains[] = {
	{ "ipv6", { .front_bind = "::1", .be_bind = "::", .front_host = "[::1]" } },
	{ "handoff", { .handoff = true } },
	{ "timeout", { .timeout = true } },
	{ "opaque", { .opaque = true } },
	{ "opaque_seeded", { .opaque = true, .seeded = true } },
	{ "spawn", { .spawn = true } },
	{ "spawn_pid", { .spawn = true, .seeded = true, .by_pid = true } },
	{ "port_front", { .seeded = true, .by_port = true } },
	{ "port_spawn", { .spawn = true, .seeded = true, .by_port = true } },
	{ "port_opaque", { .opaque = true, .seeded = true, .by_port = true } },
	{ "port_pool_before_listen", { .opaque = true, .port_first = true } },
	{ "port_listen_lost", { .opaque = true, .port_first = true, .listen_lost = true } },
	{ "cgroup_front", { .seeded = true, .by_cgroup = true } },
	{ "cgroup_spawn", { .spawn = true, .seeded = true, .by_cgroup = true } },
	{ "cgroup_opaque", { .opaque = true, .seeded = true, .by_cgroup = true } },
};

void test_chain_shapes(void)
{
	char dir[H_DIR] = "";
	size_t i;

	if (!test__need_root() || !ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "temporary directory"))
		return;
	if (test__start_subtest("fastopen"))
		subtest_fastopen(dir);
	if (test__start_subtest("pid_launcher_gone"))
		subtest_pid_launcher_gone(dir);
	if (test__start_subtest("port_unix"))
		subtest_port_unix(dir);
	if (test__start_subtest("pid_daemon"))
		subtest_pid_daemon(dir);
	for (i = 0; i < sizeof(loopback_chains) / sizeof(loopback_chains[0]); i++)
		if (test__start_subtest(loopback_chains[i].name))
			run_chain(&loopback_chains[i].ch, dir, NULL);
	tmpdir_remove(dir);
}
