// SPDX-License-Identifier: GPL-2.0
/* Edges, their ratios and classes, and per-service counts; see edges.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/edges.h"
#include "hashtab.h"
#include "model/names.h"
#include "counts.h"
#include "outcome.h"
#include "verdict_names.h"

struct edges {
	struct edges_config cfg;
	struct hashtab *by_pair;	     /* "caller\0callee" -> struct edge */
	struct hashtab *roots;		     /* "caller\0callee" -> struct edge, root callers' */
	struct hashtab *services;	     /* name -> struct service_stats */
	double bucket_len;		     /* seconds per window bucket */
	uint64_t unknown[CLAIM_RULE__COUNT]; /* failed, verdict unknown, by reason */
	uint64_t changes;		     /* counts learned: edges__changes */
	edges_fallback_fn fallback; /* the fleet's class, when neither window nor memory has one */
	void *fallback_ctx;
};

void edges__set_fallback(struct edges *e, edges_fallback_fn fn, void *ctx)
{
	e->fallback = fn;
	e->fallback_ctx = ctx;
}

struct edges *edges__new(const struct edges_config *cfg)
{
	struct edges *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->cfg = *cfg;
	if (!e->cfg.window_s)
		e->cfg.window_s = 300;
	e->bucket_len = (double)e->cfg.window_s / EDGES_WINDOW_BUCKETS;
	e->by_pair = hashtab__new();
	e->roots = hashtab__new();
	e->services = hashtab__new();
	if (!e->by_pair || !e->roots || !e->services) {
		edges__free(e);
		return NULL;
	}
	return e;
}

static void edge_free(struct edge *ed)
{
	free(ed->caller);
	free(ed->callee);
	free(ed);
}

static int free_edge(const struct hashtab_entry *he, void *ctx)
{
	(void)ctx;
	edge_free(he->value);
	return 0;
}

static int free_service(const struct hashtab_entry *he, void *ctx)
{
	struct service_stats *s = he->value;

	(void)ctx;
	free(s->name);
	free(s);
	return 0;
}

void edges__free(struct edges *e)
{
	if (!e)
		return;
	if (e->by_pair)
		hashtab__for_each(e->by_pair, free_edge, NULL);
	if (e->roots)
		hashtab__for_each(e->roots, free_edge, NULL);
	if (e->services)
		hashtab__for_each(e->services, free_service, NULL);
	hashtab__free(e->by_pair);
	hashtab__free(e->roots);
	hashtab__free(e->services);
	free(e);
}

const struct edges_config *edges__config(const struct edges *e)
{
	return &e->cfg;
}

enum claim_class edges__classify(double callee_failures, double both_failed,
				 unsigned int min_failures)
{
	double ratio;

	if (callee_failures <= 0 || callee_failures < min_failures)
		return CLAIM_CLASS_UNKNOWN;
	ratio = both_failed / callee_failures;
	if (ratio >= 0.8)
		return CLAIM_CLASS_FAIL_CLOSE;
	if (ratio <= 0.2)
		return CLAIM_CLASS_FAIL_OPEN;
	return CLAIM_CLASS_UNKNOWN;
}

size_t edges__pair_key(const char *caller, const char *callee, char *buf, size_t len)
{
	size_t a = strlen(caller), b = strlen(callee);

	if (a + b + 2 > len)
		return 0;
	memcpy(buf, caller, a + 1);
	memcpy(buf + a + 1, callee, b + 1);
	return a + b + 2;
}

static struct edge *edge_find(struct hashtab *h, const char *caller, const char *callee)
{
	char key[512];
	size_t n = edges__pair_key(caller, callee, key, sizeof(key));

	return n ? hashtab__get(h, key, n) : NULL;
}

static struct edge *edge_get(struct hashtab *h, const char *caller, const char *callee, bool root)
{
	char key[512];
	size_t n = edges__pair_key(caller, callee, key, sizeof(key));
	struct edge *ed;
	int err;

	if (!n)
		return NULL;
	ed = hashtab__get(h, key, n);
	if (ed)
		return ed;
	ed = calloc(1, sizeof(*ed));
	if (!ed)
		return NULL;
	ed->root = root;
	ed->caller = strdup(caller);
	ed->callee = strdup(callee);
	if (!ed->caller || !ed->callee) {
		edge_free(ed);
		return NULL;
	}
	hashtab__put(h, key, n, ed, &err);
	if (err) {
		edge_free(ed);
		return NULL;
	}
	return ed;
}

