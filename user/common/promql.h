/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Instant queries to a Prometheus server's HTTP API (GET /api/v1/query), the
 * way claimd reads the fleet's classes back (fleet.h) and claimctl reads the
 * fleet's graph: one blocking request with a connect and a total timeout
 * (libcurl), its JSON envelope checked, the "result" vector handed back.
 * Callers that must not block run it on a thread of their own.
 */
#ifndef CLAIMD_PROMQL_H
#define CLAIMD_PROMQL_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * The result vector of query at base_url ("http://host:9090", a path prefix
 * allowed), a new reference, or NULL with the reason in err (unreachable,
 * timed out, an HTTP status, the server's own error, not a vector).
 */
struct json_object *promql__query(const char *base_url, const char *query, long timeout_ms,
				  char *err, size_t errlen);
/* The same reading of a response body already at hand. */
struct json_object *promql__result(const char *body, size_t len, char *err, size_t errlen);

/* A sample's label ("" when absent) and value (NAN when unreadable). */
const char *promql__label(struct json_object *sample, const char *name);
double promql__value(struct json_object *sample);

#endif
