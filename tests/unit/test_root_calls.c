// SPDX-License-Identifier: GPL-2.0
/*
 * Root calls (user/claimd/roots.c) from hand-made CLAIMD_REC_EGRESS records: the
 * retry rule (same callee, method and target, right after a failed call of
 * the same process, at most ROOTS_RETRY_WINDOW_NS later; a lost answer is
 * no failure to retry); curl --retry's shape (4 failed attempts, 3
 * retries); a batch job's distinct targets (no retries); calls of a process
 * that listens (no edge, counted); late calls (not root calls); two
 * processes of one name, each with its own retry memory; and forgetting a
 * process that exited. Callers are processes that are gone (named from the
 * record's comm); callees are addresses off this host.
 */
#include <string.h>

#include "edges.h"
#include "names.h"
#include "outcome.h"
#include "roots.h"
#include "test_progs.h"

#define TGID_A 0x7ffffff1u
#define TGID_B 0x7ffffff2u
#define SVC    "192.0.2.20:8080"
#define OTHER  "192.0.2.21:8080"
#define SEC    1000000000ull

static const struct edges_config cfg = {
	.window_s = 100,
	.memory_half_life_s = 1000,
	.min_failures = 20,
	.fail_status = 500,
	.use_memory = true,
};

/* A call by tgid ("curl") to callee, from start to end (seconds), with a status. */
static void call(struct claimd_root_egress *r, __u32 tgid, const char *callee, double start,
		 double end, __u16 status, __u8 flags, __u32 target)
{
	memset(r, 0, sizeof(*r));
	r->hdr.type = CLAIMD_REC_EGRESS;
	r->hdr.version = CLAIMD_RECORD_VERSION;
	r->hdr.size = sizeof(*r);
	r->tgid = tgid;
	r->tid = tgid;
	snprintf(r->comm, sizeof(r->comm), "curl");
	addr__parse(callee, &r->egress.callee);
	r->egress.start_ns = (__u64)(start * SEC);
	r->egress.end_ns = (__u64)(end * SEC);
	r->egress.status = status;
	r->egress.method = HTTP_M_GET;
	r->egress.target_hash = target;
	r->egress.flags = CLAIMD_EG_DONE | flags;
}

static bool counts_are(struct edges *e, const char *callee, __u64 calls, __u64 cf, __u64 retries,
		       const char *what)
{
	struct edge *ed = edges__find_root(e, "curl", callee);
	bool ok;

	if (!ASSERT_OK_PTR(ed, what))
		return false;
	ok = ASSERT_EQ(ed->total.calls, calls, what);
	ok &= ASSERT_EQ(ed->total.callee_failures, cf, what);
	ok &= ASSERT_EQ(ed->total.retries, retries, what);
	ok &= ASSERT_EQ(ed->total.both_failed, 0, what);
	if (!ok)
		printf("  (calls, callee_failures, retries) of %s\n", what);
	return ok;
}

static void test_rule(void)
{
	struct root_last prev = { .end_ns = 10 * SEC,
				  .target_hash = 7,
				  .method = HTTP_M_GET,
				  .outcome = CLAIMD_OUTCOME_FAILED };
	struct claimd_egress x = { .start_ns = 11 * SEC, .target_hash = 7, .method = HTTP_M_GET };

	ASSERT_TRUE(roots__is_retry(&prev, &x), "1 s after a failure: a retry");
	x.start_ns = prev.end_ns;
	ASSERT_TRUE(roots__is_retry(&prev, &x), "at once");
	x.start_ns = prev.end_ns + ROOTS_RETRY_WINDOW_NS;
	ASSERT_TRUE(roots__is_retry(&prev, &x), "at the end of the window");
	x.start_ns++;
	ASSERT_FALSE(roots__is_retry(&prev, &x), "past the window: a new request");
	x.start_ns = prev.end_ns - 1;
	ASSERT_FALSE(roots__is_retry(&prev, &x), "begun before the failure ended: concurrent");
	x.start_ns = 11 * SEC;
	x.target_hash = 8;
	ASSERT_FALSE(roots__is_retry(&prev, &x), "another target");
	x.target_hash = 7;
	x.method = HTTP_M_POST;
	ASSERT_FALSE(roots__is_retry(&prev, &x), "another method");
	x.method = HTTP_M_GET;
	prev.outcome = CLAIMD_OUTCOME_OK;
	ASSERT_FALSE(roots__is_retry(&prev, &x), "after a success");
	prev.outcome = CLAIMD_OUTCOME_LOST;
	ASSERT_FALSE(roots__is_retry(&prev, &x), "after a call whose answer was lost");
	ASSERT_FALSE(roots__is_retry(NULL, &x), "a first call");
}

