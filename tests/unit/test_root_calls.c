// SPDX-License-Identifier: GPL-2.0
/*
 * Root calls (user/claimd/model/roots.c): the retry rule the kernel applies
 * (headers/counts.h: same callee, method and target, right after a failed
 * call of the same process, at most CLAIMD_ROOT_RETRY_WINDOW_NS later; a
 * lost answer is no failure to retry); records of calls the kernel could
 * not count (curl --retry's shape: 4 failed attempts, 3 retries marked by
 * the kernel), and records of calls it did count (nothing added); what the
 * kernel's counters hand over; late calls (not root calls); the process
 * named from its first record. Callers are processes that are
 * gone (named from the record's comm); callees are addresses off this host.
 * The kernel's side, with real processes, is tests/bpf/test_kernel.c
 * (root_counts) and tests/bpf/test_roots.c.
 */
#include <string.h>

#include "model/edges.h"
#include "model/names.h"
#include "counts.h"
#include "outcome.h"
#include "model/roots.h"
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
	struct claimd_root_last prev = { .end_ns = 10 * SEC,
					 .target_hash = 7,
					 .method = HTTP_M_GET,
					 .outcome = CLAIMD_OUTCOME_FAILED };
	__u64 start = 11 * SEC;

	ASSERT_TRUE(counts_root_is_retry(&prev, start, HTTP_M_GET, 7), "1 s after a failure");
	ASSERT_TRUE(counts_root_is_retry(&prev, prev.end_ns, HTTP_M_GET, 7), "at once");
	start = prev.end_ns + CLAIMD_ROOT_RETRY_WINDOW_NS;
	ASSERT_TRUE(counts_root_is_retry(&prev, start, HTTP_M_GET, 7), "at the window's end");
	ASSERT_FALSE(counts_root_is_retry(&prev, start + 1, HTTP_M_GET, 7),
		     "past the window: a new request");
	ASSERT_FALSE(counts_root_is_retry(&prev, prev.end_ns - 1, HTTP_M_GET, 7),
		     "begun before the failure ended: concurrent");
	start = 11 * SEC;
	ASSERT_FALSE(counts_root_is_retry(&prev, start, HTTP_M_GET, 8), "another target");
	ASSERT_FALSE(counts_root_is_retry(&prev, start, HTTP_M_POST, 7), "another method");
	prev.flags = CLAIMD_EG_CONNECT | CLAIMD_EG_TRANSPORT;
	ASSERT_TRUE(counts_root_is_retry(&prev, start, HTTP_M_POST, 8),
		    "after a refused connect: any call");
	prev.flags = 0;
	prev.outcome = CLAIMD_OUTCOME_OK;
	ASSERT_FALSE(counts_root_is_retry(&prev, start, HTTP_M_GET, 7), "after a success");
	prev.outcome = CLAIMD_OUTCOME_LOST;
	ASSERT_FALSE(counts_root_is_retry(&prev, start, HTTP_M_GET, 7),
		     "after a call whose answer was lost");
	ASSERT_FALSE(counts_root_is_retry(NULL, start, HTTP_M_GET, 7), "a first call");
}

/*
 * Records of calls the kernel could not count (CLAIMD_EG_UNCOUNTED): curl
 * --retry 3 against an always-503 service, its retries marked by the
 * kernel; records of calls the kernel counted add nothing.
 */
static void test_uncounted(struct names *nm)
{
	static const double starts[] = { 0, 1.01, 3.02, 7.03 };
	struct edges *e = edges__new(&cfg);
	struct roots *r = roots__new();
	struct claimd_root_egress rec;
	size_t i;

	if (!ASSERT_OK_PTR(e, "edges") || !ASSERT_OK_PTR(r, "roots"))
		goto out;
	for (i = 0; i < 4; i++) {
		call(&rec, TGID_A, SVC, 100 + starts[i], 100 + starts[i] + 0.005, 503,
		     CLAIMD_EG_UNCOUNTED | (i ? CLAIMD_EG_RETRY : 0), 42);
		ASSERT_EQ(roots__add(r, e, nm, &rec, 5), ROOT_CALL_EDGE, "an edge call");
	}
	counts_are(e, SVC, 4, 4, 3, "curl --retry 3");
	call(&rec, TGID_A, SVC, 170, 170.01, 503, 0, 42);
	ASSERT_EQ(roots__add(r, e, nm, &rec, 5), ROOT_CALL_COUNTED, "counted by the kernel");
	counts_are(e, SVC, 4, 4, 3, "a counted call's record adds nothing");
	/* A refused connect, and a lost answer: a failure, and a call only. */
	call(&rec, TGID_A, OTHER, 172, 172.01, 0,
	     CLAIMD_EG_UNCOUNTED | CLAIMD_EG_TRANSPORT | CLAIMD_EG_CONNECT, 0);
	roots__add(r, e, nm, &rec, 5);
	call(&rec, TGID_A, OTHER, 174, 174.01, 0, CLAIMD_EG_UNCOUNTED | CLAIMD_EG_LOST, 0);
	roots__add(r, e, nm, &rec, 5);
	counts_are(e, OTHER, 2, 1, 0, "refused, then lost");
	ASSERT_EQ(roots__counts(r)->edge_calls, 6, "root calls counted");
out:
	roots__free(r);
	edges__free(e);
}

