// SPDX-License-Identifier: GPL-2.0
/* Socket files listened on, into the kernel's table of names served; see unix_served.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	int unserved_fd; /* the probes' table, or -1 */
	__u64 probes[UNIX_PROBES_MAX];
	int n_probes;
	char deps[UNIX_DEPENDENCIES_MAX][CLAIMD_UNIX_NAME_MAX + 1];
	int n_deps;
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
	u->unserved_fd = -1;
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

/* The name hashing to hash into the table; 1 when new to it, -1 when refused (u->err). */
static int put_hash(struct unix_served *u, __u64 hash)
{
	__u8 one = 1, seen;

	if (!bpf_map_lookup_elem(u->fd, &hash, &seen))
		return 0;
	if (bpf_map_update_elem(u->fd, &hash, &one, BPF_ANY)) {
		u->err = -errno;
		return -1;
	}
	u->added++;
	return 1;
}

/* The same, told (each) as a name of the socket file bound as bound, known served now. */
static int learn_hash(struct unix_served *u, __u64 hash, const char *name, __u64 bound)
{
	if (u->each)
		u->each(hash, name, bound, u->arg);
	return put_hash(u, hash);
}

static int learn_name(struct unix_served *u, const char *name, __u64 bound)
{
	return learn_hash(u, unix_listeners__hash(name), name, bound);
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

/*
 * The kernel's table of names not served, made again: the names asked
 * about go (a file that was not a socket then may be a dead server's
 * now: asked again at its next failed connect), the probes listed are put.
 */
static int put_probes(struct unix_served *u)
{
	__u8 probe = CLAIMD_UNSERVED_PROBE, state;
	__u64 key, next, *prev = NULL;
	int i;

	while (!bpf_map_get_next_key(u->unserved_fd, prev, &next)) {
		if (!bpf_map_lookup_elem(u->unserved_fd, &next, &state) &&
		    state == CLAIMD_UNSERVED_ASKED && !bpf_map_delete_elem(u->unserved_fd, &next))
			continue; /* the walk goes on from the key before */
		key = next;
		prev = &key;
	}
	for (i = 0; i < u->n_probes; i++)
		if (bpf_map_update_elem(u->unserved_fd, &u->probes[i], &probe, BPF_ANY))
			return -errno;
	return 0;
}

int unix_served__probes(struct unix_served *u, int unserved_fd, const char *const *paths, int n)
{
	int i;

	if (n > UNIX_PROBES_MAX)
		return -E2BIG;
	u->unserved_fd = unserved_fd;
	for (i = 0; i < n; i++)
		u->probes[i] = unix_listeners__hash(paths[i]);
	u->n_probes = n;
	return put_probes(u);
}

/* The dependencies' names into the table, each not already known (learn_one). */
static void put_dependencies(struct unix_served *u)
{
	int i;

	for (i = 0; i < u->n_deps; i++) {
		int added = u->added;
		__u64 hash;

		if (learn_one(u->deps[i], 0, u))
			return;
		if (u->added == added || u->unserved_fd < 0)
			continue;
		/* Asked about before it was put: served, not unsure, from now on. */
		hash = unix_listeners__hash(u->deps[i]);
		bpf_map_delete_elem(u->unserved_fd, &hash);
	}
}

int unix_served__dependencies(struct unix_served *u, const char *const *paths, int n)
{
	int i;

	if (n > UNIX_DEPENDENCIES_MAX)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		if (strlen(paths[i]) > CLAIMD_UNIX_NAME_MAX)
			return -ENAMETOOLONG;
		snprintf(u->deps[i], sizeof(u->deps[i]), "%s", paths[i]);
	}
	u->n_deps = n;
	u->added = 0;
	u->err = 0;
	put_dependencies(u);
	return u->err ? u->err : u->added;
}

int unix_served__remember(struct unix_served *u, __u64 hash)
{
	int i, n;

	for (i = 0; i < u->n_probes; i++)
		if (u->probes[i] == hash)
			return 0;
	u->err = 0;
	n = put_hash(u, hash);
	return n < 0 ? u->err : n;
}

int unix_served__ask(struct unix_served *u, __u32 tgid, const char *name, size_t len, __u64 hash)
{
	char path[CLAIMD_UNIX_NAME_MAX + 1], seen[CLAIMD_UNIX_NAME_MAX + 64];
	struct stat st;
	int n;

	if (len > CLAIMD_UNIX_NAME_MAX)
		len = CLAIMD_UNIX_NAME_MAX;
	/* An abstract name has no file: whose it was cannot be told. */
	if (!len || !name[0])
		return 0;
	memcpy(path, name, len);
	path[len] = '\0';
	snprintf(seen, sizeof(seen), "/proc/%u/%s/%s", tgid, path[0] == '/' ? "root" : "cwd",
		 path[0] == '/' ? path + 1 : path);
	if (stat(seen, &st) || !S_ISSOCK(st.st_mode))
		return 0;
	u->err = 0;
	n = learn_hash(u, hash, path, hash);
	if (n < 0)
		return u->err;
	if (u->unserved_fd >= 0)
		bpf_map_delete_elem(u->unserved_fd, &hash);
	return n;
}

int unix_served__learn(struct unix_served *u)
{
	/* Now and then all again: the kernel's table may have let a name go. */
	if (u->looks++ % RELEARN_EVERY == 0) {
		hashtab__free(u->known);
		u->known = hashtab__new();
		if (!u->known)
			return -ENOMEM;
		if (u->unserved_fd >= 0) {
			int err = put_probes(u);

			if (err)
				return err;
		}
	}
	u->added = 0;
	u->err = 0;
	put_dependencies(u);
	if (unix_listeners__each(learn_one, u) < 0)
		return -errno;
	return u->err ? u->err : u->added;
}
