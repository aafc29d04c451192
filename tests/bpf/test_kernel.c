// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel side tested at its skeleton, as the kernel's BPF selftests do:
 * the observer loaded directly (not claimd), filtered to this process, and
 * driven with real loopback sockets of this process; records are read off
 * the ring buffer and counters out of the stats map. This file holds the
 * framing and the ingress/egress state machine (split heads, pipelining,
 * transport failures, retries, lost and healed framing, vectored heads);
 * test_kernel_verdicts.c holds each verdict rule. The service is this
 * thread; its callees are peer threads (kernel_fixture.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "counts.h"
#include "harness.h"
#include "kernel_fixture.h"
#include "sockets.h"
#include "test_progs.h"

#define REQ_FRONT	   "GET /front HTTP/1.1\r\nHost: kernel\r\n\r\n"
#define REQ_CALL	   "GET /call HTTP/1.1\r\nHost: peer\r\n\r\n"
#define REQ_OTHER	   "GET /other HTTP/1.1\r\nHost: peer\r\n\r\n"
#define RESP(code, reason) "HTTP/1.1 " #code " " reason "\r\nContent-Length: 0\r\n\r\n"
#define DONE		   CLAIMD_EG_DONE
#define FAILED		   (CLAIMD_EG_DONE | CLAIMD_EG_TRANSPORT)

static void subtest_request_response(struct kfix *f)
{
	struct kcase c;
	struct claim_slot slot;
	int port;

	if (!kcase_open(f, &c, NULL, 0) || !ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request"))
		goto out;
	/* Serving, with no call made: failing now would be its own error. */
	if (ASSERT_TRUE(kfix_slot(f, &slot), "slot"))
		ASSERT_TRUE(slot.tid == self_tid() && slot.active == 1 &&
				    slot.verdict == CLAIM_CLAIMED &&
				    slot.rule == CLAIM_RULE_NO_FAILED_EGRESS,
			    "running verdict: claimed, no failed call");
	if (!ASSERT_TRUE(svc_answer(&c.s, RESP(200, "OK")), "answer"))
		goto out;
	if (ASSERT_TRUE(kfix_slot(f, &slot), "slot"))
		ASSERT_EQ(slot.active, 0, "slot idle once answered");
	if (CHECK_INGRESS(kfix_ingress(f, c.s.port, 0), &c.s, REQ_FRONT, 200, 0)) {
		const struct claimd_ingress *in = kfix_ingress(f, c.s.port, 0);

		CHECK_VERDICT(in, CLAIM_NONE, CLAIM_RULE_NONE, CLAIMD_NO_SLOT);
		ASSERT_EQ(in->flags, 0, "ingress flags");
		ASSERT_EQ(in->egress_dropped, 0, "nothing dropped");
	}
	/* The client's request is a call outside any ingress: a root egress. */
	CHECK_EGRESS(kfix_root(f, c.s.port, 0), c.s.port, REQ_FRONT, 200, DONE);
	ASSERT_OK_PTR(kfix_listen(f, c.s.port, false), "listen record");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_CONNS), 2,
		  "client, accepted (a listener is no connection)");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_INGRESS), 1, "ingresses");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_EGRESS), 1, "egresses");
	port = c.s.port;
	kcase_close(&c);
	ASSERT_OK_PTR(kfix_listen(f, port, true), "listener closed record");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_CONN_CLOSED), 2, "both forgotten at close");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_PARSE_ERRORS), 0, "no parse error");
out:
	kcase_close(&c);
}

/* A head in pieces of 7 bytes read 3 at a time, then one byte per syscall each way. */
static void subtest_split_head(struct kfix *f)
{
	struct kcase c;
	static const char req_a[] = "GET /split-a HTTP/1.1\r\nHost: kernel\r\nContent-Length: "
				    "0\r\nAccept: */*\r\n\r\n";
	static const char req_b[] = "GET /split-b HTTP/1.1\r\nHost: kernel\r\n\r\n";
	static const char resp_b[] = RESP(503, "Service Unavailable");
	char buf[256];

	if (!kcase_open(f, &c, NULL, 0))
		goto out;
	if (!ASSERT_TRUE(write_pieces(c.s.cfd, req_a, 7), "client writes 7 by 7") ||
	    !ASSERT_TRUE(svc_read_heads(c.s.afd, 1, 3), "service reads 3 by 3") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(200, "OK")), "answer a"))
		goto out;
	if (!ASSERT_TRUE(write_pieces(c.s.cfd, req_b, 1), "client writes byte by byte") ||
	    !ASSERT_TRUE(svc_read_heads(c.s.afd, 1, 1), "service reads byte by byte") ||
	    !ASSERT_TRUE(write_pieces(c.s.afd, resp_b, 1), "service answers byte by byte") ||
	    !ASSERT_GT(sock_recv_until(c.s.cfd, buf, sizeof(buf), "\r\n\r\n", 1), 0,
		       "client reads byte by byte"))
		goto out;
	CHECK_INGRESS(kfix_ingress(f, c.s.port, 0), &c.s, req_a, 200, 0);
	if (CHECK_INGRESS(kfix_ingress(f, c.s.port, 1), &c.s, req_b, 503, 0))
		CHECK_VERDICT(kfix_ingress(f, c.s.port, 1), CLAIM_CLAIMED,
			      CLAIM_RULE_NO_FAILED_EGRESS, CLAIMD_NO_SLOT);
	ASSERT_EQ(kfix_count_ingress(f, c.s.port), 2, "two ingresses");
	CHECK_EGRESS(kfix_root(f, c.s.port, 0), c.s.port, req_a, 200, DONE);
	CHECK_EGRESS(kfix_root(f, c.s.port, 1), c.s.port, req_b, 503, DONE);
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_PARSE_ERRORS), 0, "no parse error");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_UNMATCHED), 0, "every answer matched");
out:
	kcase_close(&c);
}

/* Three requests in one write, three answers in one write; a body that reads like a status line. */
static void subtest_pipelining(struct kfix *f)
{
	struct kcase c;
	static const char *reqs[3] = {
		"GET /p1 HTTP/1.1\r\nHost: kernel\r\n\r\n",
		"GET /p2 HTTP/1.1\r\nHost: kernel\r\n\r\n",
		"GET /p3 HTTP/1.1\r\nHost: kernel\r\n\r\n",
	};
	static const char body[] = "HTTP/1.1 500 Oops\r\n";
	static const int statuses[3] = { 200, 503, 201 };
	char all[512], resp[512];
	int i;

	if (!kcase_open(f, &c, NULL, 0))
		goto out;
	snprintf(all, sizeof(all), "%s%s%s", reqs[0], reqs[1], reqs[2]);
	snprintf(resp, sizeof(resp),
		 "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s" RESP(503, "Busy")
			 RESP(201, "Created"),
		 strlen(body), body);
	if (!ASSERT_OK(sock_send(c.s.cfd, all), "three requests, one write") ||
	    !ASSERT_TRUE(svc_read_heads(c.s.afd, 3, 4096), "service reads them") ||
	    !ASSERT_OK(sock_send(c.s.afd, resp), "three answers, one write") ||
	    !ASSERT_GT(sock_recv_until(c.s.cfd, all, sizeof(all),
				       "Created\r\nContent-Length: 0\r\n\r\n", sizeof(all)),
		       0, "client reads them"))
		goto out;
	for (i = 0; i < 3; i++) {
		CHECK_INGRESS(kfix_ingress(f, c.s.port, i), &c.s, reqs[i], statuses[i], 0);
		CHECK_EGRESS(kfix_root(f, c.s.port, i), c.s.port, reqs[i], statuses[i], DONE);
	}
	if (kfix_ingress(f, c.s.port, 1))
		CHECK_VERDICT(kfix_ingress(f, c.s.port, 1), CLAIM_CLAIMED,
			      CLAIM_RULE_NO_FAILED_EGRESS, CLAIMD_NO_SLOT);
	ASSERT_EQ(kfix_count_ingress(f, c.s.port), 3, "no ingress from the body");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_FIFO_OVERFLOW), 0, "fifo held them");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_UNMATCHED), 0, "every answer matched");
out:
	kcase_close(&c);
}

enum failure { FAIL_REFUSED, FAIL_REFUSED_NONBLOCK, FAIL_RESET, FAIL_CLOSED, FAIL_GAVE_UP };

/* The service makes one call that fails in the transport. */
static bool make_failing_call(enum failure how, int port)
{
	struct pollfd pfd;
	int u;

	if (how == FAIL_REFUSED)
		return ASSERT_LT(sock_connect(port), 0, "refused") &&
		       ASSERT_EQ(errno, ECONNREFUSED, "ECONNREFUSED");
	if (how == FAIL_REFUSED_NONBLOCK) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		u = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (!ASSERT_GE(u, 0, "socket"))
			return false;
		/* In progress, then refused: seen when the caller closes it. */
		if (!ASSERT_LT(connect(u, (struct sockaddr *)&sa, sizeof(sa)), 0, "connect") ||
		    !ASSERT_EQ(errno, EINPROGRESS, "EINPROGRESS")) {
			close(u);
			return false;
		}
		pfd = (struct pollfd){ .fd = u, .events = POLLOUT };
		poll(&pfd, 1, 2000);
		close(u);
		return true;
	}
	if (how == FAIL_GAVE_UP) {
		u = sock_connect(port);
		if (!ASSERT_GE(u, 0, "connect"))
			return false;
		/* The caller writes its request and closes without waiting for an answer. */
		ASSERT_OK(sock_send(u, REQ_CALL), "call");
		close(u);
		return true;
	}
	return ASSERT_FALSE(call_once(port, NULL, REQ_CALL), "the call fails");
}

