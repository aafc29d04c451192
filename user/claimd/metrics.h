/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claimd's Prometheus exposition, rendered from the graph (graph.h) and
 * claimd's status object ('claimctl status --json'): per edge, per service
 * and claimd's own health. Pure: the main loop renders it once a second and
 * the HTTP thread serves the text (metrics_http.h).
 *
 * claimd_edge_class is a gauge: 0 unknown, 1 fail-close, 2 fail-open.
 */
#ifndef CLAIMD_METRICS_H
#define CLAIMD_METRICS_H

#include <stddef.h>
#include <time.h>

#include <json-c/json.h>

enum metrics_class { METRICS_CLASS_UNKNOWN = 0, METRICS_CLASS_FAIL_CLOSE, METRICS_CLASS_FAIL_OPEN };

/* The number claimd_edge_class gives a class name ("fail-close", ...). */
enum metrics_class metrics__class_value(const char *cls);

/* The exposition text (malloc'd, NUL-terminated), or NULL when out of
 * memory. status may be NULL. wall: now, for the age of the memory file. */
char *metrics__render(struct json_object *graph, struct json_object *status, time_t wall,
		      size_t *len);

#endif
