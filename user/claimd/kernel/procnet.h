/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every process's TCP sockets with their addresses and roles: in, /proc
 * (each process's fds, net/tcp and tcp6 once per network namespace); out,
 * each socket found, handed to the seed (seed.h) one at a time.
 */
#ifndef CLAIMD_PROCNET_H
#define CLAIMD_PROCNET_H

#include <linux/types.h>

#include "observer.h"

/* A socket found, as /proc tells it. */
struct procnet_sock {
	__u32 tgid;
	int fd;
	__u64 netns; /* the process's network namespace inode */
	__u64 ino;   /* the socket's inode number */
	__u8 role;   /* enum claimd_role */
	struct claimd_addr local;
	struct claimd_addr remote;
};

/* Parses one line of /proc/net/tcp or tcp6 into addresses, state and inode.
 * Returns 0 on success. */
int procnet__parse_line(const char *line, int v6, struct claimd_addr *local,
			struct claimd_addr *remote, unsigned int *state, unsigned long *inode);

/* Walks /proc; calls found() for every TCP socket of a process other than
 * self. Returns the number of processes looked at, or -errno. */
int procnet__scan(__u32 self, void (*found)(const struct procnet_sock *s, void *ctx), void *ctx);
/* The same for process pid alone: 1, or 0 when it is gone (or not ours to read), or -errno. */
int procnet__scan_pid(__u32 pid, void (*found)(const struct procnet_sock *s, void *ctx), void *ctx);

#endif
