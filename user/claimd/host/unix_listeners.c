// SPDX-License-Identifier: GPL-2.0
/* Who listens on a socket file; see unix_listeners.h. */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unix_listeners.h"
#include "unixaddr.h"

#define SO_ACCEPTCON_FLAG 0x10000 /* __SO_ACCEPTCON: listening */
#define UNIX_STREAM_TYPE  1

__u64 unix_listeners__hash(const char *shown)
{
	__u64 h = CLAIMD_UNIX_FNV_BASIS;
	size_t i = 0;

	if (shown[0] == '@') {
		h = claimd_unix_hash_step(h, 0);
		i = 1;
	}
	for (; shown[i] && i < CLAIMD_UNIX_NAME_MAX; i++)
		h = claimd_unix_hash_step(h, (__u8)shown[i]);
	return h;
}

/* Adds name to out[0..*n) unless it is path or there already, or out is full. */
static void alias_add(const char *path, const char *name, char out[][CLAIMD_UNIX_NAME_MAX + 2],
		      int *n, int max)
{
	int i;

	if (*n >= max || !strcmp(name, path) || strlen(name) > CLAIMD_UNIX_NAME_MAX)
		return;
	for (i = 0; i < *n; i++)
		if (!strcmp(out[i], name))
			return;
	snprintf(out[(*n)++], CLAIMD_UNIX_NAME_MAX + 2, "%s", name);
}

int unix_listeners__aliases(const char *path, char out[][CLAIMD_UNIX_NAME_MAX + 2], int max)
{
	static const char *const links[] = { "/var/run", "/var/lock" };
	char dir[PATH_MAX], real[PATH_MAX], canon[PATH_MAX + CLAIMD_UNIX_NAME_MAX + 2],
		name[PATH_MAX + CLAIMD_UNIX_NAME_MAX + 2];
	const char *slash = strrchr(path, '/');
	size_t i;
	int n = 0;

	if (path[0] != '/' || !slash)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	/* Through the directory's real path; as it is when that is gone. */
	if (dir[0] && realpath(dir, real))
		snprintf(canon, sizeof(canon), "%s%s", strcmp(real, "/") ? real : "", slash);
	else
		snprintf(canon, sizeof(canon), "%s", path);
	alias_add(path, canon, out, &n, max);
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		size_t len;

		if (!realpath(links[i], real) || !strcmp(real, links[i]))
			continue;
		len = strlen(real);
		if (!strncmp(canon, real, len) && canon[len] == '/') {
			snprintf(name, sizeof(name), "%s%s", links[i], canon + len);
			alias_add(path, name, out, &n, max);
		}
	}
	return n;
}

/* The process (not self) holding the socket of inode ino, or 0. */
static __u32 holder_of(unsigned long ino)
{
	char want[48], path[600], link[48];
	__u32 self = getpid(), found = 0;
	DIR *proc = opendir("/proc");
	struct dirent *p;

	if (!proc)
		return 0;
	snprintf(want, sizeof(want), "socket:[%lu]", ino);
	while (!found && (p = readdir(proc))) {
		struct dirent *f;
		DIR *fds;

		if (!isdigit((unsigned char)p->d_name[0]) || (__u32)atoi(p->d_name) == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((f = readdir(fds))) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s", p->d_name, f->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = 0;
			if (!strcmp(link, want)) {
				found = atoi(p->d_name);
				break;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

int unix_listeners__each(unix_listener_fn fn, void *arg)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[512];
	int rc = 0;

	if (!f)
		return -1;
	while (!rc && fgets(line, sizeof(line), f)) {
		unsigned int refs, proto, flags, type, st;
		unsigned long ino;
		char name[CLAIMD_UNIX_NAME_MAX + 2] = "";

		if (sscanf(line, "%*[0-9a-f]: %x %x %x %x %x %lu %109s", &refs, &proto, &flags,
			   &type, &st, &ino, name) < 7 ||
		    !(flags & SO_ACCEPTCON_FLAG) || type != UNIX_STREAM_TYPE || !name[0])
			continue;
		rc = fn(name, ino, arg);
	}
	fclose(f);
	return rc;
}

struct find_ask {
	__u64 hash;
	char *path;
	size_t len;
	unsigned long ino;
};

static int find_one(const char *name, unsigned long ino, void *arg)
{
	struct find_ask *ask = arg;

	if (unix_listeners__hash(name) != ask->hash)
		return 0;
	snprintf(ask->path, ask->len, "%s", name);
	ask->ino = ino;
	return 1;
}

int unix_listeners__find(__u64 hash, char *path, size_t len, __u32 *tgid)
{
	struct find_ask ask = { .hash = hash, .path = path, .len = len };

	if (tgid)
		*tgid = 0;
	if (!hash || unix_listeners__each(find_one, &ask) != 1)
		return -1;
	if (tgid)
		*tgid = holder_of(ask.ino);
	return 0;
}
