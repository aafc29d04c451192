/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The service graph, one shape for every consumer: claimd's "graph" control
 * command, its /graph.json and map page, /metrics, and files saved with
 * 'claimctl graph --format json' that 'claimctl storm --file' reads back.
 *
 *   {"version":1, "generated_unix":T,
 *    "nodes":[{"service","seen","requests","failures","claimed","unclaimed",
 *              "unknown","failing","origin","root"}],
 *    "edges":[<an edge of 'claimctl edges --json'> + "unclaimed"],
 *    "chains":[["A","B","C"], ...]}
 *
 * Nodes are the services claimd saw serve requests ("seen"), the callees
 * it only saw called, and root callers ("root": processes that serve
 * nothing, the callers of root edges, which carry "root": true). A node is failing when some of its requests failed,
 * and an origin when some of those failures were its own (claimed). An
 * edge is on an unclaimed chain when its callee's failure failed the caller
 * too (both_failed) and the caller passed failures up unclaimed; "chains"
 * lists the longest such paths, from the top down to the service that
 * claims the error.
 */
#ifndef CLAIMD_GRAPH_H
#define CLAIMD_GRAPH_H

#include <time.h>

#include <json-c/json.h>

#define GRAPH_VERSION	 1
#define GRAPH_MAX_CHAINS 64

/* Builds the graph from claimd's edges and services arrays (not changed).
 * NULL when out of memory. */
struct json_object *graph__build(struct json_object *edges, struct json_object *services,
				 time_t wall);

/* Checks that o has the graph's shape (for files from elsewhere): 0, or -1
 * with a reason in err. */
int graph__check(struct json_object *o, char *err, size_t errlen);

#endif
