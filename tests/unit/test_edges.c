// SPDX-License-Identifier: GPL-2.0
/*
 * Edge learning (user/claimd/model/edges.c) from hand-made ingress records: the class
 * thresholds of edges__classify; what counts as a call, a callee failure and
 * a failure of both (once per ingress and callee, a failed call superseded by
 * a retry right after it not counting); multiplexed and context-less records
 * counted for their service only; service counts by verdict; the sliding
 * window, whose buckets drop out (and are reused) as time advances; the
 * memory, decaying with its half-life in wall-clock time; the effective
 * class (window, else memory when used, else unknown); the JSON that
 * claimctl reads; ingresses claimd could not fully follow (blind, untied,
 * lost) learning nothing and counting as unknown by reason; and root
 * edges, kept apart from service edges and never classified. The caller is
 * a process that is gone (named from the record's comm) and callees are
 * addresses off this host, so names do not depend on the machine.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/edges.h"
#include "model/names.h"
#include "verdict_names.h"
#include "test_progs.h"

#define GONE_TGID 0x7ffffff0u
#define CALLER	  "front:9000"
#define B	  "192.0.2.10:80"
#define C	  "192.0.2.11:80"
#define WALL	  ((time_t)1700000000)
#define HALF_LIFE 1000.0

#define OK(st)	  (st), CLAIMD_EG_DONE
#define FAIL(st)  (st), CLAIMD_EG_DONE
#define RETRY(st) (st), CLAIMD_EG_DONE | CLAIMD_EG_RETRY
#define TRANSPORT 0, CLAIMD_EG_DONE | CLAIMD_EG_TRANSPORT
#define PENDING	  0, 0

static const struct edges_config base_cfg = {
	.window_s = 100, /* buckets of 10 s */
	.memory_half_life_s = HALF_LIFE,
	.min_failures = 20,
	.fail_status = 500,
	.use_memory = true,
};

/*
 * What claimd counts from a record: all of it when the kernel could count
 * none of it (its counter maps full), by the same rules (headers/counts.h)
 * the kernel applies to everything else.
 */
static void add_record(struct edges *e, const struct claimd_ingress *r, struct names *nm,
		       double now, time_t wall)
{
	struct claimd_ingress c = *r;
	int i;

	c.flags |= CLAIMD_IN_UNCOUNTED;
	for (i = 0; i < CLAIMD_EGRESS_MAX; i++)
		c.egress[i].flags |= CLAIMD_EG_UNCOUNTED;
	edges__add_ingress(e, &c, nm, now, wall);
}

static void ingress(struct claimd_ingress *r, __u16 port, __u16 status, __u8 verdict, __u32 flags)
{
	memset(r, 0, sizeof(*r));
	r->hdr.type = CLAIMD_REC_INGRESS;
	r->hdr.version = CLAIMD_RECORD_VERSION;
	r->tgid = GONE_TGID;
	r->tid = GONE_TGID;
	addr__parse("127.0.0.1:1", &r->local);
	r->local.port = port;
	addr__parse("127.0.0.1:40000", &r->peer);
	snprintf(r->comm, sizeof(r->comm), "front");
	r->status = status;
	r->verdict = verdict;
	r->flags = flags;
	r->cause = CLAIMD_NO_SLOT;
}

static void egress(struct claimd_ingress *r, const char *callee, __u16 status, __u8 flags)
{
	struct claimd_egress *x = &r->egress[r->n_egress++];

	addr__parse(callee, &x->callee);
	x->status = status;
	x->flags = flags;
	x->start_ns = r->n_egress * 1000;
	x->end_ns = x->start_ns + 500;
}

/* n requests of CALLER that each made one call to B. */
static void feed(struct edges *e, struct names *nm, int n, __u16 in_status, __u16 b_status,
		 double now, time_t wall)
{
	struct claimd_ingress r;
	int i;

	for (i = 0; i < n; i++) {
		ingress(&r, 9000, in_status, in_status >= 500 ? CLAIM_UNCLAIMED : CLAIM_NONE, 0);
		egress(&r, B, FAIL(b_status));
		add_record(e, &r, nm, now, wall);
	}
}

static struct edge *edge_b(struct edges *e)
{
	return edges__find(e, CALLER, B);
}

static bool counts_are(const struct edge_counts *c, __u64 calls, __u64 cf, __u64 bf, __u64 retries,
		       const char *what)
{
	bool ok = true;

	ok &= ASSERT_EQ(c->calls, calls, what);
	ok &= ASSERT_EQ(c->callee_failures, cf, what);
	ok &= ASSERT_EQ(c->both_failed, bf, what);
	ok &= ASSERT_EQ(c->retries, retries, what);
	if (!ok)
		printf("  (calls, callee_failures, both_failed, retries) of %s\n", what);
	return ok;
}

static void count_edge(struct edge *ed, void *ctx)
{
	(void)ed;
	++*(int *)ctx;
}

static void test_classify(void)
{
	static const struct {
		double cf, bf;
		unsigned int min;
		enum claim_class want;
	} cases[] = {
		{ 0, 0, 0, CLAIM_CLASS_UNKNOWN },	{ 0, 0, 20, CLAIM_CLASS_UNKNOWN },
		{ 19, 19, 20, CLAIM_CLASS_UNKNOWN },	{ 19.99, 19.99, 20, CLAIM_CLASS_UNKNOWN },
		{ 20, 20, 20, CLAIM_CLASS_FAIL_CLOSE }, { 20, 16, 20, CLAIM_CLASS_FAIL_CLOSE },
		{ 20, 15, 20, CLAIM_CLASS_UNKNOWN },	{ 20, 10, 20, CLAIM_CLASS_UNKNOWN },
		{ 20, 5, 20, CLAIM_CLASS_UNKNOWN },	{ 20, 4, 20, CLAIM_CLASS_FAIL_OPEN },
		{ 20, 0, 20, CLAIM_CLASS_FAIL_OPEN },	{ 100, 80, 20, CLAIM_CLASS_FAIL_CLOSE },
		{ 100, 79, 20, CLAIM_CLASS_UNKNOWN },	{ 100, 20, 20, CLAIM_CLASS_FAIL_OPEN },
		{ 100, 21, 20, CLAIM_CLASS_UNKNOWN },	{ 1, 1, 0, CLAIM_CLASS_FAIL_CLOSE },
		{ 1, 0, 1, CLAIM_CLASS_FAIL_OPEN },	{ 0.5, 0.5, 0, CLAIM_CLASS_FAIL_CLOSE },
		{ -5, -5, 0, CLAIM_CLASS_UNKNOWN },	{ 50, 40, 20, CLAIM_CLASS_FAIL_CLOSE },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char what[64];

		snprintf(what, sizeof(what), "cf %g bf %g min %u", cases[i].cf, cases[i].bf,
			 cases[i].min);
		ASSERT_EQ(edges__classify(cases[i].cf, cases[i].bf, cases[i].min), cases[i].want,
			  what);
	}
	ASSERT_STREQ(verdict__class_name(CLAIM_CLASS_FAIL_CLOSE), "fail-close", "name close");
	ASSERT_STREQ(verdict__class_name(CLAIM_CLASS_FAIL_OPEN), "fail-open", "name open");
	ASSERT_STREQ(verdict__class_name(CLAIM_CLASS_UNKNOWN), "unknown", "name unknown");
}