/* Each transport failure: status 0 and CLAIMD_EG_TRANSPORT, an unknown edge unclaims. */
static void subtest_transport(struct kfix *f, const char *name, enum failure how)
{
	struct kcase c;
	static const enum peer_act acts[] = {
		[FAIL_RESET] = PEER_RESET,
		[FAIL_CLOSED] = PEER_CLOSE,
		[FAIL_GAVE_UP] = PEER_HOLD,
	};
	bool refused = how == FAIL_REFUSED || how == FAIL_REFUSED_NONBLOCK;
	struct peer_step step = { refused ? PEER_ANSWER : acts[how], NULL };
	const struct claimd_ingress *in;
	int port;

	if (!test__start_subtest(name))
		return;
	if (!kcase_open(f, &c, NULL, 0))
		goto out;
	if (refused) {
		port = sock_free_port();
	} else {
		if (!peer_start(&c.p, &step, 1))
			goto out;
		port = c.p.port;
	}
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request") ||
	    !make_failing_call(how, port) ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(502, "Bad Gateway")), "answer"))
		goto out;
	in = kfix_ingress(f, c.s.port, 0);
	if (!CHECK_INGRESS(in, &c.s, REQ_FRONT, 502, 1))
		goto out;
	CHECK_LOGGED(&in->egress[0], port, refused ? NULL : REQ_CALL, 0,
		     refused ? FAILED | CLAIMD_EG_CONNECT : FAILED);
	CHECK_VERDICT(in, CLAIM_UNCLAIMED, CLAIM_RULE_UNKNOWN_EDGE, 0);
out:
	kcase_close(&c);
}

/* The kernel's counts of c's service and its edge to c's peer, against what they should be. */
static void check_counts(struct kfix *f, const struct kcase *c, struct claimd_edge_counts edge,
			 struct claimd_service_counts svc)
{
	struct claimd_edge_counts e;
	struct claimd_service_counts s;

	if (ASSERT_TRUE(kfix_edge_counts(f, c->s.port, c->p.port, &e), "edge counted")) {
		ASSERT_EQ(e.calls, edge.calls, "edge: calls");
		ASSERT_EQ(e.callee_failures, edge.callee_failures, "edge: callee failures");
		ASSERT_EQ(e.tied_failures, edge.tied_failures, "edge: tied failures");
		ASSERT_EQ(e.both_failed, edge.both_failed, "edge: both failed");
		ASSERT_EQ(e.retries, edge.retries, "edge: retries");
	}
	if (ASSERT_TRUE(kfix_service_counts(f, c->s.port, &s), "service counted")) {
		ASSERT_EQ(s.requests, svc.requests, "service: requests");
		ASSERT_EQ(s.failures, svc.failures, "service: failures");
		ASSERT_EQ(s.claimed, svc.claimed, "service: claimed");
		ASSERT_EQ(s.unclaimed, svc.unclaimed, "service: unclaimed");
		ASSERT_EQ(s.unknown, svc.unknown, "service: unknown");
	}
}

/*
 * A service instance's counts in its slots (headers/counts.h): every slot
 * of its probes held by others on every CPU, a request is refused, sent as
 * a record and counted full, the others' counts untouched; the slots free
 * again, the next is counted in one; given back (claimd_forget_services),
 * its counts are gone from every CPU and the slots free.
 */
static void subtest_service_slots(struct kfix *f)
{
	struct claimd_service_counts s;
	const struct claimd_ingress *in;
	struct kcase c = { 0 };
	__u64 owner;
	__u32 k;

	if (!kcase_open(f, &c, NULL, 0))
		goto out;
	owner = claimd_service_owner(f->tgid, c.s.port);
	for (k = 0; k < CLAIMD_SERVICE_PROBES; k++)
		ASSERT_OK(kfix_service_slot_set(f, claimd_service_slot(owner, k), owner + 1 + k, 7),
			  "another's slot");
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 1") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(200, "OK")), "answer 1"))
		goto out;
	in = kfix_ingress(f, c.s.port, 0);
	if (ASSERT_OK_PTR(in, "its record"))
		ASSERT_TRUE(in->flags & CLAIMD_IN_UNCOUNTED, "refused: the record says so");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_COUNTS_FULL), 1, "refused: counted full");
	ASSERT_FALSE(kfix_service_counts(f, c.s.port, &s), "no slot held");
	for (k = 0; k < CLAIMD_SERVICE_PROBES; k++)
		ASSERT_EQ(
			kfix_service_slot_cpus(f, claimd_service_slot(owner, k), owner + 1 + k, 7),
			f->ncpus, "the others' slots untouched");

	for (k = 0; k < CLAIMD_SERVICE_PROBES; k++)
		ASSERT_OK(kfix_service_slot_set(f, claimd_service_slot(owner, k), 0, 0), "freed");
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 2") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(200, "OK")), "answer 2"))
		goto out;
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_COUNTS_FULL), 1, "counted in a slot");
	if (ASSERT_TRUE(kfix_service_counts(f, c.s.port, &s), "a slot held"))
		ASSERT_EQ(s.requests, 1, "its one request");

	ASSERT_OK(kfix_service_forget(f, owner), "given back");
	ASSERT_FALSE(kfix_service_counts(f, c.s.port, &s), "none held after");
	for (k = 0; k < CLAIMD_SERVICE_PROBES; k++)
		ASSERT_EQ(kfix_service_slot_cpus(f, claimd_service_slot(owner, k), 0, 0), f->ncpus,
			  "free and zeroed on every CPU");
out:
	for (k = 0; k < CLAIMD_SERVICE_PROBES && c.s.port; k++)
		kfix_service_slot_set(
			f, claimd_service_slot(claimd_service_owner(f->tgid, c.s.port), k), 0, 0);
	kcase_close(&c);
}

/* A failed call repeated: the repeat is flagged and supersedes it in the verdict. */
static void subtest_retry(struct kfix *f)
{
	struct kcase c;
	struct peer_step steps[] = {
		{ PEER_RESET, NULL },
		{ PEER_ANSWER, RESP(200, "OK") },
		{ PEER_ANSWER, RESP(503, "Busy") },
		{ PEER_ANSWER, RESP(503, "Busy") },
		{ PEER_ANSWER, RESP(503, "Busy") },
		{ PEER_ANSWER, RESP(200, "OK") },
	};
	const struct claimd_ingress *in;

	if (!kcase_open(f, &c, steps, 6))
		goto out;
	/* 1: reset, retried on a new connection, which answers. */
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 1") ||
	    !ASSERT_FALSE(call_once(c.p.port, NULL, REQ_CALL), "reset") ||
	    !ASSERT_TRUE(call_once(c.p.port, &c.u, REQ_CALL), "retried") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(500, "Internal")), "answer 1"))
		goto out;
	/* 2: 503 twice on a kept-alive connection. */
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 2") ||
	    !ASSERT_TRUE(call_on(c.u, REQ_CALL), "503") ||
	    !ASSERT_TRUE(call_on(c.u, REQ_CALL), "503") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(502, "Bad Gateway")), "answer 2"))
		goto out;
	/* 3: 503, then another target: not a retry. */
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 3") ||
	    !ASSERT_TRUE(call_on(c.u, REQ_CALL), "503") ||
	    !ASSERT_TRUE(call_on(c.u, REQ_OTHER), "200") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(502, "Bad Gateway")), "answer 3"))
		goto out;
	in = kfix_ingress(f, c.s.port, 0);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 500, 2)) {
		CHECK_LOGGED(&in->egress[0], c.p.port, REQ_CALL, 0, FAILED);
		CHECK_LOGGED(&in->egress[1], c.p.port, REQ_CALL, 200, DONE | CLAIMD_EG_RETRY);
		CHECK_VERDICT(in, CLAIM_CLAIMED, CLAIM_RULE_NO_FAILED_EGRESS, CLAIMD_NO_SLOT);
	}
	in = kfix_ingress(f, c.s.port, 1);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 502, 2)) {
		CHECK_LOGGED(&in->egress[0], c.p.port, REQ_CALL, 503, DONE);
		CHECK_LOGGED(&in->egress[1], c.p.port, REQ_CALL, 503, DONE | CLAIMD_EG_RETRY);
		CHECK_VERDICT(in, CLAIM_UNCLAIMED, CLAIM_RULE_UNKNOWN_EDGE, 1);
	}
	in = kfix_ingress(f, c.s.port, 2);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 502, 2)) {
		CHECK_LOGGED(&in->egress[0], c.p.port, REQ_CALL, 503, DONE);
		CHECK_LOGGED(&in->egress[1], c.p.port, REQ_OTHER, 200, DONE);
		CHECK_VERDICT(in, CLAIM_UNCLAIMED, CLAIM_RULE_UNKNOWN_EDGE, 0);
	}
	/*
	 * The same three requests in the kernel's counts: six calls, two of
	 * them retries; the callee failed in requests 2 and 3 (1's failure was
	 * superseded by its retry), and both of those failed too.
	 */
	check_counts(f, &c,
		     (struct claimd_edge_counts){ .calls = 6,
						  .callee_failures = 2,
						  .tied_failures = 2,
						  .both_failed = 2,
						  .retries = 2 },
		     (struct claimd_service_counts){
			     .requests = 3, .failures = 3, .claimed = 1, .unclaimed = 2 });
out:
	kcase_close(&c);
}

/*
 * Counting needs no record: with records off, a request and its calls are
 * counted in the kernel and nothing reaches the ring buffer.
 */
static void subtest_counts_without_records(struct kfix *f)
{
	struct kcase c;
	struct peer_step steps[] = {
		{ PEER_ANSWER, RESP(503, "Busy") },
		{ PEER_ANSWER, RESP(200, "OK") },
	};

	if (!kcase_open(f, &c, steps, 2))
		goto out;
	kfix_records(f, false);
	/* 1: the callee fails, and so does the request. 2: both fine. */
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 1") ||
	    !ASSERT_TRUE(call_once(c.p.port, &c.u, REQ_CALL), "503") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(502, "Bad Gateway")), "answer 1") ||
	    !ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 2") ||
	    !ASSERT_TRUE(call_on(c.u, REQ_OTHER), "200") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(200, "OK")), "answer 2"))
		goto out;
	kfix_drain(f);
	ASSERT_EQ(kfix_count_ingress(f, c.s.port), 0, "no ingress record");
	/* The peer serves requests in this process too: its two count as well. */
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_COUNTED), 4, "two requests each counted");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_COUNTS_FULL), 0, "nothing refused");
	check_counts(
		f, &c,
		(struct claimd_edge_counts){
			.calls = 2, .callee_failures = 1, .tied_failures = 1, .both_failed = 1 },
		(struct claimd_service_counts){ .requests = 2, .failures = 1, .unclaimed = 1 });
