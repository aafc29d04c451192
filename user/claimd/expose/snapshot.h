/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A typed picture of the edges and services at one moment, for what leaves
 * the process: the metrics exposition is rendered from it (metrics.h), with
 * no JSON built in between. Names point into the edges module (they live as
 * long as it does). Rebuilt in place, its arrays reused.
 */
#ifndef CLAIMD_SNAPSHOT_H
#define CLAIMD_SNAPSHOT_H

#include <time.h>

#include "expose/metrics.h"

struct edges;
struct names;

struct snapshot {
	struct metrics_edge *edges;
	size_t n_edges, cap_edges;
	struct metrics_service *services;
	size_t n_services, cap_services;
	struct metrics_address *addresses;
	size_t n_addresses, cap_addresses;
};

/* Fills s from e at time now (monotonic s) / wall, and the addresses of the
 * services listening here from n (names.h; may be NULL); sorted by names.
 * 0 or -ENOMEM. */
int snapshot__build(struct snapshot *s, const struct edges *e, struct names *n, double now,
		    time_t wall);
/* The snapshot as metrics.h reads it. */
struct metrics_model snapshot__model(const struct snapshot *s);
void snapshot__free(struct snapshot *s);

#endif