static void test_counts(struct names *nm)
{
	static const struct {
		const char *what;
		__u16 in_status, b_status;
		__u8 b_flags;
		__u64 calls, cf, bf; /* totals after it */
	} steps[] = {
		{ "both failed", 502, FAIL(503), 1, 1, 1 },
		{ "caller survived", 200, FAIL(503), 2, 2, 1 },
		{ "callee fine", 502, OK(200), 3, 2, 1 },
		{ "no response, transport failure", 0, TRANSPORT, 4, 3, 2 },
		{ "done without a status", 200, 0, CLAIMD_EG_DONE, 5, 4, 2 },
		{ "pending is not failed", 502, PENDING, 6, 4, 2 },
		{ "404 is not a failure", 502, OK(404), 7, 4, 2 },
		{ "499 is not a failure", 502, OK(499), 8, 4, 2 },
		{ "500 is", 500, FAIL(500), 9, 5, 3 },
		{ "caller 404 is not failed", 404, FAIL(503), 10, 6, 3 },
	};
	struct edges *e = edges__new(&base_cfg);
	struct claimd_ingress r;
	struct edge *ed = NULL;
	size_t i;
	int n = 0;

	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		ingress(&r, 9000, steps[i].in_status, CLAIM_NONE, 0);
		egress(&r, B, steps[i].b_status, steps[i].b_flags);
		add_record(e, &r, nm, 5, WALL);
		ed = edge_b(e);
		if (!ASSERT_OK_PTR(ed, steps[i].what))
			break;
		counts_are(&ed->total, steps[i].calls, steps[i].cf, steps[i].bf, 0, steps[i].what);
	}
	if (ed) {
		ASSERT_STREQ(ed->caller, CALLER, "caller named from the record's comm");
		ASSERT_STREQ(ed->callee, B, "callee named ip:port");
		ASSERT_TRUE(ed->in_memory, "learned into memory");
		ASSERT_FLOAT_NEAR(ed->memory.callee_failures, 6, 1e-9, "memory callee_failures");
		ASSERT_FLOAT_NEAR(ed->memory.both_failed, 3, 1e-9, "memory both_failed");
		ASSERT_FLOAT_NEAR(ed->memory.calls, 10, 1e-9, "memory calls");
		ASSERT_EQ(ed->memory.updated, WALL, "memory updated");
	}
	ASSERT_TRUE(edges__find(e, CALLER, C) == NULL, "no edge to C");
	ASSERT_TRUE(edges__find(e, B, CALLER) == NULL, "edges have a direction");
	edges__for_each(e, count_edge, &n);
	ASSERT_EQ(n, 1, "one edge");
	/* A bare ingress: a service request, no edge. */
	ingress(&r, 9000, 200, CLAIM_NONE, 0);
	add_record(e, &r, nm, 5, WALL);
	n = 0;
	edges__for_each(e, count_edge, &n);
	ASSERT_EQ(n, 1, "still one edge");
	edges__free(e);
}

static void test_per_ingress(struct names *nm)
{
	static const char map[] = "192.0.2.20:80 svc\n192.0.2.21:80 svc\n";
	struct edges *e = edges__new(&base_cfg);
	struct claimd_ingress r;
	struct edge *b, *c, *svc;
	char err[128];

	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	ingress(&r, 9000, 502, CLAIM_UNCLAIMED, 0);
	egress(&r, B, FAIL(503));
	egress(&r, C, FAIL(503));
	egress(&r, B, FAIL(503));
	egress(&r, B, TRANSPORT);
	egress(&r, C, OK(200));
	add_record(e, &r, nm, 5, WALL);
	b = edge_b(e);
	c = edges__find(e, CALLER, C);
	if (ASSERT_OK_PTR(b, "edge B") && ASSERT_OK_PTR(c, "edge C")) {
		counts_are(&b->total, 3, 1, 1, 0, "B: one failure per ingress");
		counts_are(&c->total, 2, 1, 1, 0, "C: one failure per ingress");
	}
	ingress(&r, 9000, 200, CLAIM_NONE, 0);
	egress(&r, B, FAIL(503));
	egress(&r, B, FAIL(503));
	add_record(e, &r, nm, 5, WALL);
	if (b)
		counts_are(&b->total, 5, 2, 1, 0, "B after a surviving ingress");

	/* Two addresses of one named callee are one callee. */
	if (ASSERT_EQ(names__parse_map(nm, map, sizeof(map) - 1, err, sizeof(err)), 2, "map")) {
		ingress(&r, 9000, 502, CLAIM_UNCLAIMED, 0);
		egress(&r, "192.0.2.20:80", FAIL(503));
		egress(&r, "192.0.2.21:80", FAIL(503));
		add_record(e, &r, nm, 5, WALL);
		svc = edges__find(e, CALLER, "svc");
		if (ASSERT_OK_PTR(svc, "edge to svc"))
			counts_are(&svc->total, 2, 1, 1, 0, "svc: two addresses");
		ASSERT_TRUE(edges__find(e, CALLER, "192.0.2.20:80") == NULL, "named, not ip:port");
	}
	edges__free(e);
}

