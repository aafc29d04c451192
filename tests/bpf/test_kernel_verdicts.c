// SPDX-License-Identifier: GPL-2.0
/*
 * Subtests of test_kernel (test_kernel.c loads the observer): each rule of
 * verdict_of as the kernel applies it when a failed ingress is answered,
 * with edge classes written into edge_class by the test the way claimd
 * writes them, and the running verdict read from the thread's slot of the
 * mmapped verdict map; the egress log's bound; and a thread that opens a
 * second ingress before answering the first.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel_fixture.h"
#include "sockets.h"
#include "test_progs.h"

#define REQ_FRONT	   "GET /front HTTP/1.1\r\nHost: kernel\r\n\r\n"
#define REQ_CALL	   "GET /call HTTP/1.1\r\nHost: peer\r\n\r\n"
#define RESP(code, reason) "HTTP/1.1 " #code " " reason "\r\nContent-Length: 0\r\n\r\n"
#define RESP_503_UNCLAIMED                                          \
	"HTTP/1.1 503 Busy\r\nx-error-claim: unclaimed\r\nContent-" \
	"Length: 0\r\n\r\n"

/*
 * One ingress: the client's request, 'calls' calls on the kept-alive
 * connection *u to 'port' (opened on first use), the service's answer.
 */
static bool serve(struct svc *s, int port, int *u, int calls, const char *answer)
{
	int i;

	if (!ASSERT_TRUE(svc_request(s, REQ_FRONT), "request"))
		return false;
	for (i = 0; i < calls; i++) {
		bool ok = *u < 0 ? call_once(port, u, REQ_CALL) : call_on(*u, REQ_CALL);

		if (!ASSERT_TRUE(ok, "call"))
			return false;
	}
	return ASSERT_TRUE(svc_answer(s, answer), "answer");
}

/*
 * The service calls a peer that answers 'resp' once, with the edge's class
 * set to 'cls' (CLAIM_CLASS_UNKNOWN: none written), and answers 502.
 */
static void one_call_rule(struct kfix *f, const char *name, const char *resp, int cls, int e_status,
			  int e_claim, int verdict, int rule, int cause)
{
	struct kcase c;
	const struct claimd_ingress *in;

	if (!test__start_subtest(name))
		return;
	if (!kcase_answers(f, &c, resp, 1))
		goto out;
	if (cls != CLAIM_CLASS_UNKNOWN &&
	    !ASSERT_OK(kfix_set_class(f, c.s.port, c.p.port, cls), "edge_class"))
		goto out;
	if (!serve(&c.s, c.p.port, &c.u, 1, RESP(502, "Bad Gateway")))
		goto out;
	in = kfix_ingress(f, c.s.port, 0);
	if (!CHECK_INGRESS(in, &c.s, REQ_FRONT, 502, 1))
		goto out;
	CHECK_LOGGED(&in->egress[0], c.p.port, REQ_CALL, e_status, CLAIMD_EG_DONE);
	ASSERT_EQ(in->egress[0].claim, e_claim, "claim header");
	ASSERT_EQ(in->flags, 0, "ingress flags");
	CHECK_VERDICT(in, verdict, rule, cause);
out:
	kcase_close(&c);
}

/* Rule 1, and the running verdict in the thread's slot from start to answer. */
static void subtest_no_failed_call(struct kfix *f)
{
	struct kcase c;
	const struct claimd_ingress *in;
	struct claim_slot slot;

	if (!kcase_answers(f, &c, RESP(404, "Not Found"), 1))
		goto out;
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request") ||
	    !ASSERT_TRUE(call_once(c.p.port, &c.u, REQ_CALL), "404: not a failure"))
		goto out;
	if (ASSERT_TRUE(kfix_slot(f, &slot), "slot"))
		ASSERT_TRUE(slot.tid == self_tid() && slot.active == 1 &&
				    slot.verdict == CLAIM_CLAIMED &&
				    slot.rule == CLAIM_RULE_NO_FAILED_EGRESS &&
				    slot.cause_port == 0,
			    "running verdict: claimed");
	if (!ASSERT_TRUE(svc_answer(&c.s, RESP(500, "Internal")), "answer"))
		goto out;
	in = kfix_ingress(f, c.s.port, 0);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 500, 1)) {
		CHECK_LOGGED(&in->egress[0], c.p.port, REQ_CALL, 404, CLAIMD_EG_DONE);
		CHECK_VERDICT(in, CLAIM_CLAIMED, CLAIM_RULE_NO_FAILED_EGRESS, CLAIMD_NO_SLOT);
	}
	if (ASSERT_TRUE(kfix_slot(f, &slot), "slot"))
		ASSERT_TRUE(slot.active == 0 && slot.verdict == CLAIM_NONE, "slot idle");