struct edge *edges__find(struct edges *e, const char *caller, const char *callee)
{
	return edge_find(e->by_pair, caller, callee);
}

struct edge *edges__get(struct edges *e, const char *caller, const char *callee)
{
	return edge_get(e->by_pair, caller, callee, false);
}

struct edge *edges__find_root(struct edges *e, const char *caller, const char *callee)
{
	return edge_find(e->roots, caller, callee);
}

static struct service_stats *service_get(struct edges *e, const char *name)
{
	struct service_stats *s = hashtab__get(e->services, name, strlen(name));

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->name = strdup(name);
	if (!s->name) {
		free(s);
		return NULL;
	}
	hashtab__put(e->services, name, strlen(name), s, NULL);
	return s;
}

/* The bucket for time now, emptied if it last held an older slice. */
static struct edge_counts *bucket_at(const struct edges *e, struct edge *ed, double now)
{
	uint64_t epoch = (uint64_t)(now / e->bucket_len);
	int i = epoch % EDGES_WINDOW_BUCKETS;

	if (ed->bucket_epoch[i] != epoch) {
		memset(&ed->bucket[i], 0, sizeof(ed->bucket[i]));
		ed->bucket_epoch[i] = epoch;
	}
	return &ed->bucket[i];
}

void edges__window(const struct edges *e, const struct edge *ed, double now,
		   struct edge_counts *out)
{
	uint64_t epoch = (uint64_t)(now / e->bucket_len);
	int i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < EDGES_WINDOW_BUCKETS; i++) {
		if (ed->bucket_epoch[i] + EDGES_WINDOW_BUCKETS <= epoch ||
		    ed->bucket_epoch[i] > epoch)
			continue; /* older than the window */
		out->calls += ed->bucket[i].calls;
		out->callee_failures += ed->bucket[i].callee_failures;
		out->both_failed += ed->bucket[i].both_failed;
		out->retries += ed->bucket[i].retries;
		out->tied_failures += ed->bucket[i].tied_failures;
	}
}

struct edge_memory edges__memory_at(const struct edges *e, const struct edge *ed, time_t wall)
{
	struct edge_memory m = ed->memory;
	double f;

	if (wall > m.updated && e->cfg.memory_half_life_s > 0) {
		f = exp2(-(double)(wall - m.updated) / e->cfg.memory_half_life_s);
		m.calls *= f;
		m.callee_failures *= f;
		m.both_failed *= f;
		m.updated = wall;
	}
	return m;
}

static void add_counts(struct edge_counts *c, const struct edge_counts *d)
{
	c->calls += d->calls;
	c->callee_failures += d->callee_failures;
	c->both_failed += d->both_failed;
	c->retries += d->retries;
	c->tied_failures += d->tied_failures;
}

static void learn(struct edges *e, struct edge *ed, const struct edge_counts *d, double now,
		  time_t wall)
{
	add_counts(&ed->total, d);
	add_counts(bucket_at(e, ed, now), d);
	ed->memory = edges__memory_at(e, ed, wall);
	if (!ed->in_memory)
		ed->memory.updated = wall;
	ed->memory.calls += d->calls;
	/* The memory keeps the ratio's terms: the failures of requests that teach. */
	ed->memory.callee_failures += d->tied_failures;
	ed->memory.both_failed += d->both_failed;
	ed->in_memory = true;
}

struct edge *edges__add_root(struct edges *e, const char *caller, const char *callee,
			     const struct edge_counts *d, double now)
{
	struct edge *ed = edge_get(e->roots, caller, callee, true);
	struct edge_counts c = *d;

	if (!ed)
		return NULL;
	c.both_failed = 0; /* no request of the caller that could fail with it */
	add_counts(&ed->total, &c);
	add_counts(bucket_at(e, ed, now), &c);
	return ed;
}

uint64_t edges__unknown_verdicts(const struct edges *e, enum claim_rule rule)
{
	return (unsigned int)rule < CLAIM_RULE__COUNT ? e->unknown[rule] : 0;
}

void edges__learn(struct edges *e, struct edge *ed, const struct edge_counts *d, double now,
		  time_t wall)
{
	learn(e, ed, d, now, wall);
	e->changes++;
}

struct service_stats *edges__service(struct edges *e, const char *name)
{
	return service_get(e, name);
}