out:
	kfix_records(f, true);
	kcase_close(&c);
}

/*
 * The counters that changed are named in claimd's dirty lists, once per
 * epoch and CPU: two requests with a call each note the service and the
 * edge once (the test's thread stays on one CPU here, or notes once per CPU
 * it ran on); in the next epoch, the next request notes them again, in the
 * other list.
 */
static void subtest_dirty_lists(struct kfix *f)
{
	struct kcase c;
	struct peer_step steps[] = {
		{ PEER_ANSWER, RESP(200, "OK") },
		{ PEER_ANSWER, RESP(503, "Busy") },
		{ PEER_ANSWER, RESP(200, "OK") },
	};
	cpu_set_t one, was;
	bool overflow;
	int n;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_getaffinity(0, sizeof(was), &was);
	sched_setaffinity(0, sizeof(one), &one);
	if (!kcase_open(f, &c, steps, 3))
		goto out;
	kfix_count_epoch(f, 7);
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 1") ||
	    !ASSERT_TRUE(call_once(c.p.port, &c.u, REQ_CALL), "200") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(200, "OK")), "answer 1") ||
	    !ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 2") ||
	    !ASSERT_TRUE(call_on(c.u, REQ_CALL), "503") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(502, "Bad Gateway")), "answer 2"))
		goto out;
	n = kfix_dirty(f, 7, c.s.port, c.p.port, &overflow);
	ASSERT_FALSE(overflow, "no list overflowed");
	ASSERT_EQ(n & 0xff, 1, "the edge noted once in epoch 7");
	ASSERT_EQ(n >> 8, 1, "the service noted once in epoch 7");
	ASSERT_EQ(kfix_dirty(f, 8, c.s.port, c.p.port, &overflow), 0, "nothing in the other list");
	kfix_count_epoch(f, 8);
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 3") ||
	    !ASSERT_TRUE(call_on(c.u, REQ_CALL), "200") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(200, "OK")), "answer 3"))
		goto out;
	n = kfix_dirty(f, 8, c.s.port, c.p.port, &overflow);
	ASSERT_EQ(n & 0xff, 1, "the edge noted again in epoch 8");
	ASSERT_EQ(n >> 8, 1, "the service noted again in epoch 8");
out:
	kfix_count_epoch(f, 0);
	sched_setaffinity(0, sizeof(was), &was);
	kcase_close(&c);
}

/*
 * The root caller: a child that listens on nothing. It waits for a byte on
 * go before each half of its calls, and writes one on done after the first.
 * Exit status: 0, or the step that went wrong.
 */
static int root_caller(int port, int go, int done)
{
	char b;
	int fd = -1;

	if (read(go, &b, 1) != 1)
		return 10;
	if (call_once(port, NULL, REQ_CALL))
		return 11; /* the peer resets it */
	if (!call_once(port, &fd, REQ_CALL))
		return 12;
	if (write(done, "1", 1) != 1 || read(go, &b, 1) != 1)
		return 13;
	if (!call_on(fd, REQ_CALL) || !call_on(fd, REQ_CALL) || !call_on(fd, REQ_OTHER))
		return 14;
	close(fd);
	return 0;
}

/*
 * Calls outside any request are counted in the kernel too. A process that
 * serves nothing makes root calls, on the edge from it to the callee (local
 * port CLAIMD_ROOT_PORT): a reset and its retry on a new connection (200),
 * then 503, its retry (503), and another target (200). Each root call is a
 * request of its own: three callee failures, no request that failed with
 * them, two retries. Records go to the ring buffer for its first call and
 * while they are on, each with the kernel's retry mark. This process
 * listens: its own call outside a request is counted apart, on no edge.
 */
static void subtest_root_counts(struct kfix *f)
{
	struct kcase c;
	struct peer_step steps[] = {
		{ PEER_RESET, NULL },
		{ PEER_ANSWER, RESP(200, "OK") },
		{ PEER_ANSWER, RESP(503, "Busy") },
		{ PEER_ANSWER, RESP(503, "Busy") },
		{ PEER_ANSWER, RESP(200, "OK") },
	};
	int go[2] = { -1, -1 }, done[2] = { -1, -1 }, status = -1;
	struct claimd_edge_counts e;
	pid_t pid = -1, child = -1;
	char b;

	if (!kcase_open(f, &c, steps, 5) || !ASSERT_OK(pipe(go), "pipe") ||
	    !ASSERT_OK(pipe(done), "pipe"))
		goto out;
	pid = fork();
	if (pid == 0)
		_exit(root_caller(c.p.port, go[0], done[1]));
	child = pid;
	if (!ASSERT_GT(pid, 0, "fork") || !ASSERT_TRUE(kfix_follow(f, pid), "follow the child") ||
	    !ASSERT_EQ(write(go[1], "1", 1), 1, "go") ||
	    !ASSERT_EQ(read(done[0], &b, 1), 1, "first half done"))
		goto out;
	kfix_records(f, false);
	if (!ASSERT_EQ(write(go[1], "1", 1), 1, "go on") ||
	    !ASSERT_EQ(waitpid(pid, &status, 0), pid, "the child ends"))
		goto out;
	pid = -1;
	if (!ASSERT_EQ(status, 0, "its calls went as planned"))
		goto out;
	/* Ours, as the service's client: this process listens, so it is no root call. */
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "a service's call outside requests") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(200, "OK")), "answered"))
		goto out;
	kfix_drain(f);
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_ROOT_CALLS), 5, "five root calls counted");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_CALLS_OUTSIDE), 1, "one call outside requests");
	CHECK_EGRESS(kfix_root(f, c.p.port, 0), c.p.port, REQ_CALL, 0, FAILED);
	CHECK_EGRESS(kfix_root(f, c.p.port, 1), c.p.port, REQ_CALL, 200, DONE | CLAIMD_EG_RETRY);
	ASSERT_TRUE(kfix_root(f, c.p.port, 2) == NULL, "records only while on, or the first");
	if (ASSERT_TRUE(kfix_root_counts(f, child, c.p.port, &e), "the child's root edge")) {
		ASSERT_EQ(e.calls, 5, "calls");
		ASSERT_EQ(e.callee_failures, 3, "callee failures: one per failed call");
		ASSERT_EQ(e.both_failed, 0, "no request failed with them");
		ASSERT_EQ(e.retries, 2, "retries");
	}
	ASSERT_FALSE(kfix_root_counts(f, f->tgid, c.s.port, &e),
		     "no root edge of a process that listens");
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (done[i] >= 0)
			close(done[i]);
	}
	kfix_records(f, true);
	kcase_close(&c);
}

/*
 * The commonest retry: the callee refused the connection, the caller
 * connects again and the call goes through. The design's rule ("a failed
 * call followed by a successful retry of it does not count as failed")
 * asks for the second entry to supersede the refused one.
 */
static void subtest_retry_after_refused(struct kfix *f)
{
	struct kcase c;
	struct peer_step step = { PEER_ANSWER, RESP(200, "OK") };
	const struct claimd_ingress *in;
	int port, fd = -1;
	bool ok;

	if (!kcase_open(f, &c, NULL, 0))
		goto out;
	fd = sock_bound(&port); /* bound, not listening: refused */
	if (!ASSERT_GE(fd, 0, "bound socket") ||
	    !ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request") ||
	    !make_failing_call(FAIL_REFUSED, port))
		goto out;
	/* Now it listens (the peer owns fd): the call is made again, and answered. */
	ok = peer_start_on(&c.p, fd, &step, 1);
	fd = -1;
	if (!ok || !ASSERT_TRUE(call_once(c.p.port, NULL, REQ_CALL), "retried") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(500, "Internal")), "answer"))
		goto out;
	in = kfix_ingress(f, c.s.port, 0);
	if (!CHECK_INGRESS(in, &c.s, REQ_FRONT, 500, 2))
		goto out;
	CHECK_LOGGED(&in->egress[0], port, NULL, 0, FAILED | CLAIMD_EG_CONNECT);
	CHECK_LOGGED(&in->egress[1], port, REQ_CALL, 200, DONE | CLAIMD_EG_RETRY);
	CHECK_VERDICT(in, CLAIM_CLAIMED, CLAIM_RULE_NO_FAILED_EGRESS, CLAIMD_NO_SLOT);
out:
	if (fd >= 0)
		close(fd);
	kcase_close(&c);
}

/* A request head in n iovec entries: its request line, n - 2 headers, the blank line. */
static int head_iov(struct iovec *iov, int n, const char *line, char hdrs[][16])
{
	int i;

	iov[0] = (struct iovec){ (void *)line, strlen(line) };
	for (i = 1; i < n - 1; i++) {
		snprintf(hdrs[i], 16, "X-H%d: %d\r\n", i, i);
		iov[i] = (struct iovec){ hdrs[i], strlen(hdrs[i]) };
	}
	iov[n - 1] = (struct iovec){ "\r\n", 2 };
	return n;
}

static bool writev_all(int fd, struct iovec *iov, int n)
{
	size_t total = 0;
	int i;

	for (i = 0; i < n; i++)
		total += iov[i].iov_len;
	return writev(fd, iov, n) == (ssize_t)total;
}

/* How a call's head is written where the kernel cannot frame it. */
enum unframed_head {
	HEAD_IOV_70, /* one writev of 70 entries: past the bound framed per syscall */
	HEAD_MMSG,   /* one sendmmsg: bytes the framer is never handed */
};

