/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claimd --fleet-classes URL: the fleet's edge classes, read back from
 * Prometheus every few seconds on a thread of its own (the queries block,
 * within a timeout; the main loop never waits on them). An edge this host
 * cannot classify (too few failures, no memory) takes the fleet's class
 * (edges.h: source "fleet"), and classes.c writes it into the kernel like
 * any other. A callee this host knows only by address takes the name its
 * own host gives it (names.h). Prometheus slow or unreachable: the fleet's classes are
 * dropped (local classes only), said once in the log, counted, and shown in
 * 'claimctl status' and the metrics; said again once it answers.
 */
#ifndef CLAIMD_FLEET_H
#define CLAIMD_FLEET_H

#include <stdbool.h>

#include <json-c/json.h>

#include "verdict.h"

struct fleet;

/* Starts the thread reading url every interval_s, each query within
 * timeout_ms. NULL on error (logged). */
struct fleet *fleet__start(const char *url, unsigned int interval_s, long timeout_ms);
/* Stops the thread (at most one query's timeout) and frees. */
void fleet__stop(struct fleet *f);

#define FLEET_CLASSES_CHANGED 0x1
#define FLEET_NAMES_CHANGED   0x2
/* Main thread: takes what the thread read since; what changed (FLEET_*).
 * While Prometheus does not answer, the classes go and the names stay. */
unsigned int fleet__update(struct fleet *f);
/* Main thread: the fleet's class of caller -> callee (fleet_table.h).
 * Shaped as edges__set_fallback wants it: ctx is the fleet. */
bool fleet__class(void *ctx, const char *caller, const char *callee, enum claim_class *cls,
		  double *ratio);
/* Main thread: the name a callee's own host gives "ip:port" (fleet_table.h).
 * Shaped as names__set_remote wants it. */
const char *fleet__name(void *ctx, const char *addr);
/* For 'claimctl status' and the metrics: url, state (starting, ok,
 * unreachable), queries, errors, edges, last_error, last_ok_age_s. */
struct json_object *fleet__status_json(struct fleet *f);

#endif
