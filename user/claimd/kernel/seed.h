/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets that existed before claimd started: listeners and long-lived
 * keep-alive connections, found in /proc and written into the connection
 * table so the observer follows them from their next byte.
 */
#ifndef CLAIMD_SEED_H
#define CLAIMD_SEED_H

#include <linux/types.h>

#include "kernel/observer_api.h"

struct observer;
struct names;

struct seed_counts {
	int processes;
	int listeners;
	int inbound;
	int outbound;
	int skipped; /* already known to the kernel, or filtered out */
};

/* Scans and writes what it finds into the observer's tables (respecting cfg's
 * filters) and tells names about listeners. */
int seed__existing(struct observer *obs, const struct observer_config *cfg, struct names *names,
		   struct seed_counts *out);

#endif