static void test_retries(struct names *nm)
{
	static const struct {
		const char *what;
		__u16 in_status;
		int n;
		struct {
			const char *callee;
			__u16 status;
			__u8 flags;
		} eg[4];
		__u64 b_calls, b_cf, b_bf, b_retries; /* B's totals after it */
		__u64 c_cf;			      /* C's callee failures after it */
	} steps[] = {
		{ "retry succeeded",
		  200,
		  2,
		  { { B, FAIL(503) }, { B, RETRY(200) } },
		  2,
		  0,
		  0,
		  1,
		  0 },
		{ "retry failed too",
		  502,
		  2,
		  { { B, FAIL(503) }, { B, RETRY(503) } },
		  4,
		  1,
		  1,
		  2,
		  0 },
		{ "transport failure retried, other callee failed",
		  502,
		  3,
		  { { B, TRANSPORT }, { B, RETRY(200) }, { C, FAIL(503) } },
		  6,
		  1,
		  1,
		  3,
		  1 },
		{ "two retries, the last one good",
		  502,
		  3,
		  { { B, FAIL(503) }, { B, RETRY(503) }, { B, RETRY(200) } },
		  9,
		  1,
		  1,
		  5,
		  1 },
		{ "a retry supersedes only the call right before it",
		  502,
		  3,
		  { { B, FAIL(503) }, { C, OK(200) }, { B, RETRY(200) } },
		  11,
		  2,
		  2,
		  6,
		  1 },
		{ "no retry flag: both calls count once",
		  200,
		  2,
		  { { B, FAIL(503) }, { B, OK(200) } },
		  13,
		  3,
		  2,
		  6,
		  1 },
	};
	struct edges *e = edges__new(&base_cfg);
	struct claimd_ingress r;
	size_t i;
	int j;

	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct edge *b, *c;

		ingress(&r, 9000, steps[i].in_status, CLAIM_NONE, 0);
		for (j = 0; j < steps[i].n; j++)
			egress(&r, steps[i].eg[j].callee, steps[i].eg[j].status,
			       steps[i].eg[j].flags);
		add_record(e, &r, nm, 5, WALL);
		b = edge_b(e);
		c = edges__find(e, CALLER, C);
		if (ASSERT_OK_PTR(b, steps[i].what))
			counts_are(&b->total, steps[i].b_calls, steps[i].b_cf, steps[i].b_bf,
				   steps[i].b_retries, steps[i].what);
		if (steps[i].c_cf && ASSERT_OK_PTR(c, steps[i].what))
			ASSERT_EQ(c->total.callee_failures, steps[i].c_cf, steps[i].what);
	}
	edges__free(e);
}

struct svc_find {
	const char *name;
	struct service_stats *found;
	int n;
};

static void find_service(struct service_stats *s, void *ctx)
{
	struct svc_find *f = ctx;

	f->n++;
	if (!strcmp(s->name, f->name))
		f->found = s;
}

static struct service_stats *service(struct edges *e, const char *name, int *count)
{
	struct svc_find f = { .name = name };

	edges__for_each_service(e, find_service, &f);
	if (count)
		*count = f.n;
	return f.found;
}

static void test_mux_noctx(struct names *nm)
{
	struct edges *e = edges__new(&base_cfg);
	struct claimd_ingress r;
	struct edge *ed;
	struct service_stats *s;
	int n = 0;

	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	ingress(&r, 9000, 502, CLAIM_UNKNOWN, CLAIMD_IN_MUX);
	egress(&r, B, FAIL(503));
	add_record(e, &r, nm, 5, WALL);
	ingress(&r, 9000, 502, CLAIM_UNKNOWN, CLAIMD_IN_NOCTX);
	egress(&r, C, FAIL(503));
	add_record(e, &r, nm, 5, WALL);
	ingress(&r, 9000, 200, CLAIM_NONE, CLAIMD_IN_MUX | CLAIMD_IN_NOCTX);
	egress(&r, B, FAIL(503));
	add_record(e, &r, nm, 5, WALL);
	/* Their calls count on their edges; none teaches a class. */
	edges__for_each(e, count_edge, &n);
	ASSERT_EQ(n, 2, "the calls' edges");
	ed = edge_b(e);
	if (ASSERT_OK_PTR(ed, "edge to B")) {
		counts_are(&ed->total, 2, 2, 0, 0, "B: every call, no both_failed");
		ASSERT_EQ(ed->total.tied_failures, 0, "B: no tied failure");
		ASSERT_EQ(edges__effective(e, ed, 5, WALL).cls, CLAIM_CLASS_UNKNOWN, "B: no class");
	}
	s = service(e, CALLER, NULL);
	if (ASSERT_OK_PTR(s, "service counted")) {
		ASSERT_EQ(s->requests, 3, "requests");
		ASSERT_EQ(s->failures, 2, "failures");
		ASSERT_EQ(s->unknown, 2, "unknown");
		ASSERT_EQ(s->multiplexed, 2, "multiplexed");
		ASSERT_EQ(s->claimed + s->unclaimed, 0, "no verdicts");
	}
	/* The service juggles requests on a thread: even its plain records teach nothing. */
	ingress(&r, 9000, 502, CLAIM_UNCLAIMED, CLAIMD_IN_CLOSED);
	egress(&r, B, FAIL(503));
	add_record(e, &r, nm, 5, WALL);
	ed = edge_b(e);
	if (ASSERT_OK_PTR(ed, "edge to B"))
		counts_are(&ed->total, 3, 3, 0, 0,
			   "B: a multiplexed service's call counts, no more");
	edges__free(e);

	/* A service that never juggled: its plain record is learned as usual. */
	e = edges__new(&base_cfg);
	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	ingress(&r, 9000, 502, CLAIM_UNCLAIMED, CLAIMD_IN_CLOSED);
	egress(&r, B, FAIL(503));
	add_record(e, &r, nm, 5, WALL);
	if (ASSERT_OK_PTR(edge_b(e), "edge after a plain record"))
		counts_are(&edge_b(e)->total, 1, 1, 1, 0, "plain record");
	edges__free(e);
}

