// SPDX-License-Identifier: GPL-2.0
/* Retry-storm arithmetic, decisions and the walk over a graph; see storm.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "storm.h"

/* (1.1)^3 is 1.3310000000000004 in doubles: a slack of 1.331 must hold it. */
#define REL_EPS 1e-9

static bool within(double fanout, double slack)
{
	return fanout <= slack * (1 + REL_EPS);
}

double storm__fanout(const double *r, int hops)
{
	double f = 1;
	int i;

	for (i = 0; i < hops; i++)
		f *= 1 + r[i];
	return f;
}

double storm__fanout_uniform(double r, int hops)
{
	return pow(1 + r, hops);
}

enum storm_decision storm__decide(double fanout, const struct storm_policy *p)
{
	if (p->deadline)
		return STORM_DEADLINE_BOUNDED;
	if (p->shared_budget >= 0)
		return within(1 + p->shared_budget, p->slack) ? STORM_SAFE : STORM_DO_NOT_SHIP;
	if (fanout <= 1)
		return STORM_SAFE;
	return within(fanout, p->slack) ? STORM_DEGRADED : STORM_DO_NOT_SHIP;
}

const char *storm__decision_name(enum storm_decision d)
{
	switch (d) {
	case STORM_SAFE:
		return "safe";
	case STORM_DEGRADED:
		return "degraded";
	case STORM_DO_NOT_SHIP:
		return "do-not-ship";
	case STORM_DEADLINE_BOUNDED:
		return "deadline-bounded";
	}
	return "?";
}

enum storm_decision storm__worse(enum storm_decision a, enum storm_decision b)
{
	/* safe < deadline-bounded < degraded < do-not-ship */
	static const int rank[] = { [STORM_SAFE] = 0,
				    [STORM_DEADLINE_BOUNDED] = 1,
				    [STORM_DEGRADED] = 2,
				    [STORM_DO_NOT_SHIP] = 3 };

	return rank[a] >= rank[b] ? a : b;
}