/* Writes "GET /lost" that way on fd; true when every byte went. */
static bool write_unframed(int fd, enum unframed_head how, struct iovec iov[70], char hdrs[70][16])
{
	int n = head_iov(iov, 70, "GET /lost HTTP/1.1\r\n", hdrs);
	struct mmsghdr m = { .msg_hdr = { .msg_iov = iov, .msg_iovlen = n } };
	size_t total = 0;
	int i;

	if (how == HEAD_IOV_70)
		return writev_all(fd, iov, n);
	for (i = 0; i < n; i++)
		total += iov[i].iov_len;
	return sendmmsg(fd, &m, 1, 0) == 1 && m.msg_len == total;
}

/*
 * A call's head the kernel cannot frame (how), on a connection that carried
 * HTTP before (one that never did is left alone: not ours): the framing is
 * lost (the ingress is blind: unknown), and heals at the next request on
 * the same connection, which is followed again. Of 70 entries, the first 64
 * are framed: the call is logged; a sendmmsg's bytes are not seen at all.
 */
static void subtest_framing_lost(struct kfix *f, enum unframed_head how)
{
	struct kcase c;
	struct peer_step steps[] = { { PEER_ANSWER, RESP(200, "OK") },
				     { PEER_ANSWER, RESP(200, "OK") },
				     { PEER_ANSWER, RESP(503, "Busy") } };
	int mmsg = how == HEAD_MMSG;
	const struct claimd_ingress *in;
	struct iovec iov[70];
	char hdrs[70][16];
	char buf[512];

	/* sendmmsg: a call first, framed, outside any request: the connection is HTTP. */
	if (!kcase_open(f, &c, steps + !mmsg, 2 + mmsg))
		goto out;
	c.u = sock_connect(c.p.port);
	if (!ASSERT_GE(c.u, 0, "connect"))
		goto out;
	sock_deadline(c.u);
	if (mmsg && !ASSERT_TRUE(call_on(c.u, REQ_CALL), "a call framed first"))
		goto out;
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 1") ||
	    !ASSERT_TRUE(write_unframed(c.u, how, iov, hdrs), "a head not framed") ||
	    !ASSERT_GT(sock_recv_until(c.u, buf, sizeof(buf), "\r\n\r\n", sizeof(buf)), 0, "200") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(502, "Bad Gateway")), "answer 1"))
		goto out;
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_FRAMING_LOST), 1, "framing lost");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_PARSE_TRUNCATED), 1, "bytes past what was framed");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_BLIND), 1, "ingress made blind");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_FRAMING_HEALED), 0, "not healed yet");
	in = kfix_ingress(f, c.s.port, 0);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 502, !mmsg)) {
		ASSERT_EQ(in->flags, CLAIMD_IN_BLIND, "blind");
		if (!mmsg)
			CHECK_LOGGED(&in->egress[0], c.p.port, "GET /lost HTTP/1.1\r\n\r\n", 200,
				     DONE);
		CHECK_VERDICT(in, CLAIM_UNKNOWN, CLAIM_RULE_FRAMING_LOST, CLAIMD_NO_SLOT);
	}
	/* The next call on the same connection starts a message: healed, followed. */
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 2") ||
	    !ASSERT_TRUE(call_on(c.u, REQ_CALL), "503") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(502, "Bad Gateway")), "answer 2"))
		goto out;
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_FRAMING_HEALED), 1, "healed");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_BLIND), 1, "no more blind ingresses");
	in = kfix_ingress(f, c.s.port, 1);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 502, 1)) {
		ASSERT_EQ(in->flags, 0, "followed again");
		CHECK_LOGGED(&in->egress[0], c.p.port, REQ_CALL, 503, DONE);
		CHECK_VERDICT(in, CLAIM_UNCLAIMED, CLAIM_RULE_UNKNOWN_EDGE, 0);
	}
out:
	kcase_close(&c);
}

/*
 * A request the service reads with MSG_TRUNC (TCP drops its bytes; the
 * buffer keeps whatever it held, here the last request): nothing is framed
 * from the buffer, the framing of what it reads is lost, and the next
 * request heals it.
 */
static void subtest_trunc_read(struct kfix *f)
{
	struct kcase c;
	char buf[256];

	if (!kcase_open(f, &c, NULL, 0) || !ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(200, "OK")), "answer"))
		goto out;
	memcpy(buf, REQ_FRONT, sizeof(REQ_FRONT)); /* a request the bytes might be taken for */
	if (!ASSERT_OK(sock_send(c.s.cfd, REQ_OTHER), "another request") ||
	    !ASSERT_EQ(recv(c.s.afd, buf, sizeof(REQ_OTHER) - 1, MSG_TRUNC | MSG_WAITALL),
		       (ssize_t)sizeof(REQ_OTHER) - 1, "read, its bytes dropped"))
		goto out;
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_FRAMING_LOST), 1, "framing lost");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_PARSE_TRUNCATED), 1, "bytes not framed");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_INGRESS), 1, "no request taken from the buffer");
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 3") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(503, "Busy")), "answer 3"))
		goto out;
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_FRAMING_HEALED), 1, "healed");
	ASSERT_EQ(kfix_count_ingress(f, c.s.port), 2, "the first and the third");
	CHECK_INGRESS(kfix_ingress(f, c.s.port, 1), &c.s, REQ_FRONT, 503, 0);
out:
	kcase_close(&c);
}

/* The slot in sock_marks of fd's socket (its ports), or -1. */
static long sock_slot_of(int fd)
{
	struct sockaddr_in local, remote;
	socklen_t ll = sizeof(local), rl = sizeof(remote);

	if (getsockname(fd, (struct sockaddr *)&local, &ll) ||
	    getpeername(fd, (struct sockaddr *)&remote, &rl))
		return -1;
	return claimd_sock_slot(ntohs(local.sin_port), ntohs(remote.sin_port));
}

/*
 * The socket filter's marks follow the sockets: a followed socket's slot
 * (its ports, the local one first) counts it from its birth while it is
 * open (its bytes reach the framer), and no longer once it is closed;
 * claimd's own changes (for the connections it seeds) move the slot they
 * name. The two ends of a loopback connection sit in two slots: a peer
 * claimd does not follow would otherwise pass the filter at every read
 * and write.
 */
static void subtest_sock_marks(struct kfix *f)
{
	__u32 seeded_slot = claimd_sock_slot(8080, 54321), before;
	struct kcase c;
	long slot[2];
	__u32 open[2];
	int i;

	if (!kcase_open(f, &c, NULL, 0) || !ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(200, "OK")), "answer"))
		goto out;
	slot[0] = sock_slot_of(c.s.afd);
	slot[1] = sock_slot_of(c.s.cfd);
	if (!ASSERT_GE(slot[0], 0, "accepted socket's ports") ||
	    !ASSERT_GE(slot[1], 0, "client socket's ports") ||
	    !ASSERT_NEQ(slot[0], slot[1], "the two ends in two slots"))
		goto out;
	for (i = 0; i < 2; i++)
		open[i] = kfix_sock_marks(f, slot[i]);
	ASSERT_GE(open[0], 1, "the accepted socket counted");
	ASSERT_GE(open[1], 1, "the client's socket counted");
	ASSERT_EQ(kfix_count_ingress(f, c.s.port), 1, "its request framed");
	close(c.s.cfd);
	close(c.s.afd);
	c.s.cfd = c.s.afd = -1;
	for (i = 0; i < 2; i++)
		ASSERT_EQ(kfix_sock_marks(f, slot[i]), open[i] - 1,
			  i ? "the client's count gone at close"
			    : "the accepted count gone at close");

	before = kfix_sock_marks(f, seeded_slot);
	if (!ASSERT_OK(kfix_sock_mark(f, seeded_slot, 1), "claimd marks a seeded socket"))
		goto out;
	ASSERT_EQ(kfix_sock_marks(f, seeded_slot), before + 1, "its slot counts it");
	ASSERT_OK(kfix_sock_mark(f, seeded_slot, -1), "claimd forgets it");
	ASSERT_EQ(kfix_sock_marks(f, seeded_slot), before, "and the count is back");
out:
	kcase_close(&c);
}

/*
 * After the connection of first ended (at a close claimd saw, or found
 * stale: stale says which): its request (REQ_FRONT) ended closed
 * unanswered, and the connection of second followed as any other.
 */
static void check_after_end(struct kfix *f, struct svc *first, struct svc *second, int stale)
{
	const struct claimd_ingress *in;
	bool served;

	/* First: a stale entry is found at the bytes its fd's new socket moves. */
	served =
		ASSERT_TRUE(svc_request(second, REQ_OTHER), "a request on the second connection") &&
		ASSERT_TRUE(svc_answer(second, RESP(503, "Busy")), "its answer");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_CONN_STALE), stale, stale ? "found stale" : "none stale");
	ASSERT_EQ(kfix_count_ingress(f, first->port), 1 + served, "both requests recorded");
	in = kfix_ingress(f, first->port, 0);
	if (CHECK_INGRESS(in, first, REQ_FRONT, 0, 0))
		ASSERT_EQ(in->flags, CLAIMD_IN_CLOSED, "closed unanswered");
	if (served)
		CHECK_INGRESS(kfix_ingress(f, first->port, 1), second, REQ_OTHER, 503, 0);
}

/*
 * The client resets its connection (a zero linger) before the service has
 * read its request: the kernel zeroes the accepted socket's bound port, and
 * the service still reads the request and fails to answer it. Its record
 * names the service's own port all the same (the source port stays), and
 * the answer it tried is the one recorded, the client gone.
 */