static void test_services(struct names *nm)
{
	static const struct {
		__u16 port, status;
		__u8 verdict;
		__u32 flags;
	} recs[] = {
		{ 9000, 200, CLAIM_NONE, 0 },	   { 9000, 502, CLAIM_CLAIMED, 0 },
		{ 9000, 503, CLAIM_UNCLAIMED, 0 }, { 9000, 0, CLAIM_UNCLAIMED, CLAIMD_IN_CLOSED },
		{ 9000, 500, CLAIM_UNKNOWN, 0 },   { 9000, 504, CLAIM_NONE, 0 },
		{ 9000, 200, CLAIM_CLAIMED, 0 }, /* not failed: its verdict is not counted */
		{ 9000, 404, CLAIM_UNCLAIMED, 0 }, { 9000, 502, CLAIM_CLAIMED, CLAIMD_IN_MUX },
		{ 9001, 503, CLAIM_UNCLAIMED, 0 }, { 9001, 201, CLAIM_NONE, 0 },
	};
	struct edges *e = edges__new(&base_cfg);
	struct claimd_ingress r;
	struct service_stats *s;
	struct json_object *arr, *o, *v;
	size_t i;
	int n;

	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		ingress(&r, recs[i].port, recs[i].status, recs[i].verdict, recs[i].flags);
		add_record(e, &r, nm, 5, WALL);
	}
	s = service(e, CALLER, &n);
	ASSERT_EQ(n, 2, "two services");
	if (ASSERT_OK_PTR(s, "front:9000")) {
		ASSERT_EQ(s->requests, 9, "requests");
		ASSERT_EQ(s->failures, 6, "failures");
		ASSERT_EQ(s->claimed, 2, "claimed");
		ASSERT_EQ(s->unclaimed, 2, "unclaimed");
		ASSERT_EQ(s->unknown, 2, "unknown");
		ASSERT_EQ(s->multiplexed, 1, "multiplexed");
	}
	s = service(e, "front:9001", NULL);
	if (ASSERT_OK_PTR(s, "front:9001")) {
		ASSERT_EQ(s->requests, 2, "requests");
		ASSERT_EQ(s->failures, 1, "failures");
		ASSERT_EQ(s->unclaimed, 1, "unclaimed");
	}

	arr = edges__services_json(e);
	if (ASSERT_OK_PTR(arr, "services json") &&
	    ASSERT_EQ(json_object_array_length(arr), 2, "two entries")) {
		static const struct {
			const char *key;
			long long want[2];
		} fields[] = {
			{ "requests", { 9, 2 } },      { "failures", { 6, 1 } },
			{ "claimed", { 2, 0 } },       { "unclaimed", { 2, 1 } },
			{ "unknown", { 2, 0 } },       { "multiplexed", { 1, 0 } },
			{ "goroutine", { 0, 0 } },     { "tied_by_request_id", { 0, 0 } },
			{ "tied_as_relay", { 0, 0 } }, { "tied_by_nginx", { 0, 0 } },
			{ "tied_by_node", { 0, 0 } },
		};
		size_t k;

		for (i = 0; i < 2; i++) {
			o = json_object_array_get_idx(arr, i);
			ASSERT_TRUE(json_object_object_get_ex(o, "service", &v), "service field");
			ASSERT_STREQ(json_object_get_string(v), i ? "front:9001" : CALLER,
				     "sorted by name");
			for (k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
				if (ASSERT_TRUE(json_object_object_get_ex(o, fields[k].key, &v),
						fields[k].key))
					ASSERT_EQ(json_object_get_int64(v), fields[k].want[i],
						  fields[k].key);
			}
			ASSERT_TRUE(json_object_object_get_ex(o, "mode", &v), "mode field");
			/* The first service had a multiplexed request, the second none. */
			ASSERT_STREQ(json_object_get_string(v), i ? "per-thread" : "multiplexed",
				     "mode");
			ASSERT_EQ(json_object_object_length(o), 13, "thirteen fields");
		}
	}
	json_object_put(arr);
	edges__free(e);
}

static void test_window(struct names *nm)
{
	struct edges *e = edges__new(&base_cfg);
	struct edge_counts w;
	struct edge *b;

	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	feed(e, nm, 20, 502, 503, 5, WALL); /* epoch 0: fail-close */
	b = edge_b(e);
	if (!ASSERT_OK_PTR(b, "edge"))
		goto out;
	edges__window(e, b, 5, &w);
	counts_are(&w, 20, 20, 20, 0, "window at 5");
	edges__window(e, b, 99.9, &w);
	counts_are(&w, 20, 20, 20, 0, "window at 99.9");
	edges__window(e, b, 100, &w);
	counts_are(&w, 0, 0, 0, 0, "window at 100: gone");

	feed(e, nm, 20, 200, 503, 55, WALL); /* epoch 5: fail-open */
	edges__window(e, b, 60, &w);
	counts_are(&w, 40, 40, 20, 0, "window at 60");
	ASSERT_EQ(edges__classify(w.callee_failures, w.both_failed, 20), CLAIM_CLASS_UNKNOWN,
		  "mixed: unknown");
	edges__window(e, b, 100, &w);
	counts_are(&w, 20, 20, 0, 0, "window at 100: fail-open left");
	edges__window(e, b, 149.9, &w);
	counts_are(&w, 20, 20, 0, 0, "window at 149.9");
	edges__window(e, b, 150, &w);
	counts_are(&w, 0, 0, 0, 0, "window at 150");

	/* Epoch 10 reuses epoch 0's bucket: emptied first. */
	feed(e, nm, 1, 502, 503, 105, WALL);
	edges__window(e, b, 105, &w);
	counts_are(&w, 21, 21, 1, 0, "window at 105");
	edges__window(e, b, 155, &w);
	counts_are(&w, 1, 1, 1, 0, "window at 155");
	counts_are(&b->total, 41, 41, 21, 0, "totals keep everything");

	/* Long after: nothing in the window, totals unchanged. */
	edges__window(e, b, 1e6, &w);
	counts_are(&w, 0, 0, 0, 0, "window much later");
out:
	edges__free(e);
}