void edges__count_requests(struct edges *e, struct service_stats *s,
			   const struct claimd_service_counts *d)
{
	int rule;

	s->requests += d->requests;
	s->failures += d->failures;
	s->claimed += d->claimed;
	s->unclaimed += d->unclaimed;
	s->unknown += d->unknown;
	s->multiplexed += d->multiplexed;
	s->goroutine += d->goroutine;
	s->tied_id += d->tied_id;
	s->tied_relay += d->tied_relay;
	s->tied_nginx += d->tied_nginx;
	s->tied_node += d->tied_node;
	for (rule = 0; rule < CLAIM_RULE__COUNT; rule++)
		e->unknown[rule] += d->unknown_by[rule];
	e->changes++;
}

uint64_t edges__changes(const struct edges *e)
{
	return e->changes;
}

/*
 * What of a record the kernel could not count (headers/counts.h): the
 * request, if its service's counters were full, and the calls whose edges'
 * counters were.
 */
void edges__add_ingress(struct edges *e, const struct claimd_ingress *r, struct names *names,
			double now, time_t wall)
{
	const char *caller = names__service(names, r->tgid, r->local.port, r->comm);
	const char *callees[CLAIMD_EGRESS_MAX];
	struct claimd_edge_counts d[CLAIMD_EGRESS_MAX];
	bool failed = outcome_judged(outcome_of_request(r->status, r->flags, e->cfg.fail_status));
	struct service_stats *s = service_get(e, caller);
	int n = r->n_egress < CLAIMD_EGRESS_MAX ? r->n_egress : CLAIMD_EGRESS_MAX;
	struct retry_walk walk = { 0 };
	int ncallees = 0, i, j;
	bool teaches;

	if (s && (r->flags & CLAIMD_IN_UNCOUNTED)) {
		struct claimd_service_counts one = { 0 };

		counts_add_request(&one, r->status, r->flags, r->verdict, r->rule,
				   e->cfg.fail_status);
		edges__count_requests(e, s, &one);
	}
	/*
	 * A service that serves several requests at once on a thread teaches no
	 * class, but by the requests it keys (their calls tied by id or relay).
	 */
	teaches = counts_teaches_edges(r->rule, r->flags, r->egress_dropped) &&
		  !(s && s->multiplexed && !(r->flags & CLAIMD_IN_KEYED));
	memset(d, 0, sizeof(d));
	for (i = n - 1; i >= 0; i--) {
		const struct claimd_egress *x = &r->egress[i];
		const char *callee;
		int callee_failed =
			retry_walk__failed(&walk, x->status, x->flags, e->cfg.fail_status);

		if (!(x->flags & CLAIMD_EG_UNCOUNTED))
			continue;
		callee = names__callee(names, &x->callee);
		for (j = 0; j < ncallees; j++)
			if (!strcmp(callees[j], callee))
				break;
		if (j == ncallees)
			callees[ncallees++] = callee;
		counts_add_call(&d[j], 1, callee_failed, failed, teaches, x->flags);
	}
	for (j = 0; j < ncallees; j++) {
		struct edge *ed = edges__get(e, caller, callees[j]);
		struct edge_counts c = { .calls = d[j].calls,
					 .callee_failures = d[j].callee_failures,
					 .both_failed = d[j].both_failed,
					 .retries = d[j].retries,
					 .tied_failures = d[j].tied_failures };

		if (ed)
			edges__learn(e, ed, &c, now, wall);
	}
}

struct edge_class edges__effective(const struct edges *e, const struct edge *ed, double now,
				   time_t wall)
{
	struct edge_class c = { CLAIM_CLASS_UNKNOWN, EDGE_SRC_NONE, NAN };
	enum claim_class fc;
	struct edge_counts w;
	struct edge_memory m;
	double fr;

	if (ed->root)
		return c; /* no ratio: the caller serves no request that could fail */
	edges__window(e, ed, now, &w);
	if (w.tied_failures)
		c.ratio = (double)w.both_failed / w.tied_failures;
	c.cls = edges__classify(w.tied_failures, w.both_failed, e->cfg.min_failures);
	if (c.cls != CLAIM_CLASS_UNKNOWN) {
		c.source = EDGE_SRC_WINDOW;
		return c;
	}
	if (e->cfg.use_memory && ed->in_memory) {
		m = edges__memory_at(e, ed, wall);
		c.cls = edges__classify(m.callee_failures, m.both_failed, e->cfg.min_failures);
		if (c.cls != CLAIM_CLASS_UNKNOWN) {
			c.source = EDGE_SRC_MEMORY;
			c.ratio = m.both_failed / m.callee_failures;
			return c;
		}
	}
	if (e->fallback && e->fallback(e->fallback_ctx, ed->caller, ed->callee, &fc, &fr)) {
		c.cls = fc;
		c.source = EDGE_SRC_FLEET;
		c.ratio = fr;
	}
	return c;
}

