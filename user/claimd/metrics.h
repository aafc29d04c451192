/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claimd's Prometheus exposition, rendered from the graph (graph.h) and
 * claimd's status object ('claimctl status --json'): per edge, per service
 * and claimd's own health. Pure: the main loop renders it once a second and
 * the HTTP thread serves the text (metrics_http.h).
 *
 * claimd_edge_class is a gauge: the class's number in CLAIM_CLASS_TABLE
 * (headers/verdict.h): 0 unknown, 1 fail-close, 2 fail-open.
 */
#ifndef CLAIMD_METRICS_H
#define CLAIMD_METRICS_H

#include <stddef.h>
#include <time.h>

#include <json-c/json.h>

/* The exposition text (malloc'd, NUL-terminated), or NULL when out of
 * memory. status may be NULL. wall: now, for the age of the memory file. */
char *metrics__render(struct json_object *graph, struct json_object *status, time_t wall,
		      size_t *len);

#endif