static void subtest_reset_before_read(struct kfix *f)
{
	struct linger zero = { .l_onoff = 1, .l_linger = 0 };
	const struct claimd_ingress *in;
	char buf[512];
	struct kcase c;

	if (!kcase_open(f, &c, NULL, 0) || !ASSERT_OK(sock_send(c.s.cfd, REQ_FRONT), "request"))
		goto out;
	setsockopt(c.s.cfd, SOL_SOCKET, SO_LINGER, &zero, sizeof(zero));
	close(c.s.cfd);
	c.s.cfd = -1;
	sleep_ms(50);
	ASSERT_GT(sock_recv_until(c.s.afd, buf, sizeof(buf), "\r\n\r\n", sizeof(buf)), 0,
		  "the request read after the reset");
	ASSERT_LT(send(c.s.afd, RESP(200, "OK"), strlen(RESP(200, "OK")), MSG_NOSIGNAL), 0,
		  "the answer fails");
	in = kfix_ingress(f, c.s.port, 0);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 200, 0))
		ASSERT_EQ(in->flags, CLAIMD_IN_PEER_GONE, "the client gone");
out:
	kcase_close(&c);
}

/*
 * A call made by a thread of its own, serving no request: on *fd, kept
 * alive (a new connection to port when it is -1); answered or not.
 */
struct other_call {
	int port;
	int *fd;
	bool answered;
};

static void *other_call_main(void *arg)
{
	struct other_call *o = arg;

	o->answered = *o->fd < 0 ? call_once(o->port, o->fd, REQ_CALL) : call_on(*o->fd, REQ_CALL);
	return NULL;
}

static bool call_from_other_thread(int port, int *fd)
{
	struct other_call o = { .port = port, .fd = fd };
	pthread_t th;

	if (pthread_create(&th, NULL, other_call_main, &o))
		return false;
	pthread_join(th, NULL);
	return o.answered;
}

/*
 * A call made by a thread that serves no request, in a process that serves
 * (a worker pool's thread calling for a request another thread read): the
 * request open while it began or ended cannot be judged, its failure
 * unknown (untied-call), never claimed for want of a failed call in its
 * own log. One that began and ended before the request was read leaves it
 * judged as ever.
 */
static void subtest_outside_call(struct kfix *f)
{
	struct peer_step steps[] = {
		{ PEER_ANSWER, RESP(503, "Busy") },
		{ PEER_ANSWER, RESP(503, "Busy") },
	};
	const struct claimd_ingress *in;
	struct claimd_edge_counts e;
	struct kcase c;

	if (!kcase_open(f, &c, steps, 2) ||
	    !ASSERT_TRUE(call_from_other_thread(c.p.port, &c.u), "a call before the request") ||
	    !ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 1") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(500, "Internal")), "answer 1") ||
	    !ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 2") ||
	    !ASSERT_TRUE(call_from_other_thread(c.p.port, &c.u), "a call while it is open") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(502, "Bad Gateway")), "answer 2"))
		goto out;
	in = kfix_ingress(f, c.s.port, 0);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 500, 0)) {
		CHECK_VERDICT(in, CLAIM_CLAIMED, CLAIM_RULE_NO_FAILED_EGRESS, CLAIMD_NO_SLOT);
		ASSERT_EQ(in->flags, 0, "request 1: judged as ever");
	}
	in = kfix_ingress(f, c.s.port, 1);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 502, 0)) {
		CHECK_VERDICT(in, CLAIM_UNKNOWN, CLAIM_RULE_UNTIED_CALL, CLAIMD_NO_SLOT);
		ASSERT_EQ(in->flags, CLAIMD_IN_UNTIED, "request 2: a call it may have made unseen");
	}
	/* The other thread's two, and the client's (a thread of this process too). */
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_CALLS_OUTSIDE), 4, "calls outside requests");
	/*
	 * Each on the edge of the service the process is: the port of the
	 * request it began last. Here the process is the peer and the service
	 * too, and each call's own request began last, but for the client's
	 * second call, which ended after the other thread's call began its
	 * request at the peer. Counted, teaching no class.
	 */
	if (ASSERT_TRUE(kfix_edge_counts(f, c.p.port, c.p.port, &e), "the other thread's")) {
		ASSERT_EQ(e.calls, 2, "its calls");
		ASSERT_EQ(e.callee_failures, 2, "its callee failures (503)");
		ASSERT_EQ(e.tied_failures + e.both_failed, 0, "taught nothing");
	}
	if (ASSERT_TRUE(kfix_edge_counts(f, c.s.port, c.s.port, &e), "the client's first")) {
		ASSERT_EQ(e.calls, 1, "its call");
		ASSERT_EQ(e.callee_failures, 1, "its callee failure (500)");
		ASSERT_EQ(e.tied_failures + e.both_failed, 0, "taught nothing");
	}
	if (ASSERT_TRUE(kfix_edge_counts(f, c.p.port, c.s.port, &e), "the client's second")) {
		ASSERT_EQ(e.calls, 1, "its call");
		ASSERT_EQ(e.callee_failures, 1, "its callee failure (502)");
		ASSERT_EQ(e.tied_failures + e.both_failed, 0, "taught nothing");
	}
	/*
	 * Request 2 at least. The peer, a thread of this process too, serves
	 * the other thread's calls: whether its own request sees its caller's
	 * read before its answer's write returns is the scheduler's choice.
	 */
	ASSERT_GE(kfix_stat(f, CLAIMD_ST_UNTIED), 1, "requests made unknown");
out:
	kcase_close(&c);
}

#define REQ_UPGRADE \
	"GET /front HTTP/1.1\r\nHost: kernel\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
#define RESP_101 \
	"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"

/*
 * A connection upgraded (101 Switching Protocols, a WebSocket's handshake):
 * the 101 answers its request, which succeeded, and a call answered 101
 * succeeded too. What follows on either connection is another protocol,
 * never framed as HTTP whatever it looks like (here, a request and a 500
 * each way); and its close leaves nothing unanswered.
 */
static void subtest_upgrade(struct kfix *f)
{
	struct peer_step steps[] = {
		{ PEER_ANSWER, RESP_101 },
		{ PEER_ANSWER, RESP(500, "Internal") }, /* bytes of the upgraded call */
	};
	const struct claimd_ingress *in;
	struct kcase c;

	if (!kcase_open(f, &c, steps, 2) ||
	    !ASSERT_TRUE(svc_request(&c.s, REQ_UPGRADE), "the upgrade asked") ||
	    !ASSERT_TRUE(call_once(c.p.port, &c.u, REQ_CALL), "a call answered 101") ||
	    !ASSERT_TRUE(call_on(c.u, REQ_CALL), "HTTP-looking bytes on the upgraded call") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP_101), "the upgrade answered") ||
	    !ASSERT_TRUE(svc_request(&c.s, REQ_OTHER), "HTTP-looking bytes from the client") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(503, "Busy")), "and from the service"))
		goto out;
	kcase_close(&c);
	kfix_drain(f);
	ASSERT_EQ(kfix_count_ingress(f, c.s.port), 1, "one request: the upgrade");
	in = kfix_ingress(f, c.s.port, 0);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 101, 1)) {
		CHECK_LOGGED(&in->egress[0], c.p.port, REQ_CALL, 101, DONE);
		CHECK_VERDICT(in, CLAIM_NONE, CLAIM_RULE_NONE, CLAIMD_NO_SLOT);
		ASSERT_EQ(in->flags, 0, "ingress flags: nothing closed unanswered");
	}
	ASSERT_EQ(kfix_count_ingress(f, c.p.port), 1, "the peer's: the call, answered 101");
	in = kfix_ingress(f, c.p.port, 0);
	if (ASSERT_OK_PTR(in, "the peer's record"))
		ASSERT_EQ(in->status, 101, "its status");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_INGRESS), 2, "ingresses: the upgrade, at each end");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_EGRESS), 2, "calls: the upgraded one and the client's");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_PARSE_ERRORS), 0, "nothing framed after the upgrade");
	return;
out:
	kcase_close(&c);
}

/*
 * One socket under two fds: the request read through one, the answer
 * written through a duplicate (as an inetd-style service reads fd 0 and
 * writes fd 1). Both are the same connection, framed as one stream: the
 * request answered, nothing found stale.
 */
static void subtest_dup_fds(struct kfix *f)
{
	struct kcase c;
	struct svc via;

	if (!kcase_open(f, &c, NULL, 0) || !ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request"))
		goto out;
	via = c.s;
	via.afd = dup(c.s.afd);
	if (!ASSERT_GE(via.afd, 0, "dup"))
		goto out;
	ASSERT_TRUE(svc_answer(&via, RESP(200, "OK")), "answered through the duplicate");
	close(via.afd);
	CHECK_INGRESS(kfix_ingress(f, c.s.port, 0), &c.s, REQ_FRONT, 200, 0);
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_CONN_STALE), 0, "none stale");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_CONNS), 2, "one connection each end");
out:
	kcase_close(&c);
}

/*
 * A forking server: the parent accepts, a child it forks reads the request
 * and answers it, the parent closes its copy of the fd (no end: the child
 * holds the socket), the child calls outside any request and exits. The
 * socket is a connection of the process that moved its first bytes, the
 * child: its request answered 200, recorded under the child, nothing
 * closed unanswered. The child served, though its parent listens: its call
 * is its service's, on its edge, no root call.
 */