struct visit {
	void (*edge_fn)(struct edge *ed, void *ctx);
	void (*svc_fn)(struct service_stats *s, void *ctx);
	void *ctx;
};

static int visit_edge(const struct hashtab_entry *he, void *arg)
{
	struct visit *v = arg;

	v->edge_fn(he->value, v->ctx);
	return 0;
}

static int visit_service(const struct hashtab_entry *he, void *arg)
{
	struct visit *v = arg;

	v->svc_fn(he->value, v->ctx);
	return 0;
}

void edges__for_each(const struct edges *e, void (*fn)(struct edge *ed, void *ctx), void *ctx)
{
	struct visit v = { .edge_fn = fn, .ctx = ctx };

	hashtab__for_each(e->by_pair, visit_edge, &v);
	hashtab__for_each(e->roots, visit_edge, &v);
}

void edges__for_each_service(const struct edges *e, void (*fn)(struct service_stats *s, void *ctx),
			     void *ctx)
{
	struct visit v = { .svc_fn = fn, .ctx = ctx };

	hashtab__for_each(e->services, visit_service, &v);
}

static struct json_object *ratio_json(double cf, double bf)
{
	return cf > 0 ? json_object_new_double(bf / cf) : NULL;
}

struct json_ctx {
	const struct edges *e;
	struct json_object *arr;
	double now;
	time_t wall;
};

const char *edges__source_name(enum edge_source s)
{
	return s == EDGE_SRC_WINDOW   ? "window"
	       : s == EDGE_SRC_MEMORY ? "memory"
	       : s == EDGE_SRC_FLEET  ? "fleet"
				      : "none";
}

static void edge_json(struct edge *ed, void *arg)
{
	struct json_ctx *j = arg;
	struct json_object *o = json_object_new_object(), *w = json_object_new_object();
	struct json_object *m = json_object_new_object();
	struct edge_class c = edges__effective(j->e, ed, j->now, j->wall);
	unsigned int minf = j->e->cfg.min_failures;
	struct edge_counts wc;
	struct edge_memory mem = edges__memory_at(j->e, ed, j->wall);

	edges__window(j->e, ed, j->now, &wc);
	json_object_object_add(o, "caller", json_object_new_string(ed->caller));
	json_object_object_add(o, "callee", json_object_new_string(ed->callee));
	json_object_object_add(o, "calls", json_object_new_uint64(ed->total.calls));
	json_object_object_add(o, "callee_failures",
			       json_object_new_uint64(ed->total.callee_failures));
	json_object_object_add(o, "tied_failures", json_object_new_uint64(ed->total.tied_failures));
	json_object_object_add(o, "both_failed", json_object_new_uint64(ed->total.both_failed));
	json_object_object_add(o, "retries", json_object_new_uint64(ed->total.retries));
	json_object_object_add(o, "ratio", isnan(c.ratio) ? NULL : json_object_new_double(c.ratio));
	json_object_object_add(o, "class", json_object_new_string(verdict__class_name(c.cls)));
	json_object_object_add(o, "class_source",
			       json_object_new_string(edges__source_name(c.source)));
	/* A root caller's edge: counted, never classified (ratio null, class unknown). */
	json_object_object_add(o, "root", json_object_new_boolean(ed->root));

	json_object_object_add(w, "seconds", json_object_new_int(j->e->cfg.window_s));
	json_object_object_add(w, "calls", json_object_new_uint64(wc.calls));
	json_object_object_add(w, "callee_failures", json_object_new_uint64(wc.callee_failures));
	json_object_object_add(w, "tied_failures", json_object_new_uint64(wc.tied_failures));
	json_object_object_add(w, "both_failed", json_object_new_uint64(wc.both_failed));
	json_object_object_add(w, "retries", json_object_new_uint64(wc.retries));
	json_object_object_add(w, "ratio",
			       ed->root ? NULL : ratio_json(wc.tied_failures, wc.both_failed));
	json_object_object_add(
		w, "class",
		json_object_new_string(verdict__class_name(
			ed->root ? CLAIM_CLASS_UNKNOWN
				 : edges__classify(wc.tied_failures, wc.both_failed, minf))));
	json_object_object_add(o, "window", w);
	if (ed->root) {
		json_object_put(m);
		json_object_object_add(o, "memory", NULL);
		json_object_array_add(j->arr, o);
		return;
	}

	json_object_object_add(m, "calls", json_object_new_double(mem.calls));
	json_object_object_add(m, "callee_failures", json_object_new_double(mem.callee_failures));
	json_object_object_add(m, "both_failed", json_object_new_double(mem.both_failed));
	json_object_object_add(m, "ratio", ratio_json(mem.callee_failures, mem.both_failed));
	json_object_object_add(m, "class",
			       json_object_new_string(verdict__class_name(edges__classify(
				       mem.callee_failures, mem.both_failed, minf))));
	json_object_object_add(m, "used", json_object_new_boolean(j->e->cfg.use_memory));
	json_object_object_add(o, "memory", m);
	json_object_array_add(j->arr, o);
}