/* What the kernel's counters add, as kcounts hands them over. */
static void test_counted(struct names *nm)
{
	struct edges *e = edges__new(&cfg);
	struct roots *r = roots__new();
	struct edge_counts d = { .calls = 100, .callee_failures = 20, .both_failed = 0 };
	struct claimd_addr callee;

	if (!ASSERT_OK_PTR(e, "edges") || !ASSERT_OK_PTR(r, "roots"))
		goto out;
	addr__parse(SVC, &callee);
	ASSERT_EQ(roots__count(r, e, nm, TGID_A, "curl", &callee, &d, 5), ROOT_CALL_EDGE,
		  "a root edge");
	d.retries = 3;
	d.calls = 4;
	roots__count(r, e, nm, TGID_A, "curl", &callee, &d, 5);
	counts_are(e, SVC, 104, 40, 3, "two reads");
	ASSERT_EQ(roots__counts(r)->edge_calls, 104, "root calls counted");
out:
	roots__free(r);
	edges__free(e);
}

/* Late calls belong to an answered request: not root calls. One its request's
 * log counted is counted no more; one written after the answer, which the
 * kernel's counters refused, goes on its service's edge. A counted call's
 * record names its process, while it lives, and by the CLAIMD_SERVICE it
 * carries once it is gone. */
static void test_not_roots(struct names *nm)
{
	struct edges *e = edges__new(&cfg);
	struct roots *r = roots__new();
	struct claimd_root_egress rec;

	if (!ASSERT_OK_PTR(e, "edges") || !ASSERT_OK_PTR(r, "roots"))
		goto out;
	call(&rec, TGID_A, SVC, 1, 1.01, 503, CLAIMD_EG_LATE, 1);
	rec.local_port = 8080;
	ASSERT_EQ(roots__add(r, e, nm, &rec, 5), ROOT_CALL_LATE, "a late call");
	ASSERT_EQ(roots__counts(r)->edge_calls, 0, "no root edge call");
	ASSERT_TRUE(edges__find_root(e, "curl", SVC) == NULL, "no edge from the late call");
	call(&rec, TGID_A, SVC, 2, 2.01, 503, CLAIMD_EG_LATE | CLAIMD_EG_UNCOUNTED, 1);
	rec.local_port = 8080;
	ASSERT_EQ(roots__add(r, e, nm, &rec, 5), ROOT_CALL_SERVICE,
		  "written late, refused by the counters: its service's edge");
	ASSERT_EQ(roots__counts(r)->edge_calls, 0, "still no root edge call");
	{
		const char *caller = names__service(nm, TGID_A, 8080, "curl");
		struct edge *ed = edges__find(e, caller, names__callee(nm, &rec.egress.callee));

		ASSERT_OK_PTR(ed, "the service's edge");
		ASSERT_TRUE(edges__find_root(e, "curl", SVC) == NULL, "no root edge either");
	}
	names__exit(nm, TGID_B);
	call(&rec, TGID_B, SVC, 1, 1.01, 503, 0, 1);
	snprintf(rec.comm, sizeof(rec.comm), "batch");
	ASSERT_EQ(roots__add(r, e, nm, &rec, 5), ROOT_CALL_COUNTED, "counted by the kernel");
	ASSERT_STREQ(names__process(nm, TGID_B, NULL), "batch", "named from its first record");
	/* Gone before claimd read /proc: named by the environment the kernel read. */
	names__exit(nm, TGID_B);
	call(&rec, TGID_B, SVC, 2, 2.01, 200, 0, 1);
	snprintf(rec.service, sizeof(rec.service), "nightly-export");
	roots__add(r, e, nm, &rec, 5);
	ASSERT_STREQ(names__process(nm, TGID_B, "batch"), "nightly-export",
		     "named by the CLAIMD_SERVICE its record carries");
	/* A record's value need not end in a NUL: never read past its field. */
	names__exit(nm, TGID_B);
	memset(rec.service, 'x', sizeof(rec.service));
	roots__add(r, e, nm, &rec, 5);
	ASSERT_EQ(strlen(names__process(nm, TGID_B, NULL)), sizeof(rec.service) - 1,
		  "an unended value, cut at its field");
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
	if (test__start_subtest("uncounted"))
		test_uncounted(nm);
	if (test__start_subtest("counted"))
		test_counted(nm);
	if (test__start_subtest("not_roots"))
		test_not_roots(nm);
	names__free(nm);
}