static void test_memory(struct names *nm)
{
	struct edges_config cfg = base_cfg;
	struct edges *e = edges__new(&cfg), *flat = NULL;
	struct edge_memory m;
	struct edge *b;

	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	feed(e, nm, 20, 502, 503, 5, WALL);
	b = edge_b(e);
	if (!ASSERT_OK_PTR(b, "edge"))
		goto out;
	m = edges__memory_at(e, b, WALL + HALF_LIFE);
	ASSERT_FLOAT_NEAR(m.callee_failures, 10, 1e-9, "one half-life: cf");
	ASSERT_FLOAT_NEAR(m.both_failed, 10, 1e-9, "one half-life: bf");
	ASSERT_FLOAT_NEAR(m.calls, 10, 1e-9, "one half-life: calls");
	ASSERT_EQ(m.updated, WALL + HALF_LIFE, "decayed to then");
	m = edges__memory_at(e, b, WALL + 2 * HALF_LIFE);
	ASSERT_FLOAT_NEAR(m.callee_failures, 5, 1e-9, "two half-lives");
	m = edges__memory_at(e, b, WALL + HALF_LIFE / 2);
	ASSERT_FLOAT_NEAR(m.callee_failures, 20 / sqrt(2), 1e-9, "half a half-life");
	m = edges__memory_at(e, b, WALL);
	ASSERT_FLOAT_NEAR(m.callee_failures, 20, 1e-9, "no time passed");
	m = edges__memory_at(e, b, WALL - 500);
	ASSERT_FLOAT_NEAR(m.callee_failures, 20, 1e-9, "clock went back: no growth");
	ASSERT_EQ(m.updated, WALL, "clock went back: updated kept");
	/* Looking does not change the edge. */
	ASSERT_FLOAT_NEAR(b->memory.callee_failures, 20, 1e-9, "edge memory unchanged");
	ASSERT_EQ(b->memory.updated, WALL, "edge updated unchanged");

	/* Learning decays first, then adds. */
	feed(e, nm, 1, 200, 503, 6, WALL + HALF_LIFE);
	ASSERT_FLOAT_NEAR(b->memory.callee_failures, 11, 1e-9, "decayed then added: cf");
	ASSERT_FLOAT_NEAR(b->memory.both_failed, 10, 1e-9, "decayed then added: bf");
	ASSERT_FLOAT_NEAR(b->memory.calls, 11, 1e-9, "decayed then added: calls");
	ASSERT_EQ(b->memory.updated, WALL + HALF_LIFE, "updated");
	/* The monotonic clock does not decay the memory. */
	feed(e, nm, 1, 200, 200, 1e6, WALL + HALF_LIFE);
	ASSERT_FLOAT_NEAR(b->memory.callee_failures, 11, 1e-9, "same wall clock");

	/* A half-life of 0: no decay at all. */
	cfg.memory_half_life_s = 0;
	flat = edges__new(&cfg);
	if (ASSERT_OK_PTR(flat, "edges__new flat")) {
		feed(flat, nm, 4, 502, 503, 5, WALL);
		b = edge_b(flat);
		if (ASSERT_OK_PTR(b, "flat edge")) {
			m = edges__memory_at(flat, b, WALL + 1000000000);
			ASSERT_FLOAT_NEAR(m.callee_failures, 4, 1e-9, "no decay");
		}
	}
out:
	edges__free(flat);
	edges__free(e);
}

static bool class_is(struct edge_class c, enum claim_class cls, enum edge_source src, double ratio,
		     const char *what)
{
	bool ok = true;

	ok &= ASSERT_EQ(c.cls, cls, what);
	ok &= ASSERT_EQ(c.source, src, what);
	if (isnan(ratio))
		ok &= ASSERT_TRUE(isnan(c.ratio), what);
	else
		ok &= ASSERT_FLOAT_NEAR(c.ratio, ratio, 1e-9, what);
	return ok;
}

static void test_effective(struct names *nm)
{
	struct edges_config cfg = base_cfg;
	struct edges *e = edges__new(&cfg), *nomem = NULL, *mixed = NULL;
	struct edge *b;

	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	feed(e, nm, 20, 502, 503, 5, WALL);
	b = edge_b(e);
	if (!ASSERT_OK_PTR(b, "edge"))
		goto out;
	class_is(edges__effective(e, b, 50, WALL), CLAIM_CLASS_FAIL_CLOSE, EDGE_SRC_WINDOW, 1,
		 "window");
	class_is(edges__effective(e, b, 500, WALL), CLAIM_CLASS_FAIL_CLOSE, EDGE_SRC_MEMORY, 1,
		 "window empty: memory");
	class_is(edges__effective(e, b, 500, WALL + HALF_LIFE), CLAIM_CLASS_UNKNOWN, EDGE_SRC_NONE,
		 NAN, "memory decayed below min_failures");
	/* Below min_failures in the window, with a known memory. */
	feed(e, nm, 5, 502, 503, 500, WALL);
	class_is(edges__effective(e, b, 500, WALL), CLAIM_CLASS_FAIL_CLOSE, EDGE_SRC_MEMORY, 1,
		 "few in the window: memory");

	cfg.use_memory = false;
	nomem = edges__new(&cfg);
	if (ASSERT_OK_PTR(nomem, "edges__new nomem")) {
		feed(nomem, nm, 20, 502, 503, 5, WALL);
		b = edge_b(nomem);
		if (ASSERT_OK_PTR(b, "nomem edge")) {
			class_is(edges__effective(nomem, b, 50, WALL), CLAIM_CLASS_FAIL_CLOSE,
				 EDGE_SRC_WINDOW, 1, "no memory: window");
			class_is(edges__effective(nomem, b, 500, WALL), CLAIM_CLASS_UNKNOWN,
				 EDGE_SRC_NONE, NAN, "no memory: unknown");
			feed(nomem, nm, 3, 200, 503, 500, WALL);
			class_is(edges__effective(nomem, b, 500, WALL), CLAIM_CLASS_UNKNOWN,
				 EDGE_SRC_NONE, 0, "no memory: window ratio, unknown");
		}
	}

	mixed = edges__new(&base_cfg);
	if (ASSERT_OK_PTR(mixed, "edges__new mixed")) {
		/* Memory: fail-open; then a window that is ambiguous (0.5). */
		feed(mixed, nm, 40, 200, 503, 5, WALL);
		feed(mixed, nm, 10, 502, 503, 500, WALL);
		feed(mixed, nm, 10, 200, 503, 500, WALL);
		b = edge_b(mixed);
		if (ASSERT_OK_PTR(b, "mixed edge")) {
			class_is(edges__effective(mixed, b, 500, WALL), CLAIM_CLASS_FAIL_OPEN,
				 EDGE_SRC_MEMORY, 10.0 / 60, "ambiguous window: memory");
			/* A clear window wins over the memory. */
			feed(mixed, nm, 80, 502, 503, 510, WALL);
			class_is(edges__effective(mixed, b, 510, WALL), CLAIM_CLASS_FAIL_CLOSE,
				 EDGE_SRC_WINDOW, 90.0 / 100, "clear window beats memory");
		}
	}
out:
	edges__free(mixed);
	edges__free(nomem);
	edges__free(e);
}

