/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fleet knows, as one claimd reads it back from Prometheus: each
 * edge's class and ratio over every host (claimd:edge_class:rate5m,
 * claimd:edge_ratio:rate5m of scripts/prometheus/claimd.rules.yml), and the
 * name each callee address has on its own host (claimd:service_address).
 * Built whole from query results, read-only after: a newer one replaces it.
 */
#ifndef CLAIMD_FLEET_TABLE_H
#define CLAIMD_FLEET_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "verdict.h"

struct fleet_table;

/* From the result vectors of the three queries (any may be NULL). NULL only
 * when out of memory. Samples with missing labels or unreadable values are
 * skipped, as are classes that are not 0, 1 or 2. */
struct fleet_table *fleet_table__new(struct json_object *classes, struct json_object *ratios,
				     struct json_object *addresses);
void fleet_table__free(struct fleet_table *t);
size_t fleet_table__edges(const struct fleet_table *t);

/*
 * The fleet's class of caller -> callee, where callee is a name or, when
 * this host knows it only by address, an address its own host names. False
 * when the fleet has no class for it (or says unknown). ratio: NAN when the
 * fleet has none.
 */
bool fleet_table__class(const struct fleet_table *t, const char *caller, const char *callee,
			enum claim_class *cls, double *ratio);

/* The name the callee's own host gives the address "ip:port", or NULL. */
const char *fleet_table__name(const struct fleet_table *t, const char *addr);
/* Do a and b (either may be NULL: no names) name the same addresses alike? */
bool fleet_table__same_names(const struct fleet_table *a, const struct fleet_table *b);
/* Forgets the classes, keeps the names (Prometheus stopped answering). */
void fleet_table__drop_classes(struct fleet_table *t);

#endif