/* curl --retry 3 against an always-503 service: 1, 2, 4 s back-off. */
static void test_curl_retry(struct names *nm)
{
	static const double starts[] = { 0, 1.01, 3.02, 7.03 };
	struct edges *e = edges__new(&cfg);
	struct roots *r = roots__new();
	struct claimd_root_egress rec;
	size_t i;

	if (!ASSERT_OK_PTR(e, "edges") || !ASSERT_OK_PTR(r, "roots"))
		goto out;
	for (i = 0; i < 4; i++) {
		call(&rec, TGID_A, SVC, 100 + starts[i], 100 + starts[i] + 0.005, 503, 0, 42);
		ASSERT_EQ(roots__add(r, e, nm, &rec, 5), ROOT_CALL_EDGE, "an edge call");
	}
	counts_are(e, SVC, 4, 4, 3, "curl --retry 3");
	/* The next invocation, 60 s later, asks again: a new request, no retry. */
	call(&rec, TGID_A, SVC, 170, 170.01, 503, 0, 42);
	roots__add(r, e, nm, &rec, 5);
	counts_are(e, SVC, 5, 5, 3, "60 s later");
	/* Another process of the same name has its own memory: not a retry. */
	call(&rec, TGID_B, SVC, 171, 171.01, 503, 0, 42);
	roots__add(r, e, nm, &rec, 5);
	counts_are(e, SVC, 6, 6, 3, "another process");
	/* A failure to one callee is not retried by a call to another. */
	call(&rec, TGID_A, OTHER, 171, 171.01, 200, 0, 42);
	roots__add(r, e, nm, &rec, 5);
	counts_are(e, OTHER, 1, 0, 0, "another callee");
	/* A transport failure (refused) retried: a retry too. */
	call(&rec, TGID_A, OTHER, 172, 172.01, 0, CLAIMD_EG_TRANSPORT | CLAIMD_EG_CONNECT, 0);
	roots__add(r, e, nm, &rec, 5);
	call(&rec, TGID_A, OTHER, 173, 173.01, 0, CLAIMD_EG_TRANSPORT | CLAIMD_EG_CONNECT, 0);
	roots__add(r, e, nm, &rec, 5);
	counts_are(e, OTHER, 3, 2, 1, "refused, retried");
	/* A lost answer: a call (and a retry of the failure before it), not a failure;
	 * the call after it is not judged a retry. */
	call(&rec, TGID_A, OTHER, 174, 174.01, 0, CLAIMD_EG_LOST, 0);
	roots__add(r, e, nm, &rec, 5);
	call(&rec, TGID_A, OTHER, 175, 175.01, 503, 0, 0);
	roots__add(r, e, nm, &rec, 5);
	counts_are(e, OTHER, 5, 3, 2, "lost answer");
	ASSERT_EQ(roots__counts(r)->edge_calls, 11, "root calls counted");
	/* The process exits: a new process with its pid starts afresh. */
	roots__forget_process(r, TGID_A);
	call(&rec, TGID_A, OTHER, 176, 176.01, 503, 0, 0);
	roots__add(r, e, nm, &rec, 5);
	counts_are(e, OTHER, 6, 4, 2, "after the exit");
out:
	roots__free(r);
	edges__free(e);
}

/* A batch job: 100 distinct targets, 1 in 5 failing: no retries at all. */
static void test_batch(struct names *nm)
{
	struct edges *e = edges__new(&cfg);
	struct roots *r = roots__new();
	struct claimd_root_egress rec;
	int i;

	if (!ASSERT_OK_PTR(e, "edges") || !ASSERT_OK_PTR(r, "roots"))
		goto out;
	for (i = 0; i < 100; i++) {
		call(&rec, TGID_A, SVC, i * 0.01, i * 0.01 + 0.005, i % 5 == 0 ? 503 : 200, 0,
		     1000 + i);
		roots__add(r, e, nm, &rec, 5);
	}
	counts_are(e, SVC, 100, 20, 0, "batch job");
out:
	roots__free(r);
	edges__free(e);
}

/* A process that listens serves: its calls outside requests are no edge. Late
 * calls belong to an answered request: not root calls. */
static void test_not_roots(struct names *nm)
{
	struct edges *e = edges__new(&cfg);
	struct roots *r = roots__new();
	struct claimd_root_egress rec;
	struct claimd_addr local;

	if (!ASSERT_OK_PTR(e, "edges") || !ASSERT_OK_PTR(r, "roots"))
		goto out;
	names__exit(nm, TGID_B); /* named afresh: "svc" */
	addr__parse("127.0.0.1:9999", &local);
	names__listen(nm, TGID_B, &local, "svc", false);
	call(&rec, TGID_B, SVC, 1, 1.01, 503, 0, 1);
	ASSERT_EQ(roots__add(r, e, nm, &rec, 5), ROOT_CALL_OUTSIDE, "a listening process");
	call(&rec, TGID_A, SVC, 1, 1.01, 503, CLAIMD_EG_LATE, 1);
	ASSERT_EQ(roots__add(r, e, nm, &rec, 5), ROOT_CALL_LATE, "a late call");
	ASSERT_EQ(roots__counts(r)->calls_outside_requests, 1, "outside requests");
	ASSERT_EQ(roots__counts(r)->late_calls, 1, "late");
	ASSERT_EQ(roots__counts(r)->edge_calls, 0, "no root edge call");
	ASSERT_TRUE(edges__find_root(e, "svc", SVC) == NULL, "no edge from the service");
	ASSERT_TRUE(edges__find_root(e, "curl", SVC) == NULL, "no edge from the late call");
	/* Its listener closed: it serves nothing any more, its calls are root calls. */
	names__listen(nm, TGID_B, &local, NULL, true);
	ASSERT_EQ(roots__add(r, e, nm, &rec, 5), ROOT_CALL_LATE, "still late");
	rec.egress.flags &= ~CLAIMD_EG_LATE;
	rec.tgid = TGID_B;
	ASSERT_EQ(roots__add(r, e, nm, &rec, 5), ROOT_CALL_EDGE, "no listener: a root call");
	ASSERT_OK_PTR(edges__find_root(e, "svc", SVC), "the root edge");
out:
	names__exit(nm, TGID_B);
	roots__free(r);
	edges__free(e);
}

void test_root_calls(void)
{
	struct names *nm = names__new();

	if (!ASSERT_OK_PTR(nm, "names__new"))
		return;
	if (test__start_subtest("rule"))
		test_rule();
	if (test__start_subtest("curl_retry"))
		test_curl_retry(nm);
	if (test__start_subtest("batch"))
		test_batch(nm);
	if (test__start_subtest("not_roots"))
		test_not_roots(nm);
	names__free(nm);
}
