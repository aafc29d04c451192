// SPDX-License-Identifier: GPL-2.0
/*
 * TCP sockets of every process, from /proc; see procnet.h. A socket is matched
 * to its process through /proc/<pid>/fd ("socket:[inode]") and to its
 * addresses through /proc/<pid>/net/tcp{,6}, read once per network namespace.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "hashtab.h"
#include "kernel/procnet.h"

#define TCP_STATE_ESTABLISHED 0x01
#define TCP_STATE_SYN_SENT    0x02
#define TCP_STATE_CLOSE_WAIT  0x08
#define TCP_STATE_LISTEN      0x0a

struct sock_info {
	struct claimd_addr local, remote;
	unsigned int state;
};

struct netns {
	__u64 ino;		      /* as the kernel numbers it */
	struct hashtab *by_inode;     /* inode -> struct sock_info */
	struct hashtab *listen_ports; /* port -> (void *)1 */
};

static int parse_hex_addr(const char *s, int v6, struct claimd_addr *a)
{
	unsigned int words[4], port;
	int i;

	memset(a, 0, sizeof(*a));
	if (!v6) {
		if (sscanf(s, "%8x:%4x", &words[0], &port) != 2)
			return -EINVAL;
		a->addr[10] = a->addr[11] = 0xff;
		memcpy(&a->addr[12], &words[0], 4);
	} else {
		/* All 32 digits there: sscanf alone stops early, or reads past the end. */
		if (strspn(s, "0123456789abcdefABCDEF") != 32)
			return -EINVAL;
		for (i = 0; i < 4; i++)
			if (sscanf(s + i * 8, "%8x", &words[i]) != 1)
				return -EINVAL;
		if (s[32] != ':' || sscanf(s + 33, "%4x", &port) != 1)
			return -EINVAL;
		memcpy(a->addr, words, 16);
	}
	a->port = port;
	return 0;
}

int procnet__parse_line(const char *line, int v6, struct claimd_addr *local,
			struct claimd_addr *remote, unsigned int *state, unsigned long *inode)
{
	char laddr[64], raddr[64];
	unsigned int st;
	unsigned long ino;

	/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
	if (sscanf(line, " %*d: %63s %63s %x %*s %*s %*s %*u %*u %lu", laddr, raddr, &st, &ino) !=
	    4)
		return -EINVAL;
	if (parse_hex_addr(laddr, v6, local) || parse_hex_addr(raddr, v6, remote))
		return -EINVAL;
	*state = st;
	*inode = ino;
	return 0;
}

static void read_tcp_table(struct netns *ns, __u32 pid, int v6)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/net/tcp%s", pid, v6 ? "6" : "");
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(line, sizeof(line), f)) { /* header */
		fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		struct sock_info *si = calloc(1, sizeof(*si));
		unsigned long ino;

		if (!si)
			break;
		if (procnet__parse_line(line, v6, &si->local, &si->remote, &si->state, &ino) ||
		    !ino) {
			free(si);
			continue;
		}
		free(hashtab__put(ns->by_inode, &ino, sizeof(ino), si, NULL));
		if (si->state == TCP_STATE_LISTEN)
			hashtab__put(ns->listen_ports, &si->local.port, sizeof(si->local.port),
				     (void *)1, NULL);
	}
	fclose(f);
}

static int free_netns(const struct hashtab_entry *e, void *ctx)
{
	struct netns *ns = e->value;

	(void)ctx;
	hashtab__free_all(ns->by_inode);
	hashtab__free(ns->listen_ports);
	free(ns);
	return 0;
}

static struct netns *netns_of(struct hashtab *all, __u32 pid)
{
	char path[64], link[64];
	struct netns *ns;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/ns/net", pid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return NULL;
	link[n] = 0;
	ns = hashtab__get(all, link, n);
	if (ns)
		return ns;
	ns = calloc(1, sizeof(*ns));
	if (!ns)
		return NULL;
	sscanf(link, "net:[%llu]", (unsigned long long *)&ns->ino);
	ns->by_inode = hashtab__new();
	ns->listen_ports = hashtab__new();
	if (!ns->by_inode || !ns->listen_ports) {
		hashtab__free(ns->by_inode);
		hashtab__free(ns->listen_ports);
		free(ns);
		return NULL;
	}
	read_tcp_table(ns, pid, 0);
	read_tcp_table(ns, pid, 1);
	hashtab__put(all, link, n, ns, NULL);
	return ns;
}

static void scan_fds(__u32 pid, struct netns *ns,
		     void (*found)(const struct procnet_sock *s, void *ctx), void *ctx)
{
	char path[64], link[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/fd", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct procnet_sock s = { .tgid = pid, .netns = ns->ino };
		struct sock_info *si;
		unsigned long ino;
		ssize_t n;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (sscanf(link, "socket:[%lu]", &ino) != 1)
			continue;
		si = hashtab__get(ns->by_inode, &ino, sizeof(ino));
		if (!si)
			continue; /* not TCP */
		s.fd = atoi(de->d_name);
		s.ino = ino;
		s.local = si->local;
		s.remote = si->remote;
		if (si->state == TCP_STATE_LISTEN)
			s.role = CLAIMD_ROLE_LISTENER;
		else if (si->state != TCP_STATE_ESTABLISHED && si->state != TCP_STATE_CLOSE_WAIT &&
			 si->state != TCP_STATE_SYN_SENT)
			continue;
		else if (hashtab__get(ns->listen_ports, &si->local.port, sizeof(si->local.port)))
			s.role = CLAIMD_ROLE_INBOUND; /* accepted from a listener here */
		else
			s.role = CLAIMD_ROLE_OUTBOUND;
		found(&s, ctx);
	}
	closedir(d);
}

/* Process pid's sockets, its namespace's tables read into all once: 1, or 0 (gone, not ours). */
static int scan_pid(struct hashtab *all, __u32 pid,
		    void (*found)(const struct procnet_sock *s, void *ctx), void *ctx)
{
	struct netns *ns = netns_of(all, pid);

	if (!ns)
		return 0;
	scan_fds(pid, ns, found, ctx);
	return 1;
}

static void netns_all_free(struct hashtab *all)
{
	hashtab__for_each(all, free_netns, NULL);
	hashtab__free(all);
}

int procnet__scan(__u32 self, void (*found)(const struct procnet_sock *s, void *ctx), void *ctx)
{
	struct hashtab *all = hashtab__new();
	struct dirent *de;
	int procs = 0;
	DIR *d;

	if (!all)
		return -ENOMEM;
	d = opendir("/proc");
	if (!d) {
		hashtab__free(all);
		return -errno;
	}
	while ((de = readdir(d))) {
		__u32 pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtoul(de->d_name, NULL, 10);
		if (pid != self)
			procs += scan_pid(all, pid, found, ctx);
	}
	closedir(d);
	netns_all_free(all);
	return procs;
}

int procnet__scan_pid(__u32 pid, void (*found)(const struct procnet_sock *s, void *ctx), void *ctx)
{
	struct hashtab *all = hashtab__new();
	int n;

	if (!all)
		return -ENOMEM;
	n = scan_pid(all, pid, found, ctx);
	netns_all_free(all);
	return n;
}
