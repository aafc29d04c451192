/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who listens on a socket file: the listening Unix stream sockets of this
 * network namespace (/proc/net/unix), their names hashed as
 * headers/unixaddr.h says, and the process holding each (/proc/PID/fd).
 * How claimd names a callee reached over a socket file, and the service
 * that serves on one.
 */
#ifndef CLAIMD_UNIX_LISTENERS_H
#define CLAIMD_UNIX_LISTENERS_H

#include <stddef.h>
#include <linux/types.h>

#include "unixaddr.h"

/* The hash of a name as /proc/net/unix prints it ('@' first: an abstract name). */
__u64 unix_listeners__hash(const char *shown);

/*
 * Calls fn(name, inode, arg) for each listening Unix stream socket that
 * has a name (as /proc/net/unix prints it), until fn returns other than 0.
 * What fn returned last, or -1 when /proc/net/unix cannot be read.
 */
typedef int (*unix_listener_fn)(const char *name, unsigned long ino, void *arg);
int unix_listeners__each(unix_listener_fn fn, void *arg);

/*
 * The other names a client may give for the socket file at path (as
 * /proc/net/unix prints it), into out[0..max-1]: the path through its
 * directory's real path (a server that bound it through a symlink), and
 * the same under /var/run and /var/lock, where they are links to /run
 * (Debian's: a client of /var/run/redis/redis.sock reaches a server that
 * bound /run/redis/redis.sock). How many; none for an abstract name.
 */
#define UNIX_ALIASES_MAX 3
int unix_listeners__aliases(const char *path, char out[][CLAIMD_UNIX_NAME_MAX + 2], int max);

/*
 * The listening Unix stream socket whose name hashes to hash: its name as
 * /proc/net/unix prints it into path, and, when tgid is given, the
 * process holding it into *tgid (0 when none is found: a walk of every
 * process's fds, once per name asked). 0, or -1 when there is no such
 * listener (or hash is 0: an unnamed end).
 */
int unix_listeners__find(__u64 hash, char *path, size_t len, __u32 *tgid);

#endif
