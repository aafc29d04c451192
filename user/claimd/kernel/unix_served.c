// SPDX-License-Identifier: GPL-2.0
/* Socket files listened on, into the kernel's table of names served; see unix_served.h. */
#include <errno.h>

#include <bpf/bpf.h>

#include "host/unix_listeners.h"
#include "kernel/unix_served.h"

struct learning {
	int fd;
	int added;
	int err;
	unix_served_fn each;
	void *arg;
};

/* A name of the socket file bound as bound (a hash) into the table; 1 when new to it. */
static int learn_name(struct learning *l, const char *name, __u64 bound)
{
	__u64 hash = unix_listeners__hash(name);
	__u8 one = 1, seen;

	if (l->each)
		l->each(hash, name, bound ? bound : hash, l->arg);
	if (!bpf_map_lookup_elem(l->fd, &hash, &seen))
		return 0;
	if (bpf_map_update_elem(l->fd, &hash, &one, BPF_ANY)) {
		l->err = -errno;
		return -1;
	}
	l->added++;
	return 1;
}

static int learn_one(const char *name, unsigned long ino, void *arg)
{
	char alias[UNIX_ALIASES_MAX][CLAIMD_UNIX_NAME_MAX + 2];
	struct learning *l = arg;
	__u64 bound = unix_listeners__hash(name);
	int i, n;

	(void)ino;
	if (learn_name(l, name, bound) < 0)
		return 1;
	/* A client may name it otherwise: through a symlink to its directory. */
	n = unix_listeners__aliases(name, alias, UNIX_ALIASES_MAX);
	for (i = 0; i < n; i++)
		if (learn_name(l, alias[i], bound) < 0)
			return 1;
	return 0;
}

int unix_served__learn(int map_fd, unix_served_fn each, void *arg)
{
	struct learning l = { .fd = map_fd, .each = each, .arg = arg };

	if (unix_listeners__each(learn_one, &l) < 0)
		return -errno;
	return l.err ? l.err : l.added;
}