static void subtest_forked_child(struct kfix *f)
{
	struct peer_step steps[] = { { PEER_ANSWER, RESP(503, "Busy") } };
	const struct claimd_ingress *in;
	int gate[2] = { -1, -1 }, status = -1;
	struct claimd_edge_counts e;
	__u64 outside;
	struct kcase c;
	char buf[512];
	pid_t pid;

	if (!kcase_open(f, &c, steps, 1) || !ASSERT_OK(pipe(gate), "pipe"))
		goto out;
	outside = kfix_stat(f, CLAIMD_ST_CALLS_OUTSIDE);
	pid = fork();
	if (pid == 0) {
		/*
		 * Serves once it is followed (the fixture follows listed
		 * processes only), then calls outside any request: its parent
		 * holds the listener, it serves.
		 */
		if (read(gate[0], buf, 1) == 1 &&
		    sock_recv_until(c.s.afd, buf, sizeof(buf), "\r\n\r\n", sizeof(buf)) > 0)
			write_pieces(c.s.afd, RESP(200, "OK"), 4096);
		call_once(c.p.port, NULL, REQ_CALL);
		_exit(0);
	}
	if (!ASSERT_GT(pid, 0, "fork"))
		goto out;
	ASSERT_TRUE(kfix_follow(f, pid), "the child followed");
	close(c.s.afd);
	c.s.afd = -1;
	ASSERT_EQ(write(gate[1], "x", 1), 1, "the child goes on");
	ASSERT_TRUE(call_on(c.s.cfd, REQ_FRONT), "answered by the child");
	ASSERT_EQ(waitpid(pid, &status, 0), pid, "the child exits");
	kfix_drain(f);
	ASSERT_EQ(kfix_count_ingress(f, c.s.port), 1, "one request recorded");
	in = kfix_ingress(f, c.s.port, 0);
	if (ASSERT_OK_PTR(in, "its record")) {
		ASSERT_EQ(in->tgid, (__u32)pid, "under the child");
		ASSERT_EQ(in->status, 200, "answered");
		ASSERT_EQ(in->flags, 0, "nothing lost or closed");
	}
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_CONN_STALE), 0, "none stale");
	/* The child served: its call outside requests is its service's, no root call. */
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_CALLS_OUTSIDE) - outside, 2,
		  "calls outside requests: the child's, and the client's (this process)");
	if (ASSERT_TRUE(kfix_proc_edge_counts(f, pid, c.s.port, c.p.port, &e),
			"its service's edge")) {
		ASSERT_EQ(e.calls, 1, "its call");
		ASSERT_EQ(e.callee_failures, 1, "its callee failure (503)");
		ASSERT_EQ(e.tied_failures + e.both_failed, 0, "taught nothing");
	}
	ASSERT_FALSE(kfix_root_counts(f, pid, c.p.port, &e), "no root edge");
out:
	if (gate[0] >= 0) {
		close(gate[0]);
		close(gate[1]);
	}
	kcase_close(&c);
}

/*
 * close_range(2) closes a followed connection's fd with a request waiting,
 * and fcntl(F_DUPFD) puts a second connection's socket at its number; the
 * service then writes its answer there, which goes to the second
 * connection's client. keep 0: that close is the socket's end, seen as any
 * close, and the request ends there, closed unanswered; the answer is the
 * second connection's bytes. keep 1: a duplicate fd keeps the socket alive,
 * so no end is seen; the entry is found stale at the answer's bytes, and
 * the request ends closed unanswered then. Never answered by those bytes.
 */
static void subtest_fd_replaced(struct kfix *f, int keep)
{
	struct svc s2 = { .lfd = -1, .cfd = -1, .afd = -1 }, via;
	struct kcase c;
	int fd, kept = -1;

	if (!kcase_open(f, &c, NULL, 0) || !svc_connect(&c.s, &s2) ||
	    !ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request"))
		goto out;
	fd = c.s.afd;
	if (keep && !ASSERT_GE(kept = dup(fd), 0, "a duplicate keeps the socket"))
		goto out;
	if (!ASSERT_OK(syscall(SYS_close_range, fd, fd, 0), "close_range"))
		goto out;
	ASSERT_EQ(kfix_count_ingress(f, c.s.port), !keep,
		  keep ? "no end: the socket lives on" : "the request ended at the close");
	c.s.afd = fcntl(s2.afd, F_DUPFD, fd);
	if (!ASSERT_EQ(c.s.afd, fd, "another socket at the same number"))
		goto out;
	via = s2;
	via.afd = fd;
	if (ASSERT_TRUE(svc_answer(&via, RESP(200, "OK")), "answer written there"))
		check_after_end(f, &c.s, &s2, keep);
out:
	if (kept >= 0)
		close(kept);
	svc_close(&s2);
	kcase_close(&c);
}

/*
 * The same fd number taken by a new connection (connect or accept) while
 * the followed one lives on under a duplicate: the request waiting on the
 * old one ends closed unanswered when the new one is followed, not dropped
 * without a record.
 */
static void subtest_stale_fd_reused(struct kfix *f)
{
	struct svc s2 = { .lfd = -1, .cfd = -1, .afd = -1 };
	struct kcase c;
	int fd, kept = -1;

	if (!kcase_open(f, &c, NULL, 0) || !ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request"))
		goto out;
	fd = c.s.afd;
	kept = dup(fd);
	if (!ASSERT_GE(kept, 0, "a duplicate keeps the socket") ||
	    !ASSERT_OK(syscall(SYS_close_range, fd, fd, 0), "close_range"))
		goto out;
	c.s.afd = -1;
	if (svc_connect(&c.s, &s2) &&
	    ASSERT_TRUE(s2.cfd == fd || s2.afd == fd, "a new connection at the same number"))
		check_after_end(f, &c.s, &s2, 1);
out:
	if (kept >= 0)
		close(kept);
	svc_close(&s2);
	kcase_close(&c);
}

/* A thread that reads a request and makes its call, then waits to exit. */
/* A thread that reads a request and makes its call, then waits to exit. */
struct slot_server {
	struct svc *s;
	int u; /* the kept-alive connection to the peer, shared */
	pthread_barrier_t served, go;
	__u32 tid;
	bool ok;
};

static void *slot_server_main(void *arg)
{
	struct slot_server *t = arg;

	t->tid = self_tid();
	t->ok = svc_request(t->s, REQ_FRONT) && call_on(t->u, REQ_CALL);
	pthread_barrier_wait(&t->served);
	pthread_barrier_wait(&t->go);
	return NULL;
}

/* A request read, its call made and its answer written by this thread. */
static bool serve_with_call(struct kcase *c, const char *what)
{
	return ASSERT_TRUE(svc_request(&c->s, REQ_FRONT) && call_on(c->u, REQ_CALL) &&
				   svc_answer(&c->s, RESP(502, "Bad Gateway")),
			   what);
}

/*
 * Thread contexts live in the slot their thread id names: the thread takes
 * it when it first serves, another thread answering finds the log there,
 * and the thread's exit gives it back. A thread whose slot another holds
 * keeps its context in the thread table, and its requests are followed
 * the same.
 */
static void subtest_thread_slots(struct kfix *f)
{
	struct svc s2 = { .lfd = -1, .cfd = -1, .afd = -1 };
	const __u32 tid = self_tid(), other = tid + kfix_thread_slots(f);
	const struct claimd_ingress *in;
	struct slot_server t = { .s = &s2 };
	struct kcase c;
	pthread_t th;
	int i;

	if (!kcase_answers(f, &c, RESP(503, "Busy"), 4) ||
	    !ASSERT_EQ(kfix_thread_slot(f, tid), 0, "the slot free at the start") ||
	    !ASSERT_TRUE(call_once(c.p.port, &c.u, REQ_CALL), "a connection to the peer") ||
	    !serve_with_call(&c, "served in the thread's slot"))
		goto out;
	ASSERT_EQ(kfix_thread_slot(f, tid), tid, "the slot taken by the thread that served");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_THREAD_CTXS), 0, "no context in the thread table");

	/* Another thread holds the slot: the context goes to the thread table. */
	if (!ASSERT_OK(kfix_thread_slot_set(f, tid, other), "the slot held by another") ||
	    !serve_with_call(&c, "served from the thread table"))
		goto out;
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_THREAD_CTXS), 1, "a context in the thread table");
	ASSERT_EQ(kfix_thread_slot(f, tid), other, "the other's slot left as it was");
	kfix_thread_slot_set(f, tid, 0);

	/* Read and called on another thread, answered on this one; then it exits. */
	t.u = c.u;
	if (!svc_connect(&c.s, &s2) || pthread_barrier_init(&t.served, NULL, 2) ||
	    pthread_barrier_init(&t.go, NULL, 2) ||
	    !ASSERT_OK(pthread_create(&th, NULL, slot_server_main, &t), "serving thread"))
		goto out;
	pthread_barrier_wait(&t.served);
	ASSERT_TRUE(t.ok, "the thread read the request and made its call");
	ASSERT_EQ(kfix_thread_slot(f, t.tid), t.tid, "in its own slot");
	ASSERT_TRUE(svc_answer(&s2, RESP(502, "Bad Gateway")), "answered by this thread");
	pthread_barrier_wait(&t.go);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&t.served);
	pthread_barrier_destroy(&t.go);
	/* Its exit's tracepoint may run after the join returned: wait for it. */
	for (i = 0; i < 200 && kfix_thread_slot(f, t.tid) == t.tid; i++)
		usleep(5000);
	ASSERT_EQ(kfix_thread_slot(f, t.tid), 0, "the slot given back at its exit");
	ASSERT_GE(kfix_stat(f, CLAIMD_ST_THREAD_SLOTS_FREED), 1, "counted");

	kfix_drain(f);
	ASSERT_EQ(kfix_count_ingress(f, c.s.port), 3, "three requests");
	for (i = 0; i < 3; i++) {
		const struct svc *by = i < 2 ? &c.s : &s2;

		in = kfix_ingress(f, c.s.port, i);
		if (!ASSERT_OK_PTR(in, "ingress record"))
			continue;
		/* kfix_check_ingress's fields, for the thread that read it. */
		ASSERT_EQ(in->tid, i < 2 ? tid : t.tid, "served by the thread that read it");
		ASSERT_TRUE(addr_is(&in->peer, by->client_port), "its client");
		ASSERT_EQ(in->target_hash, req_hash(REQ_FRONT), "target hash");
		ASSERT_EQ(in->status, 502, "status");
		if (ASSERT_EQ(in->n_egress, 1, "its call logged"))
			CHECK_LOGGED(&in->egress[0], c.p.port, REQ_CALL, 503, DONE);
		CHECK_VERDICT(in, CLAIM_UNCLAIMED, CLAIM_RULE_UNKNOWN_EDGE, 0);
	}
