// SPDX-License-Identifier: GPL-2.0
/* Socket files listened on, into the kernel's table of names served; see unix_served.h. */
#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>

#include "hashtab.h"
#include "host/unix_listeners.h"
#include "kernel/unix_served.h"

/*
 * Listeners learned are asked of the kernel again only every this many
 * looks: meanwhile a look costs its read of /proc/net/unix and a hash of
 * each name, with no system call per listener (1,000 listeners: a look
 * with a lookup of each and its other names took 20-25 ms).
 */
#define RELEARN_EVERY 12
#define KNOWN_MAX     16384

struct unix_served {
	int fd;
	struct hashtab *known; /* a listener's bound name's hash -> (void *)1 */
	unsigned int looks;
	unix_served_fn each;
	void *arg;
	/* one look's */
	int added;
	int err;
};

struct unix_served *unix_served__new(int map_fd, unix_served_fn each, void *arg)
{
	struct unix_served *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->fd = map_fd;
	u->each = each;
	u->arg = arg;
	u->known = hashtab__new();
	if (!u->known) {
		free(u);
		return NULL;
	}
	return u;
}

void unix_served__free(struct unix_served *u)
{
	if (!u)
		return;
	hashtab__free(u->known);
	free(u);
}

/* A name of the socket file bound as bound (a hash) into the table; 1 when new to it. */
static int learn_name(struct unix_served *u, const char *name, __u64 bound)
{
	__u64 hash = unix_listeners__hash(name);
	__u8 one = 1, seen;

	if (u->each)
		u->each(hash, name, bound, u->arg);
	if (!bpf_map_lookup_elem(u->fd, &hash, &seen))
		return 0;
	if (bpf_map_update_elem(u->fd, &hash, &one, BPF_ANY)) {
		u->err = -errno;
		return -1;
	}
	u->added++;
	return 1;
}

static int learn_one(const char *name, unsigned long ino, void *arg)
{
	char alias[UNIX_ALIASES_MAX][CLAIMD_UNIX_NAME_MAX + 2];
	struct unix_served *u = arg;
	__u64 bound = unix_listeners__hash(name);
	int i, n;

	(void)ino;
	if (hashtab__get(u->known, &bound, sizeof(bound)))
		return 0;
	if (learn_name(u, name, bound) < 0)
		return 1;
	/* A client may name it otherwise: through a symlink to its directory. */
	n = unix_listeners__aliases(name, alias, UNIX_ALIASES_MAX);
	for (i = 0; i < n; i++)
		if (learn_name(u, alias[i], bound) < 0)
			return 1;
	if (hashtab__count(u->known) < KNOWN_MAX)
		hashtab__put(u->known, &bound, sizeof(bound), (void *)1, NULL);
	return 0;
}

int unix_served__learn(struct unix_served *u)
{
	/* Now and then all again: the kernel's table may have let a name go. */
	if (u->looks++ % RELEARN_EVERY == 0) {
		hashtab__free(u->known);
		u->known = hashtab__new();
		if (!u->known)
			return -ENOMEM;
	}
	u->added = 0;
	u->err = 0;
	if (unix_listeners__each(learn_one, u) < 0)
		return -errno;
	return u->err ? u->err : u->added;
}