out:
	kcase_close(&c);
}

/* Rule 2, fail-close edge; the running verdict names the cause before the answer. */
static void subtest_fail_close(struct kfix *f)
{
	struct kcase c;
	static const __u8 lo[16] = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 };
	const struct claimd_ingress *in;
	struct claim_slot slot;

	if (!kcase_answers(f, &c, RESP(503, "Busy"), 1) ||
	    !ASSERT_OK(kfix_set_class(f, c.s.port, c.p.port, CLAIM_CLASS_FAIL_CLOSE), "edge_class"))
		goto out;
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request") ||
	    !ASSERT_TRUE(call_once(c.p.port, &c.u, REQ_CALL), "503"))
		goto out;
	if (ASSERT_TRUE(kfix_slot(f, &slot), "slot"))
		ASSERT_TRUE(slot.active == 1 && slot.verdict == CLAIM_UNCLAIMED &&
				    slot.rule == CLAIM_RULE_FAIL_CLOSE &&
				    slot.cause_port == c.p.port && !memcmp(slot.cause_addr, lo, 16),
			    "running verdict: unclaimed, caused by the peer");
	if (!ASSERT_TRUE(svc_answer(&c.s, RESP(502, "Bad Gateway")), "answer"))
		goto out;
	in = kfix_ingress(f, c.s.port, 0);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 502, 1)) {
		CHECK_LOGGED(&in->egress[0], c.p.port, REQ_CALL, 503, CLAIMD_EG_DONE);
		CHECK_VERDICT(in, CLAIM_UNCLAIMED, CLAIM_RULE_FAIL_CLOSE, 0);
	}
out:
	kcase_close(&c);
}

/* Rule 3 only when every failed call is on a fail-open edge; an unknown one unclaims. */
static void subtest_fail_open(struct kfix *f)
{
	struct kcase c;
	struct peer b = { .lfd = -1 };
	const struct claimd_ingress *in;
	int ub = -1;

	if (!kcase_answers(f, &c, RESP(503, "Busy"), 2) ||
	    !peer_start_answers(&b, RESP(503, "Busy"), 1) ||
	    !ASSERT_OK(kfix_set_class(f, c.s.port, c.p.port, CLAIM_CLASS_FAIL_OPEN), "edge_class"))
		goto out;
	if (!serve(&c.s, c.p.port, &c.u, 1, RESP(500, "Internal")))
		goto out;
	/* Fail-open a, then unknown b. */
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 2") ||
	    !ASSERT_TRUE(call_on(c.u, REQ_CALL), "a") ||
	    !ASSERT_TRUE(call_once(b.port, &ub, REQ_CALL), "b") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(500, "Internal")), "answer 2"))
		goto out;
	in = kfix_ingress(f, c.s.port, 0);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 500, 1)) {
		CHECK_LOGGED(&in->egress[0], c.p.port, REQ_CALL, 503, CLAIMD_EG_DONE);
		CHECK_VERDICT(in, CLAIM_CLAIMED, CLAIM_RULE_FAIL_OPEN, 0);
	}
	in = kfix_ingress(f, c.s.port, 1);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 500, 2)) {
		CHECK_LOGGED(&in->egress[1], b.port, REQ_CALL, 503, CLAIMD_EG_DONE);
		CHECK_VERDICT(in, CLAIM_UNCLAIMED, CLAIM_RULE_UNKNOWN_EDGE, 1);
	}
out:
	if (ub >= 0)
		close(ub);
	peer_stop(&b);
	kcase_close(&c);
}

/* More calls than the log holds: the verdict cannot rest on it. */
static void subtest_egress_overflow(struct kfix *f)
{
	struct kcase c;
	const struct claimd_ingress *in;
	int i;

	if (!kcase_answers(f, &c, RESP(200, "OK"), CLAIMD_EGRESS_MAX + 1) ||
	    !serve(&c.s, c.p.port, &c.u, CLAIMD_EGRESS_MAX + 1, RESP(500, "Internal")))
		goto out;
	in = kfix_ingress(f, c.s.port, 0);
	if (CHECK_INGRESS(in, &c.s, REQ_FRONT, 500, CLAIMD_EGRESS_MAX)) {
		for (i = 0; i < CLAIMD_EGRESS_MAX; i++)
			CHECK_LOGGED(&in->egress[i], c.p.port, REQ_CALL, 200, CLAIMD_EG_DONE);
		ASSERT_EQ(in->egress_dropped, 1, "one call beyond the log");
		CHECK_VERDICT(in, CLAIM_UNKNOWN, CLAIM_RULE_UNTIED_CALL, CLAIMD_NO_SLOT);
	}
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_EGRESS_OVERFLOW), 1, "overflow counted");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_EGRESS), CLAIMD_EGRESS_MAX + 2, "calls, client's too");
out:
	kcase_close(&c);
}

