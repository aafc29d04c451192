// SPDX-License-Identifier: GPL-2.0
/*
 * The rules written once and compiled by every side: how a call and a
 * request ended under a configured fail status (headers/outcome.h), which
 * failed call a retry supersedes (the retry predicate and the newest-first
 * walk), the names of verdicts, rules and classes built from their tables
 * (verdict_names.h, libclaim), the one endpoint parser (addr.h), and the
 * trace's "failed" under --fail-status 400 (a 404 failed, as the kernel
 * judges it: the bug this file guards).
 */
#include <errno.h>
#include <string.h>

#include "addr.h"
#include "claim.h"
#include "counts.h"
#include "model/names.h"
#include "outcome.h"
#include "expose/trace_fmt.h"
#include "verdict_names.h"
#include "test_progs.h"

static void outcome_tests(void)
{
	static const struct {
		__u32 status, flags, min, want;
		const char *what;
	} calls[] = {
		{ 200, CLAIMD_EG_DONE, 500, CLAIMD_OUTCOME_OK, "200" },
		{ 404, CLAIMD_EG_DONE, 500, CLAIMD_OUTCOME_OK, "404 at 500" },
		{ 404, CLAIMD_EG_DONE, 400, CLAIMD_OUTCOME_FAILED, "404 at 400" },
		{ 399, CLAIMD_EG_DONE, 400, CLAIMD_OUTCOME_OK, "399 at 400" },
		{ 503, CLAIMD_EG_DONE, 500, CLAIMD_OUTCOME_FAILED, "503" },
		{ 0, CLAIMD_EG_DONE, 500, CLAIMD_OUTCOME_FAILED, "done, no status" },
		{ 0, CLAIMD_EG_DONE | CLAIMD_EG_TRANSPORT, 500, CLAIMD_OUTCOME_FAILED, "reset" },
		{ 0, CLAIMD_EG_TRANSPORT | CLAIMD_EG_CONNECT, 500, CLAIMD_OUTCOME_FAILED,
		  "refused" },
		{ 0, 0, 500, CLAIMD_OUTCOME_OK,
		  "pending, not awaited (a goroutine's, a context's)" },
		{ 0, CLAIMD_EG_AWAITED, 500, CLAIMD_OUTCOME_FAILED, "awaited, given up" },
		{ 200, CLAIMD_EG_AWAITED | CLAIMD_EG_DONE, 500, CLAIMD_OUTCOME_OK,
		  "awaited, answered" },
		{ 0, CLAIMD_EG_AWAITED | CLAIMD_EG_DONE | CLAIMD_EG_LOST, 500, CLAIMD_OUTCOME_LOST,
		  "awaited, its answer lost" },
		{ 0, CLAIMD_EG_DONE | CLAIMD_EG_LOST, 500, CLAIMD_OUTCOME_LOST, "answer lost" },
		{ 503, CLAIMD_EG_DONE | CLAIMD_EG_LOST, 500, CLAIMD_OUTCOME_LOST, "lost wins" },
	};
	static const struct {
		__u32 status, flags, min, want;
		const char *what;
	} requests[] = {
		{ 200, 0, 500, CLAIMD_OUTCOME_OK, "200" },
		{ 404, 0, 500, CLAIMD_OUTCOME_OK, "404 at 500" },
		{ 404, 0, 400, CLAIMD_OUTCOME_FAILED, "404 at 400" },
		{ 500, 0, 500, CLAIMD_OUTCOME_FAILED, "500" },
		{ 0, CLAIMD_IN_CLOSED, 500, CLAIMD_OUTCOME_FAILED, "no response" },
		{ 0, CLAIMD_IN_LOST, 500, CLAIMD_OUTCOME_LOST, "answer lost" },
		{ 200, CLAIMD_IN_LOST, 500, CLAIMD_OUTCOME_LOST, "lost wins" },
	};
	size_t i;

	if (!test__start_subtest("outcomes"))
		return;
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		ASSERT_EQ(outcome_of_call(calls[i].status, calls[i].flags, calls[i].min),
			  calls[i].want, calls[i].what);
	ASSERT_TRUE(outcome_call_left_running(0), "no end, not awaited: left running");
	ASSERT_FALSE(outcome_call_left_running(CLAIMD_EG_AWAITED), "awaited: not left running");
	ASSERT_FALSE(outcome_call_left_running(CLAIMD_EG_DONE), "ended: not running");
	ASSERT_FALSE(outcome_call_given_up(CLAIMD_EG_AWAITED | CLAIMD_EG_DONE),
		     "ended: not given up");
	for (i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
		ASSERT_EQ(
			outcome_of_request(requests[i].status, requests[i].flags, requests[i].min),
			requests[i].want, requests[i].what);
	ASSERT_FALSE(outcome_judged(CLAIMD_OUTCOME_OK), "ok: no verdict");
	ASSERT_TRUE(outcome_judged(CLAIMD_OUTCOME_FAILED), "failed: a verdict");
	ASSERT_TRUE(outcome_judged(CLAIMD_OUTCOME_LOST), "lost: a verdict (unknown)");
}

static void retry_tests(void)
{
	/* Oldest first: a failure, its retry that failed too, its retry that
	 * worked, then another call's failure and a call lost. */
	static const struct {
		__u16 status;
		__u8 flags;
		int counts;
	} log[] = {
		{ 503, CLAIMD_EG_DONE, 0 },		      /* superseded by [1] */
		{ 503, CLAIMD_EG_DONE | CLAIMD_EG_RETRY, 0 }, /* superseded by [2] */
		{ 200, CLAIMD_EG_DONE | CLAIMD_EG_RETRY, 0 }, /* the retry worked */
		{ 404, CLAIMD_EG_DONE, 1 },		      /* failed at 400, stands */
		{ 0, CLAIMD_EG_DONE | CLAIMD_EG_LOST, 0 },    /* neither */
	};
	struct retry_walk w = { 0 };
	int i;

	if (!test__start_subtest("retry"))
		return;
	ASSERT_TRUE(outcome_is_retry(CLAIMD_OUTCOME_FAILED, CLAIMD_EG_DONE, HTTP_M_GET, 7,
				     HTTP_M_GET, 7),
		    "same call after a failure");
	ASSERT_FALSE(
		outcome_is_retry(CLAIMD_OUTCOME_OK, CLAIMD_EG_DONE, HTTP_M_GET, 7, HTTP_M_GET, 7),
		"after a success");
	ASSERT_FALSE(
		outcome_is_retry(CLAIMD_OUTCOME_LOST, CLAIMD_EG_DONE, HTTP_M_GET, 7, HTTP_M_GET, 7),
		"after a lost answer");
	ASSERT_FALSE(outcome_is_retry(CLAIMD_OUTCOME_FAILED, CLAIMD_EG_DONE, HTTP_M_GET, 7,
				      HTTP_M_POST, 7),
		     "another method");
	ASSERT_FALSE(outcome_is_retry(CLAIMD_OUTCOME_FAILED, CLAIMD_EG_DONE, HTTP_M_GET, 7,
				      HTTP_M_GET, 8),
		     "another target");
	ASSERT_TRUE(outcome_is_retry(CLAIMD_OUTCOME_FAILED, CLAIMD_EG_DONE | CLAIMD_EG_CONNECT,
				     HTTP_M_GET, 7, HTTP_M_POST, 8),
		    "any call after a refused connect");
	ASSERT_FALSE(outcome_is_retry(CLAIMD_OUTCOME_OK, CLAIMD_EG_DONE | CLAIMD_EG_CONNECT,
				      HTTP_M_GET, 7, HTTP_M_GET, 7),
		     "a connect that worked");
	for (i = sizeof(log) / sizeof(log[0]) - 1; i >= 0; i--)
		ASSERT_EQ(retry_walk__failed(&w, log[i].status, log[i].flags, 400), log[i].counts,
			  "walk, newest first");
}

/* What a request adds to its service and its edges (headers/counts.h). */
static void counts_tests(void)
{
	struct claimd_service_counts s = { 0 };
	struct claimd_edge_counts e = { 0 };

	if (!test__start_subtest("counts"))
		return;
	counts_add_request(&s, 200, 0, CLAIM_NONE, CLAIM_RULE_NONE, 500);
	counts_add_request(&s, 502, 0, CLAIM_UNCLAIMED, CLAIM_RULE_FAIL_CLOSE, 500);
	counts_add_request(&s, 500, 0, CLAIM_CLAIMED, CLAIM_RULE_NO_FAILED_EGRESS, 500);
	/* A confident-looking verdict on bytes claimd could not frame is no verdict. */
	counts_add_request(&s, 502, CLAIMD_IN_BLIND, CLAIM_UNCLAIMED, CLAIM_RULE_FAIL_CLOSE, 500);
	counts_add_request(&s, 0, CLAIMD_IN_NOCTX | CLAIMD_IN_MUX, CLAIM_UNKNOWN, CLAIM_RULE_NO_LOG,
			   500);
	counts_add_request(&s, 404, 0, CLAIM_NONE, CLAIM_RULE_NONE, 500);
	ASSERT_EQ(s.requests, 6, "requests");
	ASSERT_EQ(s.failures, 4, "failures: 502, 500, 502 blind, no answer");
	ASSERT_EQ(s.claimed, 1, "claimed");
	ASSERT_EQ(s.unclaimed, 1, "unclaimed");
	ASSERT_EQ(s.unknown, 2, "unknown");
	ASSERT_EQ(s.unknown_by[CLAIM_RULE_FRAMING_LOST], 1, "unknown: framing lost");
	ASSERT_EQ(s.unknown_by[CLAIM_RULE_NO_LOG], 1, "unknown: no log");
	ASSERT_EQ(s.multiplexed, 1, "multiplexed");
	ASSERT_TRUE(counts_teaches_edges(CLAIM_RULE_FAIL_CLOSE, 0, 0), "a whole log teaches");
	ASSERT_FALSE(counts_teaches_edges(CLAIM_RULE_NONE, CLAIMD_IN_MUX, 0), "multiplexed");
	ASSERT_FALSE(counts_teaches_edges(CLAIM_RULE_NONE, 0, 2), "calls dropped");
	ASSERT_FALSE(counts_teaches_edges(CLAIM_RULE_UNTIED_CALL, 0, 0), "untied");
	ASSERT_FALSE(counts_teaches_edges(CLAIM_RULE_UNFINISHED_CALL, 0, 0), "unfinished");
	ASSERT_TRUE(counts_teaches_edges(CLAIM_RULE_OPAQUE_CALL, CLAIMD_IN_OPAQUE, 0),
		    "a dependency claimd cannot read leaves the log whole");
	/*
	 * Request 1: two failed calls to the callee; request 2: one call, fine;
	 * request 3: a transport failure; request 4 teaches nothing (a call
	 * outside requests, or a log that may miss calls): it failed with its
	 * failed call, and only the edge's counts learn it.
	 */
	counts_add_call(&e, 1, 1, 1, 1, CLAIMD_EG_DONE);
	counts_add_call(&e, 1, 1, 1, 1, CLAIMD_EG_DONE | CLAIMD_EG_RETRY);
	counts_add_call(&e, 2, 0, 0, 1, CLAIMD_EG_DONE);
	counts_add_call(&e, 3, 1, 0, 1, CLAIMD_EG_DONE | CLAIMD_EG_TRANSPORT);
	counts_add_call(&e, 4, 1, 1, 0, CLAIMD_EG_DONE);
	ASSERT_EQ(e.calls, 5, "calls");
	ASSERT_EQ(e.retries, 1, "retries");
	ASSERT_EQ(e.callee_failures, 3, "callee failures: once per request, taught or not");
	ASSERT_EQ(e.tied_failures, 2, "tied failures: of the requests that teach");
	ASSERT_EQ(e.both_failed, 1, "both failed: of the requests that teach");
}

static void name_tests(void)
{
	unsigned int r;

	if (!test__start_subtest("names"))
		return;
	ASSERT_STREQ(verdict__name(CLAIM_NONE), "none", "none");
	ASSERT_STREQ(verdict__name(CLAIM_UNCLAIMED), "unclaimed", "unclaimed");
	ASSERT_STREQ(verdict__name(99), "?", "out of range");
	ASSERT_STREQ(claim_verdict_name(CLAIM_CLAIMED), verdict__name(CLAIM_CLAIMED),
		     "libclaim reads the same table");
	ASSERT_STREQ(claim_verdict_name(CLAIM_NONE), "unknown", "libclaim: none is unknown");
	ASSERT_EQ(claim_parse_header(" Unclaimed ", 11), CLAIM_UNCLAIMED, "header parsed");
	ASSERT_STREQ(verdict__rule_name(CLAIM_RULE_FAIL_OPEN), "fail-open-edges-only", "rule 3");
	ASSERT_STREQ(verdict__rule_name(CLAIM_RULE__COUNT), "?", "rule out of range");
	for (r = 0; r < CLAIM_RULE__COUNT; r++)
		ASSERT_NEQ(strcmp(verdict__rule_name(r), "?"), 0, "every rule named");
	ASSERT_EQ(verdict__rule_verdict(CLAIM_RULE_UNKNOWN_EDGE), CLAIM_UNCLAIMED, "rule 4");
	ASSERT_TRUE(verdict__rule_is_unknown(CLAIM_RULE_MULTIPLEXED), "multiplexed: unknown");
	ASSERT_TRUE(verdict__rule_is_unknown(CLAIM_RULE_UNTIED_CALL), "untied: unknown");
	ASSERT_TRUE(verdict__rule_is_unknown(CLAIM_RULE_UNFINISHED_CALL), "unfinished: unknown");
	ASSERT_STREQ(verdict__rule_name(CLAIM_RULE_UNFINISHED_CALL), "unfinished-call",
		     "unfinished: named");
	ASSERT_TRUE(verdict__rule_is_unknown(CLAIM_RULE_OPAQUE_CALL), "opaque: unknown");
	ASSERT_FALSE(verdict__rule_is_unknown(CLAIM_RULE_HEADER), "header: unclaimed");
	ASSERT_FALSE(verdict__rule_is_unknown(CLAIM_RULE_NONE), "none: no reason");
	ASSERT_STREQ(verdict__class_name(CLAIM_CLASS_FAIL_CLOSE), "fail-close", "class name");
	ASSERT_STREQ(verdict__class_name(7), "unknown", "class out of range");
	ASSERT_EQ(verdict__class_of("fail-open"), CLAIM_CLASS_FAIL_OPEN, "class of a name");
	ASSERT_EQ(verdict__class_of("fail"), CLAIM_CLASS_UNKNOWN, "class of junk");
	ASSERT_EQ(verdict__class_of(NULL), CLAIM_CLASS_UNKNOWN, "class of nothing");
}

static void addr_tests(void)
{
	struct claimd_addr a;
	char host[64], buf[ADDR_STR_MAX];
	__u16 port;

	if (!test__start_subtest("addr"))
		return;
	ASSERT_OK(addr__split("localhost:9464", host, sizeof(host), &port), "host name");
	ASSERT_STREQ(host, "localhost", "host");
	ASSERT_EQ(port, 9464, "port");
	ASSERT_OK(addr__split("[::]:0", host, sizeof(host), &port), "any, port 0");
	ASSERT_STREQ(host, "::", "brackets removed");
	ASSERT_OK(addr__split(":80", host, sizeof(host), &port), "empty host split");
	ASSERT_STREQ(host, "", "empty host");
	ASSERT_EQ(addr__split("::1:80", host, sizeof(host), &port), -1, "v6 without brackets");
	ASSERT_EQ(errno, EINVAL, "EINVAL");
	ASSERT_EQ(addr__split("averyveryverylonghostname:80", host, 8, &port), -1, "too long");
	ASSERT_EQ(errno, ENAMETOOLONG, "ENAMETOOLONG");
	ASSERT_EQ(addr__parse(":80", &a), -1, "endpoint needs a host");
	ASSERT_EQ(addr__parse("10.0.0.1:0", &a), -1, "endpoint needs a port");
	ASSERT_OK(addr__parse("[2001:db8::1]:443", &a), "v6 endpoint");
	addr__format(&a, buf, sizeof(buf));
	ASSERT_STREQ(buf, "[2001:db8::1]:443", "round trip");
}

/* The bug: under --fail-status 400 the kernel judged a 404 and the trace said
 * "failed": false (a hard-coded 500). */
static void trace_tests(void)
{
	struct claimd_ingress r = { 0 };
	struct json_object *o, *v, *eg;
	struct names *nm;

	if (!test__start_subtest("trace_fail_status"))
		return;
	nm = names__new();
	if (!ASSERT_OK_PTR(nm, "names__new"))
		return;
	r.tgid = r.tid = 0x7ffffff0u;
	addr__parse("127.0.0.1:9000", &r.local);
	addr__parse("127.0.0.1:40000", &r.peer);
	r.status = 404;
	r.n_egress = 1;
	r.verdict = CLAIM_UNCLAIMED;
	r.rule = CLAIM_RULE_UNKNOWN_EDGE;
	r.cause = 0;
	addr__parse("192.0.2.10:80", &r.egress[0].callee);
	r.egress[0].status = 404;
	r.egress[0].flags = CLAIMD_EG_DONE;
	o = trace__ingress_json(&r, nm, 400);
	if (ASSERT_TRUE(json_object_object_get_ex(o, "failed", &v), "failed key"))
		ASSERT_TRUE(json_object_get_boolean(v), "404 failed at 400");
	eg = json_object_array_get_idx(json_object_object_get(o, "egress"), 0);
	if (ASSERT_TRUE(eg && json_object_object_get_ex(eg, "failed", &v), "egress failed key"))
		ASSERT_TRUE(json_object_get_boolean(v), "the call's 404 failed at 400");
	ASSERT_STREQ(json_object_get_string(json_object_object_get(o, "rule")), "unknown-edge",
		     "rule name");
	json_object_put(o);
	o = trace__ingress_json(&r, nm, 500);
	ASSERT_FALSE(json_object_get_boolean(json_object_object_get(o, "failed")),
		     "404 fine at 500");
	json_object_put(o);
	r.status = 0;
	r.flags = CLAIMD_IN_LOST;
	r.egress[0].flags = CLAIMD_EG_DONE | CLAIMD_EG_LOST;
	o = trace__ingress_json(&r, nm, 500);
	ASSERT_TRUE(json_object_get_boolean(json_object_object_get(o, "failed")),
		    "a lost answer is judged");
	ASSERT_TRUE(json_object_get_boolean(json_object_object_get(o, "lost")), "... and lost");
	eg = json_object_array_get_idx(json_object_object_get(o, "egress"), 0);
	ASSERT_FALSE(json_object_get_boolean(json_object_object_get(eg, "failed")),
		     "a lost call is no callee failure");
	ASSERT_TRUE(json_object_get_boolean(json_object_object_get(eg, "lost")), "call lost");
	json_object_put(o);
	names__free(nm);
}

void test_outcome(void)
{
	counts_tests();
	outcome_tests();
	retry_tests();
	name_tests();
	addr_tests();
	trace_tests();
}