out:
	svc_close(&s2);
	kcase_close(&c);
}

/*
 * A connection's entry lives in the slot its process and fd point at: taken
 * at its first bytes, given back at its end. One whose slot another name
 * holds (another fd of the process, as many slots further) lives in the
 * conns table and is followed the same. claimd gives back the slots of a
 * process that exited, and only its.
 */
static void subtest_conn_slots(struct kfix *f)
{
	struct svc s2 = { .lfd = -1, .cfd = -1, .afd = -1 }, s3 = s2;
	struct claimd_conn_key gone = { .tgid = f->tgid + 1, .fd = 3 };
	__u64 held, freed;
	struct kcase c;
	int i, j;

	if (!kcase_answers(f, &c, RESP(503, "Busy"), 4) ||
	    !ASSERT_TRUE(call_once(c.p.port, &c.u, REQ_CALL), "a connection to the peer") ||
	    !serve_with_call(&c, "served, its connections in their slots"))
		goto out;
	ASSERT_EQ(kfix_conn_slot(f, c.s.afd),
		  claimd_conn_slot_word(&(struct claimd_conn_key){ f->tgid, c.s.afd }),
		  "the request's connection in its slot");
	ASSERT_EQ(kfix_conn_slot(f, c.u),
		  claimd_conn_slot_word(&(struct claimd_conn_key){ f->tgid, c.u }),
		  "the call's connection in its slot");
	ASSERT_FALSE(kfix_conn_in_table(f, c.s.afd), "and not in the table");

	/* Its slot held by another fd of the process before its first bytes: in the table. */
	if (!ASSERT_TRUE(svc_connect(&c.s, &s2), "a second client"))
		goto out;
	held = claimd_conn_slot_word(
		&(struct claimd_conn_key){ f->tgid, s2.afd + (int)kfix_conn_slots(f) });
	if (!ASSERT_OK(kfix_conn_slot_set(f, s2.afd, held), "its slot held") ||
	    !ASSERT_TRUE(svc_request(&s2, REQ_FRONT) && call_on(c.u, REQ_CALL) &&
				 svc_answer(&s2, RESP(502, "Bad Gateway")),
			 "served from the table"))
		goto out;
	i = s2.afd;
	ASSERT_EQ(kfix_conn_slot(f, i), held, "the other's slot left as it was");
	ASSERT_TRUE(kfix_conn_in_table(f, i), "its entry in the table");
	svc_close(&s2);
	ASSERT_FALSE(kfix_conn_in_table(f, i), "gone from the table at its end");
	kfix_conn_slot_set(f, i, 0);

	/* A third connection's end gives its slot back. */
	freed = kfix_stat(f, CLAIMD_ST_CONN_SLOTS_FREED);
	if (!ASSERT_TRUE(svc_connect(&c.s, &s3), "a third client") ||
	    !ASSERT_TRUE(svc_request(&s3, REQ_FRONT) && svc_answer(&s3, RESP(200, "OK")),
			 "served in its slot"))
		goto out;
	/* The client's end is this process's too: followed, in a slot. */
	i = s3.afd;
	j = s3.cfd;
	ASSERT_EQ(kfix_conn_slot(f, i),
		  claimd_conn_slot_word(&(struct claimd_conn_key){ f->tgid, i }), "in its slot");
	ASSERT_EQ(kfix_conn_slot(f, j),
		  claimd_conn_slot_word(&(struct claimd_conn_key){ f->tgid, j }),
		  "its client's end in its slot");
	svc_close(&s3);
	ASSERT_EQ(kfix_conn_slot(f, i), 0, "its slot given back at its end");
	ASSERT_EQ(kfix_conn_slot(f, j), 0, "its client's too");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_CONN_SLOTS_FREED), freed + 2, "both counted");

	/* A process gone: its slots given back by claimd, no other's. */
	if (!ASSERT_OK(kfix_conn_slot_set(f, i, claimd_conn_slot_word(&gone)), "a slot of another"))
		goto out;
	ASSERT_EQ(kfix_forget_slots(f, f->tgid + 2), 0, "a third process holds none");
	ASSERT_EQ(kfix_conn_slot(f, i), claimd_conn_slot_word(&gone), "still held");
	ASSERT_EQ(kfix_forget_slots(f, gone.tgid), 1, "the process gone held one");
	ASSERT_EQ(kfix_conn_slot(f, i), 0, "given back");
	ASSERT_EQ(kfix_conn_slot(f, c.s.afd),
		  claimd_conn_slot_word(&(struct claimd_conn_key){ f->tgid, c.s.afd }),
		  "this process's slots kept");

	kfix_drain(f);
	ASSERT_EQ(kfix_count_ingress(f, c.s.port), 3, "three requests recorded");
	for (i = 0; i < 2; i++) {
		const struct claimd_ingress *in = kfix_ingress(f, c.s.port, i);

		if (!ASSERT_OK_PTR(in, "ingress record"))
			continue;
		ASSERT_EQ(in->status, 502, "status");
		if (ASSERT_EQ(in->n_egress, 1, "its call logged"))
			CHECK_LOGGED(&in->egress[0], c.p.port, REQ_CALL, 503, DONE);
	}
out:
	svc_close(&s2);
	svc_close(&s3);
	kcase_close(&c);
}

/* A call's head in 10 entries (writev) and an answer's in 10 (sendmsg): framed exactly. */
static void subtest_vectored_head(struct kfix *f)
{
	struct kcase c;
	static const char *resp[10] = {
		"HTTP/1.1 502 Bad Gateway\r\n",
		"Server: t\r\n",
		"X-A: 1\r\n",
		"X-B: 2\r\n",
		"X-C: 3\r\n",
		"X-D: 4\r\n",
		"Content-Length: 0\r\n",
		"X-E: 5\r\n",
		"X-F: 6\r\n",
		"\r\n",
	};
	const struct claimd_ingress *in;
	struct iovec iov[10];
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 10 };
	char hdrs[10][16], buf[512];
	size_t total = 0;
	int i;

	if (!kcase_answers(f, &c, RESP(503, "Busy"), 1))
		goto out;
	c.u = sock_connect(c.p.port);
	if (!ASSERT_GE(c.u, 0, "connect"))
		goto out;
	sock_deadline(c.u);
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request") ||
	    !ASSERT_TRUE(writev_all(c.u, iov, head_iov(iov, 10, "GET /vec HTTP/1.1\r\n", hdrs)),
			 "a head in 10 entries") ||
	    !ASSERT_GT(sock_recv_until(c.u, buf, sizeof(buf), "\r\n\r\n", sizeof(buf)), 0, "503"))
		goto out;
	for (i = 0; i < 10; i++) {
		iov[i] = (struct iovec){ (void *)resp[i], strlen(resp[i]) };
		total += iov[i].iov_len;
	}
	if (!ASSERT_EQ(sendmsg(c.s.afd, &msg, 0), (ssize_t)total, "answer in 10 entries") ||
	    !ASSERT_GT(sock_recv_until(c.s.cfd, buf, sizeof(buf), "\r\n\r\n", sizeof(buf)), 0,
		       "client reads"))
		goto out;
	in = kfix_ingress(f, c.s.port, 0);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 502, 1)) {
		ASSERT_EQ(in->flags, 0, "ingress flags");
		CHECK_LOGGED(&in->egress[0], c.p.port, "GET /vec HTTP/1.1\r\n\r\n", 503, DONE);
		CHECK_VERDICT(in, CLAIM_UNCLAIMED, CLAIM_RULE_UNKNOWN_EDGE, 0);
	}
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_FRAMING_LOST), 0, "framing kept");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_PARSE_TRUNCATED), 0, "nothing truncated");
out:
	kcase_close(&c);
}

/*
 * An answer framed before the write of its request: a write's tracepoint
 * runs when the send returns, and a client that reads on a thread of its
 * own (Java's, Go's) may read the reply first. Here the send cannot return
 * until it does: the request's body is larger than the socket's buffers,
 * and the service answers on reading the head, then reads the body only
 * once the client's reader has read that answer. The answer waits for its
 * request; the next call on the connection gets its own answer, not the
 * one before (a FIFO off by one would give every later call its
 * predecessor's). first: the early call is the connection's first, none
 * of its writes framed before it (where its bytes begin is the socket's
 * first byte); else a call answered in order comes first. head: the
 * early call is a HEAD, whose answer's headers announce a body that never
 * comes (read before claimd knew which request it answers).
 */
#define EARLY_BODY	(4 << 20)
#define EARLY_HEAD	"GET /early HTTP/1.1\r\nHost: peer\r\nContent-Length: 4194304\r\n\r\n"
#define EARLY_HEAD_HEAD "HEAD /early HTTP/1.1\r\nHost: peer\r\nContent-Length: 4194304\r\n\r\n"
#define EARLY_ANSWER	RESP(413, "Content Too Large")
/* What a GET would have had: a body of 29 bytes. */
#define EARLY_ANSWER_HEAD "HTTP/1.1 413 Content Too Large\r\nContent-Length: 29\r\n\r\n"

struct early {
	int cfd, afd;	    /* the client's socket, the service's */
	sem_t first, early; /* the client's reader read the first answer, the early one */
	bool first_call;    /* the early call is the connection's first: no answer before it */
	const char *answer; /* the early answer */
	bool reader_ok, service_ok;
};

/* The client's reader: the answer heads, all but the last announced. */
static void *early_reader_main(void *arg)
{
	struct early *e = arg;
	char buf[512];
	int i;

	for (i = e->first_call; i < 3; i++) {
		if (sock_recv_until(e->cfd, buf, sizeof(buf), "\r\n\r\n", 1) <= 0)
			return NULL;
		if (i < 2)
			sem_post(i ? &e->early : &e->first);
	}
	e->reader_ok = true;
	return NULL;
}