/* A fleet that knows every edge as fail-close, ratio 0.95. */
static bool fleet_fail_close(void *ctx, const char *caller, const char *callee,
			     enum claim_class *cls, double *ratio)
{
	(void)caller;
	(void)callee;
	++*(int *)ctx;
	*cls = CLAIM_CLASS_FAIL_CLOSE;
	*ratio = 0.95;
	return true;
}

/* The fleet's class only where neither the window nor the memory has one. */
static void test_fleet(struct names *nm)
{
	struct edges_config cfg = base_cfg;
	struct edges *e;
	struct edge *b;
	int asked = 0;

	cfg.use_memory = false;
	e = edges__new(&cfg);
	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	edges__set_fallback(e, fleet_fail_close, &asked);
	feed(e, nm, 3, 502, 503, 5, WALL);
	b = edge_b(e);
	if (!ASSERT_OK_PTR(b, "edge"))
		goto out;
	class_is(edges__effective(e, b, 50, WALL), CLAIM_CLASS_FAIL_CLOSE, EDGE_SRC_FLEET, 0.95,
		 "3 failures here: the fleet's class");
	ASSERT_EQ(asked, 1, "the fleet was asked");
	/* Enough here, and fail-open: this host's window wins. */
	feed(e, nm, 30, 200, 503, 6, WALL);
	class_is(edges__effective(e, b, 50, WALL), CLAIM_CLASS_FAIL_OPEN, EDGE_SRC_WINDOW, 3.0 / 33,
		 "a local class beats the fleet's");
	ASSERT_EQ(asked, 1, "not asked when the window knows");
	edges__set_fallback(e, NULL, NULL);
	class_is(edges__effective(e, b, 500, WALL), CLAIM_CLASS_UNKNOWN, EDGE_SRC_NONE, NAN,
		 "no fleet, empty window: unknown");
out:
	edges__free(e);
}

static struct json_object *field(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!ASSERT_TRUE(json_object_object_get_ex(o, key, &v), key))
		printf("  missing field \"%s\"\n", key);
	return v;
}

static void expect_int(struct json_object *o, const char *key, long long want)
{
	struct json_object *v = field(o, key);

	if (ASSERT_TRUE(json_object_is_type(v, json_type_int), key))
		ASSERT_EQ(json_object_get_int64(v), want, key);
}

static void expect_double(struct json_object *o, const char *key, double want)
{
	struct json_object *v = field(o, key);

	if (ASSERT_TRUE(json_object_is_type(v, json_type_double), key))
		ASSERT_FLOAT_NEAR(json_object_get_double(v), want, 1e-9, key);
}

static void expect_null(struct json_object *o, const char *key)
{
	struct json_object *v = field(o, key);

	ASSERT_TRUE(v == NULL, key);
}

static void expect_str(struct json_object *o, const char *key, const char *want)
{
	struct json_object *v = field(o, key);

	if (ASSERT_TRUE(json_object_is_type(v, json_type_string), key))
		ASSERT_STREQ(json_object_get_string(v), want, key);
}

static void expect_bool(struct json_object *o, const char *key, bool want)
{
	struct json_object *v = field(o, key);

	if (ASSERT_TRUE(json_object_is_type(v, json_type_boolean), key))
		ASSERT_EQ(json_object_get_boolean(v), want, key);
}

static void test_json(struct names *nm)
{
	struct edges *e = edges__new(&base_cfg);
	struct json_object *arr = NULL, *o, *w, *m;
	struct claimd_ingress r;

	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	feed(e, nm, 20, 502, 503, 5, WALL);
	ingress(&r, 9000, 200, CLAIM_NONE, 0);
	egress(&r, B, FAIL(503));
	egress(&r, B, RETRY(200));
	egress(&r, C, OK(200));
	add_record(e, &r, nm, 5, WALL);
	ingress(&r, 9001, 200, CLAIM_NONE, 0);
	egress(&r, C, OK(200));
	add_record(e, &r, nm, 5, WALL);

	/* At one half-life: window fail-close, memory halved below min_failures. */
	arr = edges__json(e, 50, WALL + HALF_LIFE);
	if (!ASSERT_OK_PTR(arr, "edges json") ||
	    !ASSERT_EQ(json_object_array_length(arr), 3, "three edges"))
		goto out;
	o = json_object_array_get_idx(arr, 0);
	expect_str(o, "caller", CALLER);
	expect_str(o, "callee", B);
	expect_int(o, "calls", 22);
	expect_int(o, "callee_failures", 20);
	expect_int(o, "tied_failures", 20);
	expect_int(o, "both_failed", 20);
	expect_int(o, "retries", 1);
	expect_double(o, "ratio", 1);
	expect_str(o, "class", "fail-close");
	expect_str(o, "class_source", "window");
	ASSERT_EQ(json_object_object_length(o), 13, "edge fields");
	expect_bool(o, "root", false);
	w = field(o, "window");
	if (ASSERT_TRUE(json_object_is_type(w, json_type_object), "window object")) {
		expect_int(w, "seconds", 100);
		expect_int(w, "calls", 22);
		expect_int(w, "callee_failures", 20);
		expect_int(w, "tied_failures", 20);
		expect_int(w, "both_failed", 20);
		expect_int(w, "retries", 1);
		expect_double(w, "ratio", 1);
		expect_str(w, "class", "fail-close");
		ASSERT_EQ(json_object_object_length(w), 8, "window fields");
	}
	m = field(o, "memory");
	if (ASSERT_TRUE(json_object_is_type(m, json_type_object), "memory object")) {
		expect_double(m, "calls", 11);
		expect_double(m, "callee_failures", 10);
		expect_double(m, "both_failed", 10);
		expect_double(m, "ratio", 1);
		expect_str(m, "class", "unknown");
		expect_bool(m, "used", true);
		ASSERT_EQ(json_object_object_length(m), 6, "memory fields");
	}

	/* Sorted by caller, then callee; no failures: ratios are null. */
	o = json_object_array_get_idx(arr, 1);
	expect_str(o, "caller", CALLER);
	expect_str(o, "callee", C);
	expect_int(o, "calls", 1);
	expect_int(o, "callee_failures", 0);
	expect_null(o, "ratio");
	expect_str(o, "class", "unknown");
	expect_str(o, "class_source", "none");
	w = field(o, "window");
	if (w) {
		expect_null(w, "ratio");
		expect_str(w, "class", "unknown");
	}
	m = field(o, "memory");
	if (m) {
		expect_null(m, "ratio");
		expect_double(m, "calls", 0.5);
	}
	o = json_object_array_get_idx(arr, 2);
	expect_str(o, "caller", "front:9001");
	expect_str(o, "callee", C);
	json_object_put(arr);

	/* Later, at the same wall clock: the class comes from the memory. */
	arr = edges__json(e, 500, WALL);
	if (!ASSERT_OK_PTR(arr, "edges json later"))
		goto out;
	o = json_object_array_get_idx(arr, 0);
	expect_str(o, "class", "fail-close");
	expect_str(o, "class_source", "memory");
	expect_double(o, "ratio", 1);
	expect_int(o, "calls", 22);
	w = field(o, "window");
	if (w) {
		expect_int(w, "calls", 0);
		expect_null(w, "ratio");
		expect_str(w, "class", "unknown");
	}
	m = field(o, "memory");
	if (m) {
		expect_double(m, "callee_failures", 20);
		expect_str(m, "class", "fail-close");
	}
out:
	json_object_put(arr);
	edges__free(e);
}

