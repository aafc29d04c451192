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
	int at_listen; /* processes whose calls were looked for as they began to serve */
};

/* Scans and writes what it finds into the observer's tables (respecting cfg's
 * filters) and tells names about listeners. */
int seed__existing(struct observer *obs, const struct observer_config *cfg, struct names *names,
		   struct seed_counts *out);

/*
 * Process tgid began to serve a port --port lists, having made connects
 * before to ports it does not list, which the programs did not follow
 * (CLAIMD_PROC_UNSEEDED): its TCP calls open now are written into the
 * tables as at start, joined mid-stream, counted into out, and its
 * listeners on ports listed named (their records may have been lost).
 * 0, or -errno.
 */
int seed__calls_of(struct observer *obs, const struct observer_config *cfg, struct names *names,
		   __u32 tgid, struct seed_counts *out);

#endif
