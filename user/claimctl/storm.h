/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Retry-storm arithmetic on a service graph (seed 003's composition rule).
 * With R retries per hop on a path of H hops, the worst-case fan-out at the
 * terminal service is (1+R)^H (with per-hop values, the product of 1+R_i).
 * The decision, in this order:
 *   - a deadline propagated and consumed at every hop: deadline-bounded;
 *   - a retry budget shared across hops: safe when 1+B <= slack, else
 *     do-not-ship (a budget sized per hop is just R = B below);
 *   - no retries on the path (fan-out 1): safe, nothing to amplify;
 *   - fan-out <= slack: degraded (safe until a correlated failure);
 *   - fan-out > slack: do-not-ship.
 * The storm radius is the longest run of consecutive retrying edges: every
 * one of them retries the same failure. With claim-aware retries only the
 * edge nearest the failure retries: radius 1, fan-out 1+R.
 *
 * storm__analyse() walks a graph (graph.h) from each root down every
 * path, and reports per path and per root, as JSON. A root is a node nobody
 * calls: a root caller (curl, a batch job: its root edge is the first hop,
 * its retries the first R; "root_caller": true), and a service called by
 * root callers only (the paths of its own retries).
 * Observed retries per hop are retries / (calls - retries): the extra
 * attempts per original call, so that 1+R is the load multiple of a hop.
 */
#ifndef CLAIMD_STORM_H
#define CLAIMD_STORM_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#define STORM_MAX_HOPS	 32
#define STORM_MAX_PATHS	 4096
#define STORM_NO_BUDGET	 (-1.0)
#define STORM_OBSERVED_R (-1.0)

enum storm_decision {
	STORM_SAFE = 0,
	STORM_DEGRADED,
	STORM_DO_NOT_SHIP,
	STORM_DEADLINE_BOUNDED,
};

struct storm_policy {
	double slack;	      /* the multiple of normal load the terminal absorbs (> 0) */
	bool deadline;	      /* an absolute deadline consumed at every hop */
	double shared_budget; /* cross-hop retry budget (share of requests), or STORM_NO_BUDGET */
	double hop_budget;    /* per-hop retry budget: R capped at it, or STORM_NO_BUDGET */
};

struct storm_opts {
	struct storm_policy policy;
	double retries; /* R on every hop, or STORM_OBSERVED_R: from the edges' counts */
};

/* Product of (1 + r[i]) over the hops. */
double storm__fanout(const double *r, int hops);
/* (1 + r)^hops. */
double storm__fanout_uniform(double r, int hops);
enum storm_decision storm__decide(double fanout, const struct storm_policy *p);
const char *storm__decision_name(enum storm_decision d);
/* The worse of two decisions for a root holding both kinds of path. */
enum storm_decision storm__worse(enum storm_decision a, enum storm_decision b);
/* Longest run of consecutive hops with r[i] > 0. */
int storm__radius(const double *r, int hops);
/* Retries per original call of an edge: retries / (calls - retries). */
double storm__observed_r(double calls, double retries);
/* The retry policy to recommend for a root whose worst path got d, whose
 * largest retries per hop is r_max; see storm.c. */
const char *storm__recommend(enum storm_decision d, double r_max, const struct storm_policy *p);

/* The report for a graph: {"slack","deadline",...,"roots":[{"root","paths":[...],
 * "radius_now","radius_claim_aware","decision","policy",...}]}. NULL with a
 * reason in err. */
struct json_object *storm__analyse(struct json_object *graph, const struct storm_opts *o, char *err,
				   size_t errlen);

#endif