/*
 * Ingresses claimd cannot fully follow teach nothing about edges: framing
 * lost on a connection the thread used (CLAIMD_IN_BLIND), a call not tied
 * (CLAIMD_IN_UNTIED), its own answer lost (CLAIMD_IN_LOST), or the kernel's
 * rules saying so; their failures count as unknown, by reason, whatever
 * verdict the record carries. A call whose answer was lost is a call,
 * neither failed nor fine.
 */
static void test_blind(struct names *nm)
{
	static const struct {
		__u32 flags;
		__u8 rule;
		enum claim_rule reason;
	} blind[] = {
		{ CLAIMD_IN_BLIND, CLAIM_RULE_NONE, CLAIM_RULE_FRAMING_LOST },
		{ CLAIMD_IN_UNTIED, CLAIM_RULE_NONE, CLAIM_RULE_UNTIED_CALL },
		{ CLAIMD_IN_LOST, CLAIM_RULE_NONE, CLAIM_RULE_FRAMING_LOST },
		{ 0, CLAIM_RULE_FRAMING_LOST, CLAIM_RULE_FRAMING_LOST },
		{ 0, CLAIM_RULE_UNTIED_CALL, CLAIM_RULE_UNTIED_CALL },
		{ CLAIMD_IN_BLIND, CLAIM_RULE_UNTIED_CALL, CLAIM_RULE_UNTIED_CALL },
	};
	struct edges *e = edges__new(&base_cfg);
	struct claimd_ingress r;
	struct edge *ed;
	struct service_stats *s;
	size_t i;
	int n = 0;

	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	for (i = 0; i < sizeof(blind) / sizeof(blind[0]); i++) {
		/* A confident-looking verdict on a record that cannot carry one. */
		ingress(&r, 9000, 502, CLAIM_UNCLAIMED, blind[i].flags);
		r.rule = blind[i].rule;
		egress(&r, B, FAIL(503));
		add_record(e, &r, nm, 5, WALL);
		/* ... and one that did not fail: nothing learned either. */
		ingress(&r, 9000, 200, CLAIM_NONE, blind[i].flags);
		r.rule = blind[i].rule;
		egress(&r, B, FAIL(503));
		add_record(e, &r, nm, 5, WALL);
	}
	/* Their calls count; none teaches the class (no tied failure, no both_failed). */
	edges__for_each(e, count_edge, &n);
	ASSERT_EQ(n, 1, "the calls' edge");
	ed = edge_b(e);
	if (ASSERT_OK_PTR(ed, "edge to B")) {
		counts_are(&ed->total, 2 * sizeof(blind) / sizeof(blind[0]),
			   2 * sizeof(blind) / sizeof(blind[0]), 0, 0,
			   "B: calls of blind ingresses");
		ASSERT_EQ(ed->total.tied_failures, 0, "B: taught nothing");
	}
	s = service(e, CALLER, NULL);
	if (ASSERT_OK_PTR(s, "service counted")) {
		ASSERT_EQ(s->requests, 2 * sizeof(blind) / sizeof(blind[0]), "requests");
		/* ... but a 200 whose answer was lost (CLAIMD_IN_LOST) is no
		 * success: judged, unknown (headers/outcome.h). */
		ASSERT_EQ(s->failures, sizeof(blind) / sizeof(blind[0]) + 1, "failures");
		ASSERT_EQ(s->unknown, sizeof(blind) / sizeof(blind[0]) + 1, "all unknown");
		ASSERT_EQ(s->claimed + s->unclaimed, 0, "no confident verdict");
	}
	ASSERT_EQ(edges__unknown_verdicts(e, CLAIM_RULE_FRAMING_LOST), 4, "framing-lost");
	ASSERT_EQ(edges__unknown_verdicts(e, CLAIM_RULE_UNTIED_CALL), 3, "untied-call");
	ASSERT_EQ(edges__unknown_verdicts(e, CLAIM_RULE_MULTIPLEXED), 0, "multiplexed");
	/* The older reasons are counted by the kernel's rule, else by the flags. */
	ingress(&r, 9000, 502, CLAIM_UNKNOWN, CLAIMD_IN_MUX);
	r.rule = CLAIM_RULE_MULTIPLEXED;
	add_record(e, &r, nm, 5, WALL);
	ingress(&r, 9000, 502, CLAIM_UNKNOWN, CLAIMD_IN_NOCTX);
	add_record(e, &r, nm, 5, WALL);
	ingress(&r, 9000, 502, CLAIM_NONE, 0);
	add_record(e, &r, nm, 5, WALL);
	ASSERT_EQ(edges__unknown_verdicts(e, CLAIM_RULE_MULTIPLEXED), 1, "multiplexed, by rule");
	ASSERT_EQ(edges__unknown_verdicts(e, CLAIM_RULE_NO_LOG), 1, "no-egress-log, by flag");
	ASSERT_EQ(edges__unknown_verdicts(e, CLAIM_RULE_NONE), 1, "other");
	edges__free(e);

	/* A plain ingress with a lost call: the call counts, its outcome does not. */
	e = edges__new(&base_cfg);
	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	ingress(&r, 9000, 502, CLAIM_UNCLAIMED, 0);
	egress(&r, B, 0, CLAIMD_EG_DONE | CLAIMD_EG_LOST);
	add_record(e, &r, nm, 5, WALL);
	if (ASSERT_OK_PTR(edge_b(e), "edge with a lost call"))
		counts_are(&edge_b(e)->total, 1, 0, 0, 0, "lost call");
	edges__free(e);
}