/*
 * A thread reads a second request before answering the first: an event
 * loop. The first keeps its log and is unknown (multiplexed); the second,
 * and every later one, is held by its connection and keyed (bpf/keyed.c):
 * with no call made by the process while it was open, its failure is its
 * own. The process stays marked (kfix_begin clears the mark for the
 * subtests after this one).
 */
static void subtest_multiplexed(struct kfix *f)
{
	struct kcase c;
	struct svc s2 = { .lfd = -1, .cfd = -1, .afd = -1 };
	struct svc s3 = { .lfd = -1, .cfd = -1, .afd = -1 };
	const struct claimd_ingress *first, *second, *later;

	if (!kcase_open(f, &c, NULL, 0) || !svc_connect(&c.s, &s2) || !svc_connect(&c.s, &s3))
		goto out;
	if (!ASSERT_TRUE(svc_request(&c.s, REQ_FRONT), "request 1") ||
	    !ASSERT_TRUE(svc_request(&s2, REQ_FRONT), "request 2, 1 unanswered") ||
	    !ASSERT_TRUE(svc_answer(&s2, RESP(500, "Internal")), "answer 2") ||
	    !ASSERT_TRUE(svc_answer(&c.s, RESP(500, "Internal")), "answer 1"))
		goto out;
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_MUX), 1, "mux counted");
	ASSERT_EQ(kfix_stat(f, CLAIMD_ST_KEYED), 1, "the second keyed");
	/* Records come out in answer order: the second request's first. */
	second = kfix_ingress(f, c.s.port, 0);
	if (CHECK_INGRESS(second, &s2, REQ_FRONT, 500, 0)) {
		ASSERT_EQ(second->flags, CLAIMD_IN_KEYED, "second: keyed");
		CHECK_VERDICT(second, CLAIM_CLAIMED, CLAIM_RULE_NO_FAILED_EGRESS, CLAIMD_NO_SLOT);
	}
	/*
	 * The first kept its log, juggled: unknown. Its log holds the one call
	 * its thread made meanwhile: the second request, which this test's
	 * thread, its own client, wrote.
	 */
	first = kfix_ingress(f, c.s.port, 1);
	if (CHECK_INGRESS(first, &c.s, REQ_FRONT, 500, 1)) {
		ASSERT_EQ(first->flags, CLAIMD_IN_MUX, "first: multiplexed");
		CHECK_VERDICT(first, CLAIM_UNKNOWN, CLAIM_RULE_MULTIPLEXED, CLAIMD_NO_SLOT);
	}
	/* Later requests of the process are keyed too. */
	if (!ASSERT_TRUE(svc_request(&s3, REQ_FRONT), "request 3") ||
	    !ASSERT_TRUE(svc_answer(&s3, RESP(500, "Internal")), "answer 3"))
		goto out;
	later = kfix_ingress(f, c.s.port, 2);
	if (CHECK_INGRESS(later, &s3, REQ_FRONT, 500, 0)) {
		ASSERT_EQ(later->flags, CLAIMD_IN_KEYED, "later: keyed");
		CHECK_VERDICT(later, CLAIM_CLAIMED, CLAIM_RULE_NO_FAILED_EGRESS, CLAIMD_NO_SLOT);
	}
out:
	svc_close(&s3);
	svc_close(&s2);
	kcase_close(&c);
}

void kernel_verdict_subtests(struct kfix *f)
{
	if (test__start_subtest("rule_no_failed_call"))
		subtest_no_failed_call(f);
	one_call_rule(f, "rule_header_unclaimed", RESP_503_UNCLAIMED, CLAIM_CLASS_FAIL_OPEN, 503,
		      HTTP_CLAIM_UNCLAIMED, CLAIM_UNCLAIMED, CLAIM_RULE_HEADER, 0);
	if (test__start_subtest("rule_fail_close"))
		subtest_fail_close(f);
	if (test__start_subtest("rule_fail_open"))
		subtest_fail_open(f);
	one_call_rule(f, "rule_unknown_edge", RESP(503, "Busy"), CLAIM_CLASS_UNKNOWN, 503,
		      HTTP_CLAIM_NONE, CLAIM_UNCLAIMED, CLAIM_RULE_UNKNOWN_EDGE, 0);
	if (test__start_subtest("rule_untied_call_log_full"))
		subtest_egress_overflow(f);
	if (test__start_subtest("rule_multiplexed"))
		subtest_multiplexed(f);
}