static const char *key_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static int by_caller_callee(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a;
	struct json_object *y = *(struct json_object *const *)b;
	struct json_object *rx = NULL, *ry = NULL;
	int c = strcmp(key_str(x, "caller"), key_str(y, "caller"));

	if (!c)
		c = strcmp(key_str(x, "callee"), key_str(y, "callee"));
	if (c)
		return c;
	json_object_object_get_ex(x, "root", &rx);
	json_object_object_get_ex(y, "root", &ry);
	return json_object_get_boolean(rx) - json_object_get_boolean(ry);
}

struct json_object *edges__json(const struct edges *e, double now, time_t wall)
{
	struct json_ctx j = { e, json_object_new_array(), now, wall };

	edges__for_each(e, edge_json, &j);
	json_object_array_sort(j.arr, by_caller_callee);
	return j.arr;
}

/*
 * How its requests are followed: per thread, per goroutine (Go), nginx's
 * by its probe, Node.js's by its async context, an event loop's by the ids its calls carry or as their
 * relay (the tier that tied most), or not at all (multiplexed).
 */
static const char *service_mode(const struct service_stats *s)
{
	if (s->tied_nginx >= s->tied_id + s->tied_relay && s->tied_nginx)
		return "nginx";
	if (s->tied_node >= s->tied_id + s->tied_relay && s->tied_node)
		return "node";
	if (s->tied_id || s->tied_relay)
		return s->tied_id >= s->tied_relay ? "request-id" : "relay";
	if (s->multiplexed)
		return "multiplexed";
	return s->goroutine ? "goroutine" : "per-thread";
}

static void service_json(struct service_stats *s, void *arg)
{
	struct json_object *arr = arg, *o = json_object_new_object();

	json_object_object_add(o, "service", json_object_new_string(s->name));
	json_object_object_add(o, "requests", json_object_new_uint64(s->requests));
	json_object_object_add(o, "failures", json_object_new_uint64(s->failures));
	/* Keyed by verdict name: metrics.c reads them back by the same names. */
	json_object_object_add(o, verdict__name(CLAIM_CLAIMED), json_object_new_uint64(s->claimed));
	json_object_object_add(o, verdict__name(CLAIM_UNCLAIMED),
			       json_object_new_uint64(s->unclaimed));
	json_object_object_add(o, verdict__name(CLAIM_UNKNOWN), json_object_new_uint64(s->unknown));
	json_object_object_add(o, "multiplexed", json_object_new_uint64(s->multiplexed));
	/* One thread juggling requests: counted, kept out of edges and verdicts. */
	json_object_object_add(o, "goroutine", json_object_new_uint64(s->goroutine));
	json_object_object_add(o, "tied_by_request_id", json_object_new_uint64(s->tied_id));
	json_object_object_add(o, "tied_as_relay", json_object_new_uint64(s->tied_relay));
	json_object_object_add(o, "tied_by_nginx", json_object_new_uint64(s->tied_nginx));
	json_object_object_add(o, "tied_by_node", json_object_new_uint64(s->tied_node));
	json_object_object_add(o, "mode", json_object_new_string(service_mode(s)));
	json_object_array_add(arr, o);
}

static int by_service(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a;
	struct json_object *y = *(struct json_object *const *)b;

	return strcmp(key_str(x, "service"), key_str(y, "service"));
}

struct json_object *edges__services_json(const struct edges *e)
{
	struct json_object *arr = json_object_new_array();

	edges__for_each_service(e, service_json, arr);
	json_object_array_sort(arr, by_service);
	return arr;
}