/* Root edges: counted apart from service edges, never classified, never in memory. */
static void test_root_edges(struct names *nm)
{
	struct edge_counts d = {
		.calls = 30, .callee_failures = 25, .both_failed = 25, .retries = 3
	};
	struct edges *e = edges__new(&base_cfg);
	struct json_object *arr = NULL, *o;
	struct edge *root, *svc;
	struct edge_class c;
	size_t i;
	int n = 0;

	if (!ASSERT_OK_PTR(e, "edges__new"))
		return;
	feed(e, nm, 20, 200, 503, 5, WALL); /* CALLER -> B: fail-open, 20 callee failures */
	root = edges__add_root(e, CALLER, B, &d, 5);
	svc = edge_b(e);
	if (!ASSERT_OK_PTR(root, "root edge") || !ASSERT_OK_PTR(svc, "service edge"))
		goto out;
	ASSERT_TRUE(root != svc, "the same names, two edges");
	ASSERT_TRUE(edges__find_root(e, CALLER, B) == root, "found as a root edge");
	ASSERT_TRUE(root->root && !svc->root, "marked");
	counts_are(&root->total, 30, 25, 0, 3, "root: no both_failed");
	counts_are(&svc->total, 20, 20, 0, 0, "the service edge untouched");
	ASSERT_FALSE(root->in_memory, "no memory for a root edge");
	c = edges__effective(e, root, 5, WALL);
	ASSERT_EQ(c.cls, CLAIM_CLASS_UNKNOWN, "root: no class");
	ASSERT_TRUE(isnan(c.ratio), "root: no ratio");
	c = edges__effective(e, svc, 5, WALL);
	ASSERT_EQ(c.cls, CLAIM_CLASS_FAIL_OPEN, "the service edge keeps its class");
	edges__for_each(e, count_edge, &n);
	ASSERT_EQ(n, 2, "both visited");
	arr = edges__json(e, 5, WALL);
	if (!ASSERT_EQ(json_object_array_length(arr), 2, "two in JSON"))
		goto out;
	for (i = 0; i < 2; i++) {
		o = json_object_array_get_idx(arr, i);
		expect_bool(o, "root", i == 1); /* after the service edge of the same names */
		if (i == 1) {
			expect_null(o, "ratio");
			expect_str(o, "class", "unknown");
			expect_int(o, "calls", 30);
			expect_int(o, "callee_failures", 25);
			expect_int(o, "both_failed", 0);
			expect_int(o, "retries", 3);
			expect_null(o, "memory");
			expect_null(field(o, "window"), "ratio");
		}
	}
out:
	json_object_put(arr);
	edges__free(e);
}

static void test_find_get(void)
{
	struct edges *e = edges__new(&base_cfg);
	char *big = malloc(300);
	struct edge *ed;
	int n = 0;

	if (!ASSERT_OK_PTR(e, "edges__new") || !ASSERT_OK_PTR(big, "malloc"))
		goto out;
	ASSERT_TRUE(edges__find(e, "a", "b") == NULL, "not there");
	ed = edges__get(e, "a", "b");
	if (ASSERT_OK_PTR(ed, "made")) {
		ASSERT_STREQ(ed->caller, "a", "caller");
		ASSERT_STREQ(ed->callee, "b", "callee");
		ASSERT_FALSE(ed->in_memory, "no memory yet");
		ASSERT_EQ(ed->total.calls, 0, "no calls yet");
	}
	ASSERT_TRUE(edges__get(e, "a", "b") == ed, "same edge again");
	ASSERT_TRUE(edges__find(e, "a", "b") == ed, "found");
	/* "ab" -> "" and "a" -> "b" are different pairs. */
	ASSERT_TRUE(edges__find(e, "ab", "") == NULL, "pair boundary");
	ASSERT_TRUE(edges__get(e, "ab", "") != ed, "other pair");
	memset(big, 'x', 299);
	big[299] = 0;
	ASSERT_TRUE(edges__get(e, big, big) == NULL, "names too long for a key");
	edges__for_each(e, count_edge, &n);
	ASSERT_EQ(n, 2, "two edges");
	ASSERT_EQ(edges__config(e)->window_s, 100, "config kept");
out:
	free(big);
	edges__free(e);
}

void test_edges(void)
{
	struct names *nm = names__new();

	if (!ASSERT_OK_PTR(nm, "names__new"))
		return;
	if (test__start_subtest("classify"))
		test_classify();
	if (test__start_subtest("counts"))
		test_counts(nm);
	if (test__start_subtest("per_ingress_callee"))
		test_per_ingress(nm);
	if (test__start_subtest("retries"))
		test_retries(nm);
	if (test__start_subtest("mux_noctx"))
		test_mux_noctx(nm);
	if (test__start_subtest("services"))
		test_services(nm);
	if (test__start_subtest("window"))
		test_window(nm);
	if (test__start_subtest("memory"))
		test_memory(nm);
	if (test__start_subtest("effective"))
		test_effective(nm);
	if (test__start_subtest("json"))
		test_json(nm);
	if (test__start_subtest("fleet"))
		test_fleet(nm);
	if (test__start_subtest("find_get"))
		test_find_get();
	if (test__start_subtest("blind"))
		test_blind(nm);
	if (test__start_subtest("root_edges"))
		test_root_edges(nm);
	if (test__start_subtest("default_window")) {
		struct edges_config cfg = base_cfg;
		struct edges *e;

		cfg.window_s = 0;
		e = edges__new(&cfg);
		if (ASSERT_OK_PTR(e, "edges__new")) {
			ASSERT_EQ(edges__config(e)->window_s, 300, "default 300 s");
			feed(e, nm, 1, 502, 503, 1, WALL);
			if (ASSERT_OK_PTR(edge_b(e), "edge")) {
				struct edge_counts w;

				edges__window(e, edge_b(e), 299, &w);
				ASSERT_EQ(w.calls, 1, "in a 300 s window");
				edges__window(e, edge_b(e), 300, &w);
				ASSERT_EQ(w.calls, 0, "out of it at 300");
			}
			edges__free(e);
		}
	}
	names__free(nm);
}