int storm__radius(const double *r, int hops)
{
	int i, run = 0, best = 0;

	for (i = 0; i < hops; i++) {
		run = r[i] > 0 ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best;
}

double storm__observed_r(double calls, double retries)
{
	double first = calls - retries;

	if (retries <= 0)
		return 0;
	return retries / (first >= 1 ? first : 1);
}

/*
 * Per-hop retries that fit the slack stay; a deadline bounds the work;
 * otherwise retry only where the error is claimed (claim-aware: one hop
 * retries, fan-out 1+R), with a shared budget on top when even one hop's
 * 1+R is more than the terminal absorbs.
 */
const char *storm__recommend(enum storm_decision d, double r_max, const struct storm_policy *p)
{
	switch (d) {
	case STORM_DEADLINE_BOUNDED:
		return "deadline-bounded";
	case STORM_SAFE:
		return p->shared_budget >= 0 ? "shared-budget" : "per-hop";
	default:
		return within(1 + r_max, p->slack) ? "claim-aware" : "claim-aware+shared-budget";
	}
}

/* What seed 003's dispatch_retry_policy() answers. */
static const char *seed_policy(enum storm_decision d)
{
	return d == STORM_DEADLINE_BOUNDED ? "deadline-bounded"
	       : d == STORM_DO_NOT_SHIP	   ? "shared-budget"
					   : "per-hop";
}

struct hop {
	int from, to;
	double r;
	bool root; /* a root caller's edge */
};

struct walk {
	const struct storm_opts *o;
	struct json_object *names; /* array of node names */
	struct hop *hops;
	int n_hops, n_nodes;
	bool *on_path;
	bool *root_caller; /* calls through a root edge: a process that serves nothing */
	int path[STORM_MAX_HOPS + 1];
	double r[STORM_MAX_HOPS];
	int n_paths;
	bool truncated;
	/* per root */
	struct json_object *paths;
	enum storm_decision worst;
	double max_fanout, r_max;
	int radius, max_h;
	char why[256];
};

static const char *name_of(struct walk *w, int i)
{
	return json_object_get_string(json_object_array_get_idx(w->names, i));
}

static struct json_object *num(double v)
{
	return json_object_new_double(round(v * 1e6) / 1e6);
}

static void path_done(struct walk *w, int hops)
{
	struct json_object *p = json_object_new_object(), *names = json_object_new_array();
	struct json_object *rs = json_object_new_array();
	double fanout = storm__fanout(w->r, hops), r_max = 0;
	enum storm_decision d = storm__decide(fanout, &w->o->policy);
	int radius = storm__radius(w->r, hops), i;

	for (i = 0; i <= hops; i++)
		json_object_array_add(names, json_object_new_string(name_of(w, w->path[i])));
	for (i = 0; i < hops; i++) {
		json_object_array_add(rs, num(w->r[i]));
		if (w->r[i] > r_max)
			r_max = w->r[i];
	}
	json_object_object_add(p, "path", names);
	json_object_object_add(p, "hops", json_object_new_int(hops));
	json_object_object_add(p, "retries_per_hop", rs);
	json_object_object_add(p, "fanout", num(fanout));
	json_object_object_add(p, "decision", json_object_new_string(storm__decision_name(d)));
	json_object_object_add(p, "radius", json_object_new_int(radius));
	json_object_object_add(p, "claim_aware_fanout", num(1 + r_max));
	json_object_array_add(w->paths, p);
	w->n_paths++;
	/* The reason names the path that decides: the worst, then the widest. */
	if (storm__worse(d, w->worst) != w->worst || (d == w->worst && fanout > w->max_fanout)) {
		int n = snprintf(w->why, sizeof(w->why), "fan-out %.4g %s slack %.4g on ", fanout,
				 within(fanout, w->o->policy.slack) ? "<=" : ">",
				 w->o->policy.slack);

		for (i = 0; i <= hops && n > 0 && (size_t)n < sizeof(w->why); i++)
			n += snprintf(w->why + n, sizeof(w->why) - n, "%s%s", i ? " > " : "",
				      name_of(w, w->path[i]));
	}
	w->worst = storm__worse(d, w->worst);
	if (fanout > w->max_fanout)
		w->max_fanout = fanout;
	if (r_max > w->r_max)
		w->r_max = r_max;
	if (radius > w->radius)
		w->radius = radius;
	if (hops > w->max_h)
		w->max_h = hops;
}

/* Depth-first down every simple path from path[0]; a path ends at a node
 * with no way further (a leaf, or only back into the path). */
static void descend(struct walk *w, int depth)
{
	int from = w->path[depth], i;
	bool further = false;

	for (i = 0; i < w->n_hops; i++) {
		const struct hop *h = &w->hops[i];

		if (h->from != from || w->on_path[h->to])
			continue;
		if (w->n_paths >= STORM_MAX_PATHS || depth >= STORM_MAX_HOPS) {
			w->truncated = true;
			return;
		}
		further = true;
		w->on_path[h->to] = true;
		w->path[depth + 1] = h->to;
		w->r[depth] = h->r;
		descend(w, depth + 1);
		w->on_path[h->to] = false;
	}
	if (!further && depth > 0)
		path_done(w, depth);
}

static int index_of(struct json_object *index, struct json_object *names, const char *name)
{
	struct json_object *v;
	int i;

	if (json_object_object_get_ex(index, name, &v))
		return json_object_get_int(v);
	i = json_object_array_length(names);
	json_object_array_add(names, json_object_new_string(name));
	json_object_object_add(index, name, json_object_new_int(i));
	return i;
}

static double edge_r(struct json_object *e, const struct storm_opts *o)
{
	struct json_object *calls, *retries;
	double r = o->retries;

	if (r < 0) {
		json_object_object_get_ex(e, "calls", &calls);
		json_object_object_get_ex(e, "retries", &retries);
		r = storm__observed_r(json_object_get_double(calls),
				      json_object_get_double(retries));
	}
	if (o->policy.hop_budget >= 0 && r > o->policy.hop_budget)
		r = o->policy.hop_budget;
	return r;
}

static struct json_object *root_report(struct walk *w, int root)
{
	struct json_object *o = json_object_new_object();
	const struct storm_policy *p = &w->o->policy;

	w->paths = json_object_new_array();
	w->worst = STORM_SAFE;
	w->max_fanout = 1;
	w->r_max = 0;
	w->radius = 0;
	w->max_h = 0;
	snprintf(w->why, sizeof(w->why), "no retries on any path");
	w->on_path[root] = true;
	w->path[0] = root;
	descend(w, 0);
	w->on_path[root] = false;
	if (p->deadline)
		snprintf(w->why, sizeof(w->why),
			 "a deadline is propagated and consumed at every hop");
	else if (p->shared_budget >= 0)
		snprintf(w->why, sizeof(w->why),
			 "a shared budget bounds the fan-out at %.4g %s slack %.4g",
			 1 + p->shared_budget, within(1 + p->shared_budget, p->slack) ? "<=" : ">",
			 p->slack);
	json_object_object_add(o, "root", json_object_new_string(name_of(w, root)));
	json_object_object_add(o, "root_caller", json_object_new_boolean(w->root_caller[root]));
	json_object_object_add(o, "paths", w->paths);
	json_object_object_add(o, "max_hops", json_object_new_int(w->max_h));
	json_object_object_add(o, "max_fanout", num(w->max_fanout));
	json_object_object_add(o, "radius_now", json_object_new_int(w->radius));
	json_object_object_add(o, "radius_claim_aware", json_object_new_int(w->radius ? 1 : 0));
	json_object_object_add(o, "claim_aware_fanout", num(1 + w->r_max));
	json_object_object_add(o, "decision",
			       json_object_new_string(storm__decision_name(w->worst)));
	json_object_object_add(o, "policy",
			       json_object_new_string(storm__recommend(w->worst, w->r_max, p)));
	json_object_object_add(o, "seed_policy", json_object_new_string(seed_policy(w->worst)));
	json_object_object_add(o, "reason", json_object_new_string(w->why));
	return o;
}

static struct json_object *budget_json(double b)
{
	return b >= 0 ? json_object_new_double(b) : NULL;
}

struct json_object *storm__analyse(struct json_object *graph, const struct storm_opts *o, char *err,
				   size_t errlen)
{
	struct json_object *nodes, *edges, *report = NULL, *roots, *index, *names;
	struct walk w = { .o = o };
	bool *called = NULL;
	size_t i, n_edges;

	if (graph__check(graph, err, errlen))
		return NULL;
	if (!(o->policy.slack > 0)) {
		snprintf(err, errlen, "the slack must be more than 0");
		return NULL;
	}
	json_object_object_get_ex(graph, "nodes", &nodes);
	json_object_object_get_ex(graph, "edges", &edges);
	n_edges = json_object_array_length(edges);
	index = json_object_new_object();
	names = json_object_new_array();
	w.names = names;
	w.hops = calloc(n_edges + 1, sizeof(*w.hops));
	if (!index || !names || !w.hops)
		goto oom;
	for (i = 0; i < json_object_array_length(nodes); i++) {
		struct json_object *n = json_object_array_get_idx(nodes, i), *s;

		json_object_object_get_ex(n, "service", &s);
		index_of(index, names, json_object_get_string(s));
	}
	for (i = 0; i < n_edges; i++) {
		struct json_object *e = json_object_array_get_idx(edges, i), *a, *b;

		json_object_object_get_ex(e, "caller", &a);
		json_object_object_get_ex(e, "callee", &b);
		w.hops[w.n_hops].from = index_of(index, names, json_object_get_string(a));
		w.hops[w.n_hops].to = index_of(index, names, json_object_get_string(b));
		w.hops[w.n_hops].r = edge_r(e, o);
		w.hops[w.n_hops].root =
			json_object_object_get_ex(e, "root", &a) && json_object_get_boolean(a);
		if (w.hops[w.n_hops].from != w.hops[w.n_hops].to)
			w.n_hops++;
	}
	w.n_nodes = json_object_array_length(names);
	w.on_path = calloc(w.n_nodes + 1, sizeof(bool));
	w.root_caller = calloc(w.n_nodes + 1, sizeof(bool));
	called = calloc(w.n_nodes + 1, sizeof(bool));
	report = json_object_new_object();
	roots = json_object_new_array();
	if (!w.on_path || !w.root_caller || !called || !report || !roots) {
		json_object_put(roots);
		goto oom;
	}
	/* Called by a service: no root. A service called only by root callers is one
	 * (its own retries, beside the root callers' paths through it). */
	for (i = 0; i < (size_t)w.n_hops; i++) {
		called[w.hops[i].to] |= !w.hops[i].root;
		w.root_caller[w.hops[i].from] |= w.hops[i].root;
	}
	for (i = 0; i < (size_t)w.n_nodes; i++) {
		size_t k;

		if (called[i])
			continue;
		for (k = 0; k < (size_t)w.n_hops; k++)
			if (w.hops[k].from == (int)i)
				break;
		if (k < (size_t)w.n_hops) /* a node that calls nobody is no root */
			json_object_array_add(roots, root_report(&w, i));
	}
	json_object_object_add(report, "slack", json_object_new_double(o->policy.slack));
	json_object_object_add(report, "deadline", json_object_new_boolean(o->policy.deadline));
	json_object_object_add(report, "shared_budget", budget_json(o->policy.shared_budget));
	json_object_object_add(report, "hop_budget", budget_json(o->policy.hop_budget));
	json_object_object_add(report, "retries",
			       o->retries >= 0 ? json_object_new_double(o->retries)
					       : json_object_new_string("observed"));
	json_object_object_add(report, "roots", roots);
	json_object_object_add(report, "truncated", json_object_new_boolean(w.truncated));
	goto cleanup;
oom:
	snprintf(err, errlen, "out of memory");
	json_object_put(report);
	report = NULL;
cleanup:
	json_object_put(index);
	json_object_put(names);
	free(w.hops);
	free(w.on_path);
	free(w.root_caller);
	free(called);
	return report;
}
