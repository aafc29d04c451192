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

static int learn_one(const char *name, unsigned long ino, void *arg)
{
	struct learning *l = arg;
	__u64 hash = unix_listeners__hash(name);
	__u8 one = 1, seen;

	(void)ino;
	if (l->each)
		l->each(hash, name, l->arg);
	if (!bpf_map_lookup_elem(l->fd, &hash, &seen))
		return 0;
	if (bpf_map_update_elem(l->fd, &hash, &one, BPF_ANY)) {
		l->err = -errno;
		return 1;
	}
	l->added++;
	return 0;
}

int unix_served__learn(int map_fd, unix_served_fn each, void *arg)
{
	struct learning l = { .fd = map_fd, .each = each, .arg = arg };

	if (unix_listeners__each(learn_one, &l) < 0)
		return -errno;
	return l.err ? l.err : l.added;
}
