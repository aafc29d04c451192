/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets that existed before claimd started: listeners and long-lived
 * keep-alive connections, found in /proc and written into the connection
 * table so the observer follows them from their next byte.
 */
#ifndef CLAIMD_SEED_H
#define CLAIMD_SEED_H

#include <linux/types.h>

#include "observer_api.h"

struct observer;
struct names;

struct seed_counts {
	int processes;
	int listeners;
	int inbound;
	int outbound;
	int skipped; /* already known to the kernel, or filtered out */
};

/* A socket found, as /proc tells it. */
struct seed_sock {
	__u32 tgid;
	int fd;
	__u8 role; /* enum claimd_role */
	struct claimd_addr local;
	struct claimd_addr remote;
};

/* Parses one line of /proc/net/tcp or tcp6 into addresses, state and inode.
 * Returns 0 on success. */
int seed__parse_tcp_line(const char *line, int v6, struct claimd_addr *local,
			 struct claimd_addr *remote, unsigned int *state, unsigned long *inode);

/* Walks /proc; calls found() for every TCP socket of a process other than
 * self. Returns the number of processes looked at, or -errno. */
int seed__scan(__u32 self, void (*found)(const struct seed_sock *s, void *ctx), void *ctx);

/* Scans and writes what it finds into the observer's tables (respecting cfg's
 * filters) and tells names about listeners. */
int seed__existing(struct observer *obs, const struct observer_config *cfg, struct names *names,
		   struct seed_counts *out);

#endif
