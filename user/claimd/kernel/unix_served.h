/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names of socket files served on this host, put into the kernel's
 * unix_served (bpf/observer.bpf.c) from /proc/net/unix's listeners, beside
 * those the programs put as they follow connections. A connect to a name
 * in that table that fails is a failed call; to a name never there, a
 * probe (bpf/connects.c). So a cache seen listening, then dead before any
 * connection to it was followed (claimd started after its clients'
 * last call, or the service after the cache died), is a dependency that
 * failed, not nothing.
 */
#ifndef CLAIMD_UNIX_SERVED_H
#define CLAIMD_UNIX_SERVED_H

#include <linux/types.h>

struct unix_served;

/*
 * A learner into the table at map_fd (kept by the caller), telling each
 * (when given) every name it learns, or NULL.
 */
typedef void (*unix_served_fn)(__u64 hash, const char *path, __u64 bound, void *arg);
struct unix_served *unix_served__new(int map_fd, unix_served_fn each, void *arg);
void unix_served__free(struct unix_served *u);

/*
 * Puts the name of every socket file listened on now into the table, with
 * the other names a client may reach it by (unix_listeners__aliases), and
 * tells each every name's hash and path, and the hash of the name it was
 * bound by (the same for that one). A listener learned at an
 * earlier look is passed over but now and then. The count of names new to
 * the table, or -errno (/proc/net/unix unreadable, or the table refused
 * one).
 */
int unix_served__learn(struct unix_served *u);

#endif /* CLAIMD_UNIX_SERVED_H */
