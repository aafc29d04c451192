/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claimd's Prometheus exposition, rendered from a typed model of edges and
 * services (snapshot.h) and claimd's status object ('claimctl status
 * --json'): per edge, per service and claimd's own health. Pure: the main
 * loop renders it when asked for (metrics_http.h).
 *
 * claimd_edge_class is a gauge: the class's number in CLAIM_CLASS_TABLE
 * (headers/verdict.h): 0 unknown, 1 fail-close, 2 fail-open.
 *
 * Names across hosts: claimd_service_info{service, address} (1) for every
 * address a listening service answers on, and an edge whose callee is only
 * an address here carries it in callee_address too, so that the shipped
 * recording rules (scripts/prometheus/claimd.rules.yml) name it from the
 * callee's own host.
 */
#ifndef CLAIMD_METRICS_H
#define CLAIMD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <json-c/json.h>

/* One edge as the exposition shows it. */
struct metrics_edge {
	const char *caller, *callee;
	const char *callee_address; /* the callee's endpoint when it has no name here, or NULL */
	double calls, callee_failures, both_failed, retries; /* since claimd started */
	double tied_failures; /* callee failures of requests that teach: the ratio's */
	double ratio;	      /* of the class's source; NAN: no callee failures there */
	unsigned int cls;     /* enum claim_class */
	bool root;	      /* a root caller's: no both_failed, ratio or class */
};

/* One service that served requests. */
struct metrics_service {
	const char *name;
	double requests, claimed, unclaimed, unknown;
};

/* An address a listening service answers on, for callers on other hosts. */
struct metrics_address {
	const char *service;
	char address[64]; /* "ip:port", ADDR_STR_MAX */
};

/* What the exposition is rendered from: typed, no JSON in between. */
struct metrics_model {
	const struct metrics_edge *edges;
	size_t n_edges;
	const struct metrics_service *services;
	size_t n_services;
	const struct metrics_address *addresses;
	size_t n_addresses;
};

/* The exposition text (malloc'd, NUL-terminated), or NULL when out of
 * memory. status may be NULL. wall: now, for the age of the memory file. */
char *metrics__render(const struct metrics_model *m, struct json_object *status, time_t wall,
		      size_t *len);

#endif
