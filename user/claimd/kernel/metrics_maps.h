/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How full claimd's BPF hash maps are: entries counted by walking the keys
 * (a syscall per entry, so claimd does it every few seconds, not per
 * scrape) against the map's capacity. Shown by 'claimctl status' ("maps")
 * and exported as claimd_map_entries / claimd_map_max_entries.
 */
#ifndef CLAIMD_METRICS_MAPS_H
#define CLAIMD_METRICS_MAPS_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

struct map_fill {
	const char *name;
	int fd;
	uint32_t key_size;
	uint32_t max_entries;
	uint64_t entries;
	int err; /* of the last count: 0 or -errno */
	/* Filled in by claimd, exported when set: */
	bool has_evicted; /* an LRU map: entries evicted to make room */
	uint64_t evicted;
	bool has_refused;	/* a map claimd writes: entries refused, it was full */
	uint64_t refused;	/* now */
	uint64_t refused_total; /* newly refused, since start */
};

/* Reads the map's key size and capacity; on error, err says why. */
void map_fill__init(struct map_fill *m, const char *name, int fd);
/* Counts the entries of n maps. */
void map_fill__count(struct map_fill *m, int n);
/* {"<name>":{"entries":N,"max_entries":M[,"evicted":E][,"refused":R,
 * "refused_total":T]}, ...}; maps that could not be read are left out. */
struct json_object *map_fill__json(const struct map_fill *m, int n);

#endif
