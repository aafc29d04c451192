/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claimlab runs with a claimd of the test's own: claimd up with a trace
 * capture and down with its pinned verdict map, node names of a run's own,
 * its JSON report, and claimd's verdicts on the run's failures against the
 * truth.
 */
#ifndef CLAIMD_TEST_LAB_H
#define CLAIMD_TEST_LAB_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "harness.h"

/* claimd (extra: more arguments, NULL-terminated, may be NULL) and its trace. */
bool lab_claimd_up(struct claimd_h *h, struct trace_cap *t, const char *const extra[]);
/* Stops both; claimd keeps its verdict map pinned for the next one: ours goes. */
void lab_claimd_down(struct claimd_h *h, struct trace_cap *t);

/* A run's --service-prefix: "<name>.<pid>.", names of its own, not those of
 * another run or another test. Returns buf. */
const char *lab_prefix(char *buf, size_t len, const char *name);

/* The node 'name' (unprefixed) of a claimlab JSON report, or NULL. */
struct json_object *lab_node(struct json_object *rep, const char *name);

/*
 * claimd's verdicts on the failures of a claimlab chain failing at D (every
 * answer of A to D fails) against the truth: D's are its own; A, B and C
 * pass up their callee's. The nodes are named prefix<node>; rep is the
 * run's report. Tallies the trace and asserts no wrong verdict (truth.h).
 */
void lab_verdicts(const struct trace_cap *t, struct json_object *rep, const char *prefix,
		  const char *what);

#endif