/* Reads and drops n bytes; false on EOF or an error. */
static bool drain(int fd, size_t n)
{
	static char sink[65536];

	while (n > 0) {
		ssize_t r = read(fd, sink, n < sizeof(sink) ? n : sizeof(sink));

		if (r <= 0)
			return false;
		n -= (size_t)r;
	}
	return true;
}

/*
 * The service: a 200 (unless the early call is the first); the early
 * answer, its body read once the client read it; a 503.
 */
static void *early_service_main(void *arg)
{
	struct early *e = arg;

	/* A byte at a time: no body byte read with a head. */
	if ((!e->first_call &&
	     (!svc_read_heads(e->afd, 1, 1) || sock_send(e->afd, RESP(200, "OK")))) ||
	    !svc_read_heads(e->afd, 1, 1) || sock_send(e->afd, e->answer))
		return NULL;
	sem_wait(&e->early);
	if (!drain(e->afd, EARLY_BODY) || !svc_read_heads(e->afd, 1, 1) ||
	    sock_send(e->afd, RESP(503, "Service Unavailable")))
		return NULL;
	e->service_ok = true;
	return NULL;
}

static void subtest_answer_before_request(struct kfix *f, bool first, bool head)
{
	const char *early = head ? EARLY_HEAD_HEAD : EARLY_HEAD;
	size_t len = strlen(early) + EARLY_BODY;
	struct early e = { .first_call = first, .answer = head ? EARLY_ANSWER_HEAD : EARLY_ANSWER };
	const struct claimd_egress *eg;
	int n = first ? 0 : 1;
	pthread_t rt, st;
	bool rt_up = false, st_up = false;
	int small = 16384;
	struct kcase c;
	char *req = calloc(1, len);

	_Static_assert(EARLY_BODY == 4194304, "the head says the body's length");
	if (!kcase_open(f, &c, NULL, 0) || !ASSERT_OK_PTR(req, "request"))
		goto out;
	memcpy(req, early, strlen(early));
	setsockopt(c.s.cfd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	setsockopt(c.s.afd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	e.cfd = c.s.cfd;
	e.afd = c.s.afd;
	sem_init(&e.first, 0, 0);
	sem_init(&e.early, 0, 0);
	rt_up = ASSERT_OK(pthread_create(&rt, NULL, early_reader_main, &e), "reader");
	st_up = rt_up && ASSERT_OK(pthread_create(&st, NULL, early_service_main, &e), "service");
	if (!st_up)
		goto out;
	/* A call answered in order first: the connection's writes are known to here. */
	if (!first && (!ASSERT_OK(sock_send(c.s.cfd, REQ_CALL), "a first call") ||
		       !ASSERT_OK(sem_wait(&e.first), "its answer read")))
		goto out;
	/* Returns once the service read the body: after the reader read the answer. */
	ASSERT_OK(write_all_fd(c.s.cfd, req, len), "the early call, one write");
	ASSERT_OK(sock_send(c.s.cfd, REQ_OTHER), "the next call on the connection");
out:
	if (st_up)
		pthread_join(st, NULL);
	if (rt_up)
		pthread_join(rt, NULL);
	if (st_up && ASSERT_TRUE(e.reader_ok && e.service_ok, "every answer written and read")) {
		kfix_drain(f);
		if (!first)
			CHECK_EGRESS(kfix_root(f, c.s.port, 0), c.s.port, REQ_CALL, 200, DONE);
		eg = kfix_root(f, c.s.port, n);
		if (ASSERT_OK_PTR(eg, "the early call")) {
			ASSERT_EQ(eg->method, head ? HTTP_M_HEAD : HTTP_M_GET, "its method");
			ASSERT_EQ(eg->target_hash, req_hash(early), "its target");
			ASSERT_EQ(eg->status, 413, "its own answer");
			ASSERT_EQ(eg->flags, DONE, "ended");
		}
		CHECK_EGRESS(kfix_root(f, c.s.port, n + 1), c.s.port, REQ_OTHER, 503, DONE);
		ASSERT_EQ(kfix_stat(f, CLAIMD_ST_FRAMING_LOST), 0, "framing kept");
		ASSERT_EQ(kfix_stat(f, CLAIMD_ST_EARLY_ANSWERS), 1,
			  "one answer before its request");
		ASSERT_EQ(kfix_stat(f, CLAIMD_ST_UNMATCHED), 0, "every answer matched");
	}
	free(req);
	kcase_close(&c);
}

/*
 * An answer nothing asked for (a server's 408 on an idle kept-alive
 * connection), read while no send is in flight: unmatched, and the next
 * call still gets its own answer, not that one.
 */
static void subtest_unsolicited_answer(struct kfix *f)
{
	struct kcase c;

	if (!kcase_open(f, &c, NULL, 0))
		goto out;
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_CALL), "a call") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(200, "OK")), "its answer") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(408, "Request Timeout")), "an answer unasked") ||
	    !ASSERT_TRUE(svc_request(&c.s, REQ_OTHER), "the next call") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(503, "Service Unavailable")), "its answer"))
		goto out;
	kfix_drain(f);
	CHECK_EGRESS(kfix_root(f, c.s.port, 0), c.s.port, REQ_CALL, 200, DONE);
	CHECK_EGRESS(kfix_root(f, c.s.port, 1), c.s.port, REQ_OTHER, 503, DONE);
	/* Unmatched where it was written too: no request waited on the service's side. */
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_UNMATCHED), 2, "the unasked answer, both ends");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_EARLY_ANSWERS), 0, "held for no request");
out:
	kcase_close(&c);
}

/*
 * The same on a fresh connection, before any request: the service's first
 * bytes an answer (a proxy's 408 on a connection it found idle), read
 * with nothing sent. Unmatched; the first call gets its own answer.
 */
static void subtest_unsolicited_first_answer(struct kfix *f)
{
	struct kcase c;

	if (!kcase_open(f, &c, NULL, 0))
		goto out;
	if (!ASSERT_TRUE(svc_answer(&c.s, RESP(408, "Request Timeout")), "an answer unasked") ||
	    !ASSERT_TRUE(svc_request(&c.s, REQ_CALL), "the first call") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(503, "Service Unavailable")), "its answer"))
		goto out;
	kfix_drain(f);
	CHECK_EGRESS(kfix_root(f, c.s.port, 0), c.s.port, REQ_CALL, 503, DONE);
	ASSERT_TRUE(kfix_root(f, c.s.port, 1) == NULL, "one call");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_UNMATCHED), 2, "the unasked answer, both ends");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_EARLY_ANSWERS), 0, "held for no request");
out:
	kcase_close(&c);
}

void test_kernel(void)
{
	struct timespec t0, t1;
	struct kfix f;

	if (!test__need_root())
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!kfix_open(&f))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("observer loaded and attached in %.2f s\n",
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (test__start_subtest("request_response"))
		subtest_request_response(&f);
	if (test__start_subtest("split_head"))
		subtest_split_head(&f);
	if (test__start_subtest("answer_before_request"))
		subtest_answer_before_request(&f, false, false);
	if (test__start_subtest("answer_before_first_request"))
		subtest_answer_before_request(&f, true, false);
	if (test__start_subtest("answer_before_head_request"))
		subtest_answer_before_request(&f, false, true);
	if (test__start_subtest("unsolicited_answer"))
		subtest_unsolicited_answer(&f);
	if (test__start_subtest("unsolicited_first_answer"))
		subtest_unsolicited_first_answer(&f);
	if (test__start_subtest("pipelining"))
		subtest_pipelining(&f);
	subtest_transport(&f, "transport_refused", FAIL_REFUSED);
	subtest_transport(&f, "transport_refused_nonblocking", FAIL_REFUSED_NONBLOCK);
	subtest_transport(&f, "transport_reset", FAIL_RESET);
	subtest_transport(&f, "transport_closed", FAIL_CLOSED);
	subtest_transport(&f, "transport_gave_up", FAIL_GAVE_UP);
	if (test__start_subtest("retry"))
		subtest_retry(&f);
	if (test__start_subtest("counts_without_records"))
		subtest_counts_without_records(&f);
	if (test__start_subtest("service_slots"))
		subtest_service_slots(&f);
	if (test__start_subtest("dirty_lists"))
		subtest_dirty_lists(&f);
	if (test__start_subtest("root_counts"))
		subtest_root_counts(&f);
	if (test__start_subtest("retry_after_refused"))
		subtest_retry_after_refused(&f);
	if (test__start_subtest("framing_lost_healed"))
		subtest_framing_lost(&f, HEAD_IOV_70);
	if (test__start_subtest("mmsg_framing_lost"))
		subtest_framing_lost(&f, HEAD_MMSG);
	if (test__start_subtest("trunc_read"))
		subtest_trunc_read(&f);
	if (test__start_subtest("vectored_head"))
		subtest_vectored_head(&f);
	if (test__start_subtest("sock_marks"))
		subtest_sock_marks(&f);
	if (test__start_subtest("reset_before_read"))
		subtest_reset_before_read(&f);
	if (test__start_subtest("outside_call"))
		subtest_outside_call(&f);
	if (test__start_subtest("upgrade"))
		subtest_upgrade(&f);
	if (test__start_subtest("dup_fds"))
		subtest_dup_fds(&f);
	if (test__start_subtest("forked_child"))
		subtest_forked_child(&f);
	if (test__start_subtest("close_range"))
		subtest_fd_replaced(&f, 0);
	if (test__start_subtest("stale_fd"))
		subtest_fd_replaced(&f, 1);
	if (test__start_subtest("stale_fd_reused"))
		subtest_stale_fd_reused(&f);
	if (test__start_subtest("thread_slots"))
		subtest_thread_slots(&f);
	if (test__start_subtest("conn_slots"))
		subtest_conn_slots(&f);
	kernel_verdict_subtests(&f);
	kfix_close(&f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("kernel: %.2f s in all, detach included\n",
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}
