/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Edges and services, learned from the kernel's counts (kcounts.h) and from
 * the records the kernel could not count, with the rules of headers/counts.h
 * and headers/outcome.h (what failed, under --fail-status; the retry walk).
 * Per edge caller ->
 * callee: calls, callee_failures (requests in which the callee's call failed
 * and was not retried successfully), both_failed (... and the caller's own
 * response failed too), retries; their ratio both_failed / callee_failures
 * and the class it gives (design.md): over a recent window (sliding, in
 * buckets), and in a long-term memory (exponential decay over weeks,
 * persisted by memory.c). The effective class is the window's, else the
 * memory's. Per service: requests, failures, claimed / unclaimed / unknown.
 *
 * Root edges (a process that serves nothing calling a callee: roots.c) are
 * kept apart: calls, callee failures and retries only, no both_failed, no
 * ratio, no class and no memory; a root edge never mixes into the service
 * edge of the same name pair.
 *
 * An ingress whose calls claimd could not all follow (multiplexed, no
 * egress log, framing lost, a call not tied, its own answer lost) teaches
 * nothing about edges; its failure counts for its service as unknown, by
 * reason (counters.h).
 */
#ifndef CLAIMD_EDGES_H
#define CLAIMD_EDGES_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>

#include "counts.h"
#include "observer.h"
#include "verdict.h"

#define EDGES_WINDOW_BUCKETS 10

struct names;

struct edges_config {
	unsigned int window_s;	   /* recent window length (default 300) */
	double memory_half_life_s; /* memory decay (default 14 days) */
	unsigned int min_failures; /* fewer callee failures: unknown (default 20) */
	unsigned int fail_status;  /* a status >= this is a failure (default 500) */
	bool use_memory;	   /* consult memory when the window is unknown */
};

/*
 * Every call of the caller counts (calls, callee_failures, retries), tied
 * to a request or not; the ratio is both_failed / tied_failures, the
 * callee failures of requests that teach (headers/counts.h).
 */
struct edge_counts {
	uint64_t calls;
	uint64_t callee_failures;
	uint64_t both_failed;
	uint64_t retries;
	uint64_t tied_failures;
};

struct edge_memory {
	double calls;
	double callee_failures; /* the ratio's terms: of requests that teach (tied_failures) */
	double both_failed;
	time_t updated; /* wall clock of the last decay */
};

struct edge {
	char *caller;
	char *callee;
	struct edge_counts total; /* since claimd started */
	struct edge_counts bucket[EDGES_WINDOW_BUCKETS];
	uint64_t bucket_epoch[EDGES_WINDOW_BUCKETS]; /* which time slice each holds */
	struct edge_memory memory;
	bool in_memory; /* has memory (loaded or learned) */
	bool root;	/* a root caller's edge: no both_failed, ratio, class or memory */
};

struct service_stats {
	char *name;
	uint64_t requests;
	uint64_t failures;
	uint64_t claimed;
	uint64_t unclaimed;
	uint64_t unknown; /* failed, no confident verdict (counters.h: the reasons) */
	uint64_t multiplexed;
	uint64_t goroutine;  /* requests followed per goroutine (Go) */
	uint64_t tied_id;    /* an event loop's requests tied to a call by request id */
	uint64_t tied_relay; /* ... tied to a call that relayed them */
	uint64_t tied_nginx; /* nginx's requests tied to a call by its probe */
	uint64_t tied_node;  /* Node.js's, by the async context writing the call */
};

/* Where an edge's class comes from: this host's recent window, its memory,
 * or the whole fleet (fleet.h) when neither has one. */
enum edge_source { EDGE_SRC_NONE = 0, EDGE_SRC_WINDOW, EDGE_SRC_MEMORY, EDGE_SRC_FLEET };

/* "window", "memory", "fleet" or "none". */
const char *edges__source_name(enum edge_source s);

/* A class and where it came from. */
struct edge_class {
	enum claim_class cls;
	enum edge_source source;
	double ratio; /* of the source; NAN when it has no callee failures */
};

struct edges;

struct edges *edges__new(const struct edges_config *cfg);
void edges__free(struct edges *e);

/* Asked for an edge's class when neither window nor memory gives one; true
 * with a class other than unknown (ratio may be NAN). */
typedef bool (*edges_fallback_fn)(void *ctx, const char *caller, const char *callee,
				  enum claim_class *cls, double *ratio);
/* The fleet's classes (fleet.h), or none with fn NULL. */
void edges__set_fallback(struct edges *e, edges_fallback_fn fn, void *ctx);
const struct edges_config *edges__config(const struct edges *e);

/*
 * Learns from one ingress record what the kernel could not count (a full
 * counter map: CLAIMD_IN_UNCOUNTED, CLAIMD_EG_UNCOUNTED); the kernel counts
 * the rest itself (kcounts.h). now: monotonic seconds; wall: time(NULL).
 */
void edges__add_ingress(struct edges *e, const struct claimd_ingress *r, struct names *names,
			double now, time_t wall);

/* Learns d on the edge ed. */
void edges__learn(struct edges *e, struct edge *ed, const struct edge_counts *d, double now,
		  time_t wall);
/* The service's counts, made if new; NULL only when out of memory. */
struct service_stats *edges__service(struct edges *e, const char *name);
/* Adds requests counted by the rules of headers/counts.h to the service s. */
void edges__count_requests(struct edges *e, struct service_stats *s,
			   const struct claimd_service_counts *d);
/* How many times counts were learned: changes since a previous value mean work to do. */
uint64_t edges__changes(const struct edges *e);

/* Failed requests whose verdict is unknown, by the rule that made it so
 * (the rules whose verdict is unknown, verdict_names.h; other: CLAIM_RULE_NONE). */
uint64_t edges__unknown_verdicts(const struct edges *e, enum claim_rule rule);

/* Learns d (calls, callee_failures, retries; both_failed is ignored) on the
 * root edge caller -> callee. Returns the edge, or NULL when out of memory. */
struct edge *edges__add_root(struct edges *e, const char *caller, const char *callee,
			     const struct edge_counts *d, double now);
struct edge *edges__find_root(struct edges *e, const char *caller, const char *callee);

/* The class a ratio gives, with the thresholds of design.md. */
enum claim_class edges__classify(double callee_failures, double both_failed,
				 unsigned int min_failures);

struct edge *edges__find(struct edges *e, const char *caller, const char *callee);
/* An edge's key, caller and callee each NUL-ended, into buf: its length, or
 * 0 when it does not fit. Classes key their tables the same way. */
size_t edges__pair_key(const char *caller, const char *callee, char *buf, size_t len);
/* Finds or makes the edge; NULL only when out of memory. */
struct edge *edges__get(struct edges *e, const char *caller, const char *callee);
/* The window's sums at time now. */
void edges__window(const struct edges *e, const struct edge *ed, double now,
		   struct edge_counts *out);
/* The memory decayed to wall-clock time 'wall' (does not change the edge). */
struct edge_memory edges__memory_at(const struct edges *e, const struct edge *ed, time_t wall);
struct edge_class edges__effective(const struct edges *e, const struct edge *ed, double now,
				   time_t wall);

/* Visits every edge (service edges, then root edges) / service. */
void edges__for_each(const struct edges *e, void (*fn)(struct edge *ed, void *ctx), void *ctx);
void edges__for_each_service(const struct edges *e, void (*fn)(struct service_stats *s, void *ctx),
			     void *ctx);

/* JSON for claimctl. */
struct json_object *edges__json(const struct edges *e, double now, time_t wall);
struct json_object *edges__services_json(const struct edges *e);

#endif
