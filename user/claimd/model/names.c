// SPDX-License-Identifier: GPL-2.0
/* Service and callee naming; see names.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hashtab.h"
#include "host/unix_listeners.h"
#include "model/names.h"
#include "unixaddr.h"

#define NAME_MAX_LEN 128
#define ENV_MAX	     (256 * 1024)

struct proc_info {
	char comm[CLAIMD_COMM_LEN + 1];
	char service[NAME_MAX_LEN]; /* CLAIMD_SERVICE, or empty */
	int listening;		    /* listeners it holds: it serves */
	struct hashtab *by_port;    /* port -> char * "<name>" for that port */
};

struct listener {
	__u32 tgid;
	struct claimd_addr local;
	char *name; /* a departed one's: its service's name */
	struct listener *next;
};

#define DEPARTED_MAX 1024 /* listeners gone whose names are kept */

struct names {
	struct hashtab *procs;	      /* tgid -> struct proc_info */
	struct hashtab *listeners;    /* port -> struct listener list */
	struct hashtab *departed;     /* port -> struct listener list: gone, named */
	int n_departed;		      /* entries in departed */
	struct hashtab *callees;      /* struct claimd_addr -> char * "ip:port" */
	struct hashtab *mapped;	      /* struct claimd_addr -> char * name from --names */
	struct hashtab *remote;	      /* addr + name -> char * name, as the fleet gave it */
	struct hashtab *socket_files; /* a socket file name's hash -> struct socket_file */
	names_remote_fn remote_fn;    /* names off this host, from their own hosts */
	void *remote_ctx;
	struct claimd_addr *local_addrs;
	int n_local;
	unsigned long generation; /* bumped when a name may have changed */
};

unsigned long names__generation(const struct names *n)
{
	return n->generation;
}

static void load_local_addrs(struct names *n)
{
	struct ifaddrs *ifa, *i;
	int cap = 0;

	free(n->local_addrs);
	n->local_addrs = NULL;
	n->n_local = 0;
	if (getifaddrs(&ifa))
		return;
	for (i = ifa; i; i = i->ifa_next) {
		struct claimd_addr a = { 0 };

		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			a.addr[10] = a.addr[11] = 0xff;
			memcpy(&a.addr[12], &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			memcpy(a.addr, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		if (n->n_local == cap) {
			void *p = realloc(n->local_addrs, (cap ? cap * 2 : 8) * sizeof(a));

			if (!p)
				break;
			n->local_addrs = p;
			cap = cap ? cap * 2 : 8;
		}
		n->local_addrs[n->n_local++] = a;
	}
	freeifaddrs(ifa);
}

int names__use_netns(struct names *n, const char *path)
{
	int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int target = open(path, O_RDONLY | O_CLOEXEC);
	int ret = -1;

	if (self < 0 || target < 0 || setns(target, CLONE_NEWNET))
		goto out;
	n->generation++;
	load_local_addrs(n);
	if (setns(self, CLONE_NEWNET)) {
		/* Stuck in the other namespace: nothing claimd binds later would be right. */
		perror("claimd: cannot return to its own network namespace");
		abort();
	}
	ret = 0;
out:
	if (self >= 0)
		close(self);
	if (target >= 0)
		close(target);
	return ret;
}

void names__set_remote(struct names *n, names_remote_fn fn, void *ctx)
{
	n->remote_fn = fn;
	n->remote_ctx = ctx;
	n->generation++;
}

void names__remote_changed(struct names *n)
{
	n->generation++;
}

/* The name another host gives a callee known here by address: the same
 * string for the same address and name (edges and classes compare them). */
static const char *remote_name(struct names *n, const struct claimd_addr *a)
{
	char buf[ADDR_STR_MAX], key[sizeof(*a) + NAME_MAX_LEN], *name;
	const char *r;
	size_t len;

	if (!n->remote_fn)
		return NULL;
	addr__format(a, buf, sizeof(buf));
	r = n->remote_fn(n->remote_ctx, buf);
	if (!r || !*r || strlen(r) >= NAME_MAX_LEN)
		return NULL;
	memcpy(key, a, sizeof(*a));
	len = strlen(r);
	memcpy(key + sizeof(*a), r, len);
	name = hashtab__get(n->remote, key, sizeof(*a) + len);
	if (name)
		return name;
	name = strdup(r);
	if (!name)
		return NULL;
	hashtab__put(n->remote, key, sizeof(*a) + len, name, NULL);
	return name;
}

struct names *names__new(void)
{
	struct names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->procs = hashtab__new();
	n->listeners = hashtab__new();
	n->departed = hashtab__new();
	n->callees = hashtab__new();
	n->mapped = hashtab__new();
	n->remote = hashtab__new();
	n->socket_files = hashtab__new();
	if (!n->procs || !n->listeners || !n->departed || !n->callees || !n->mapped || !n->remote ||
	    !n->socket_files) {
		names__free(n);
		return NULL;
	}
	load_local_addrs(n);
	return n;
}

static void proc_free(struct proc_info *p)
{
	if (!p)
		return;
	hashtab__free_all(p->by_port);
	free(p);
}

static int free_proc(const struct hashtab_entry *e, void *ctx)
{
	(void)ctx;
	proc_free(e->value);
	return 0;
}

/* Frees a list of listeners; how many there were. */
static int listeners_free(struct listener *l)
{
	struct listener *next;
	int n = 0;

	for (; l; l = next, n++) {
		next = l->next;
		free(l->name);
		free(l);
	}
	return n;
}

static int free_listeners(const struct hashtab_entry *e, void *ctx)
{
	(void)ctx;
	listeners_free(e->value);
	return 0;
}

void names__free(struct names *n)
{
	if (!n)
		return;
	if (n->procs)
		hashtab__for_each(n->procs, free_proc, NULL);
	if (n->listeners)
		hashtab__for_each(n->listeners, free_listeners, NULL);
	if (n->departed)
		hashtab__for_each(n->departed, free_listeners, NULL);
	hashtab__free(n->departed);
	hashtab__free_all(n->mapped);
	hashtab__free_all(n->remote);
	hashtab__free_all(n->socket_files);
	hashtab__free(n->procs);
	hashtab__free(n->listeners);
	hashtab__free_all(n->callees);
	free(n->local_addrs);
	free(n);
}

/* CLAIMD_SERVICE from /proc/<pid>/environ, if set. */
static void read_service_env(__u32 tgid, char *out, size_t len)
{
	static const char key[] = "CLAIMD_SERVICE=";
	char path[64], *buf, *p, *end;
	ssize_t got, total = 0;
	int fd;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/environ", tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	buf = malloc(ENV_MAX);
	if (!buf) {
		close(fd);
		return;
	}
	while (total < ENV_MAX - 1 && (got = read(fd, buf + total, ENV_MAX - 1 - total)) > 0)
		total += got;
	close(fd);
	buf[total] = 0;
	for (p = buf, end = buf + total; p < end; p += strlen(p) + 1) {
		if (!strncmp(p, key, sizeof(key) - 1) && p[sizeof(key) - 1]) {
			snprintf(out, len, "%s", p + sizeof(key) - 1);
			break;
		}
	}
	free(buf);
}

static void read_comm(__u32 tgid, char *out, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(out, len, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

/* service: CLAIMD_SERVICE as the kernel read it from the process (NULL: not read). */
static struct proc_info *proc_get_seen(struct names *n, __u32 tgid, const char *comm,
				       const char *service)
{
	struct proc_info *p = hashtab__get(n->procs, &tgid, sizeof(tgid));

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->by_port = hashtab__new();
	if (!p->by_port) {
		free(p);
		return NULL;
	}
	/* A record's comm need not end in a NUL: never read past its 16 bytes. */
	if (comm)
		snprintf(p->comm, sizeof(p->comm), "%.*s", CLAIMD_COMM_LEN, comm);
	read_comm(tgid, p->comm, sizeof(p->comm));
	if (!p->comm[0])
		snprintf(p->comm, sizeof(p->comm), "pid%u", tgid);
	read_service_env(tgid, p->service, sizeof(p->service));
	/* Gone before claimd could read it: its environment as the kernel read it. */
	if (!p->service[0] && service)
		snprintf(p->service, sizeof(p->service), "%.*s", CLAIMD_SERVICE_LEN - 1, service);
	hashtab__put(n->procs, &tgid, sizeof(tgid), p, NULL);
	return p;
}

static struct proc_info *proc_get(struct names *n, __u32 tgid, const char *comm)
{
	return proc_get_seen(n, tgid, comm, NULL);
}

void names__seen(struct names *n, __u32 tgid, const char *comm, const char *service)
{
	proc_get_seen(n, tgid, comm, service);
}

const char *names__service(struct names *n, __u32 tgid, __u16 port, const char *comm)
{
	struct proc_info *p = proc_get(n, tgid, comm);
	char buf[NAME_MAX_LEN + 8], *name;

	if (!p)
		return "?";
	if (p->service[0])
		return p->service;
	name = hashtab__get(p->by_port, &port, sizeof(port));
	if (name)
		return name;
	snprintf(buf, sizeof(buf), "%s:%u", p->comm, port);
	name = strdup(buf);
	if (!name)
		return "?";
	hashtab__put(p->by_port, &port, sizeof(port), name, NULL);
	return name;
}

const char *names__process(struct names *n, __u32 tgid, const char *comm)
{
	struct proc_info *p = proc_get(n, tgid, comm);

	if (!p)
		return "?";
	return p->service[0] ? p->service : p->comm;
}

bool names__addr_is_any(const struct claimd_addr *a)
{
	static const __u8 any6[16];
	static const __u8 any4[16] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a->addr, any6, 16) || !memcmp(a->addr, any4, 16);
}

bool names__addr_is_loopback(const struct claimd_addr *a)
{
	static const __u8 lo6[16] = { [15] = 1 };
	static const __u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(a->addr, lo6, 16))
		return true;
	return !memcmp(a->addr, v4mapped, 12) && a->addr[12] == 127;
}

static bool addr_is_local(const struct names *n, const struct claimd_addr *a)
{
	int i;

	if (names__addr_is_loopback(a))
		return true;
	for (i = 0; i < n->n_local; i++)
		if (!memcmp(n->local_addrs[i].addr, a->addr, 16))
			return true;
	return false;
}

/*
 * A service on a socket file is "<comm>:<path>" (its port a hash's fold,
 * headers/unixaddr.h, says nothing). A "<comm>:<port>" given before the
 * listener was known stays allocated: a reader may hold it until the
 * generation changes.
 */
static void name_socket_file(struct proc_info *p, const struct claimd_addr *local)
{
	char path[CLAIMD_UNIX_NAME_MAX + 2], buf[NAME_MAX_LEN + CLAIMD_UNIX_NAME_MAX + 4], *name;
	__u16 port = local->port;

	if (p->service[0] ||
	    unix_listeners__find(claimd_addr_unix_hash(local), path, sizeof(path), NULL))
		return;
	snprintf(buf, sizeof(buf), "%s:%s", p->comm, path);
	name = strdup(buf);
	if (name)
		hashtab__put(p->by_port, &port, sizeof(port), name, NULL);
}

/*
 * A listener gone (tgid's, at local) by its service's name: the name
 * outlives it, so that a call to its address that fails once it is gone
 * (refused, or a socket file's connect, bpf/connects.c) is a call to that
 * service still, on the edge its calls had, not to an address. Until
 * another listens on its port; DEPARTED_MAX of them. 1 when kept.
 */
static int departed_put(struct names *n, __u32 tgid, const struct claimd_addr *local,
			const char *name)
{
	__u16 port = local->port;
	struct listener *head = hashtab__get(n->departed, &port, sizeof(port)), *l;

	for (l = head; l; l = l->next)
		if (!memcmp(l->local.addr, local->addr, 16))
			return 0;
	if (n->n_departed >= DEPARTED_MAX)
		return 0;
	l = calloc(1, sizeof(*l));
	if (!l)
		return 0;
	l->name = strdup(name);
	if (!l->name) {
		free(l);
		return 0;
	}
	l->tgid = tgid;
	l->local = *local;
	l->next = head;
	hashtab__put(n->departed, &port, sizeof(port), l, NULL);
	n->n_departed++;
	return 1;
}

static void departed_keep(struct names *n, __u32 tgid, const struct claimd_addr *local)
{
	departed_put(n, tgid, local, names__service(n, tgid, local->port, NULL));
}

int names__departed_add(struct names *n, const struct claimd_addr *local, const char *name)
{
	__u16 port = local->port;

	/* Someone listens there now: its name, not the one gone. */
	if (!name[0] || hashtab__get(n->listeners, &port, sizeof(port)))
		return 0;
	n->generation++;
	return departed_put(n, 0, local, name);
}

struct departed_walk {
	names_departed_fn fn;
	void *ctx;
};

static int departed_each(const struct hashtab_entry *e, void *arg)
{
	struct departed_walk *w = arg;
	const struct listener *l;

	for (l = e->value; l; l = l->next)
		w->fn(&l->local, l->name, w->ctx);
	return 0;
}

void names__each_departed(struct names *n, names_departed_fn fn, void *ctx)
{
	struct departed_walk w = { fn, ctx };

	hashtab__for_each(n->departed, departed_each, &w);
}

/* Another listens on port: the names of those gone from it go. */
static void departed_drop(struct names *n, __u16 port)
{
	n->n_departed -= listeners_free(hashtab__del(n->departed, &port, sizeof(port)));
}

/* The listener at port that answers for a, in the list l, or NULL. */
static const struct listener *listener_for(const struct names *n, const struct listener *l,
					   const struct claimd_addr *a)
{
	for (; l; l = l->next)
		if (!memcmp(l->local.addr, a->addr, 16) ||
		    (names__addr_is_any(&l->local) && addr_is_local(n, a)))
			return l;
	return NULL;
}

void names__listen(struct names *n, __u32 tgid, const struct claimd_addr *local, const char *comm,
		   bool closed)
{
	__u16 port = local->port;
	struct listener *head = hashtab__get(n->listeners, &port, sizeof(port));
	struct listener **pp, *l;
	struct proc_info *p;

	for (pp = &head; *pp; pp = &(*pp)->next) {
		if ((*pp)->tgid == tgid && !memcmp((*pp)->local.addr, local->addr, 16))
			break;
	}
	n->generation++;
	if (closed) {
		if (*pp) {
			departed_keep(n, tgid, local);
			p = hashtab__get(n->procs, &tgid, sizeof(tgid));
			if (p && p->listening > 0)
				p->listening--;
			l = *pp;
			*pp = l->next;
			free(l);
			hashtab__put(n->listeners, &port, sizeof(port), head, NULL);
			if (!head)
				hashtab__del(n->listeners, &port, sizeof(port));
		}
		return;
	}
	if (*pp)
		return;
	departed_drop(n, port);
	l = calloc(1, sizeof(*l));
	if (!l)
		return;
	l->tgid = tgid;
	l->local = *local;
	l->next = head;
	hashtab__put(n->listeners, &port, sizeof(port), l, NULL);
	/* Read its name while the process is surely there. */
	p = proc_get(n, tgid, comm);
	if (!p)
		return;
	p->listening++;
	if (claimd_addr_is_unix(local))
		name_socket_file(p, local);
}

bool names__listening(struct names *n, __u32 tgid)
{
	struct proc_info *p = hashtab__get(n->procs, &tgid, sizeof(tgid));

	return p && p->listening > 0;
}

/* The name of a callee no listener names, kept for the next ask. */
static const char *callee_keep(struct names *n, const struct claimd_addr *a, const char *text)
{
	char *name = strdup(text);

	if (!name)
		return "?";
	hashtab__put(n->callees, a, sizeof(*a), name, NULL);
	return name;
}

struct exiting {
	__u32 tgid;
	int n;
	struct claimd_addr addrs[64];
};

static int collect_listeners(const struct hashtab_entry *e, void *arg)
{
	struct exiting *x = arg;
	const struct listener *l;

	for (l = e->value; l && x->n < (int)(sizeof(x->addrs) / sizeof(x->addrs[0])); l = l->next)
		if (l->tgid == x->tgid)
			x->addrs[x->n++] = l->local;
	return 0;
}

void names__exit(struct names *n, __u32 tgid)
{
	struct exiting x = { .tgid = tgid };
	int i;

	n->generation++;
	/* Collect, then remove: the table may not change during a walk. */
	hashtab__for_each(n->listeners, collect_listeners, &x);
	for (i = 0; i < x.n; i++)
		names__listen(n, tgid, &x.addrs[i], NULL, true);
	proc_free(hashtab__del(n->procs, &tgid, sizeof(tgid)));
}

struct each_process {
	void (*fn)(__u32 tgid, void *ctx);
	void *ctx;
};

static int each_listener(const struct hashtab_entry *e, void *arg)
{
	const struct each_process *w = arg;
	const struct listener *l;

	for (l = e->value; l; l = l->next)
		w->fn(l->tgid, w->ctx);
	return 0;
}

void names__each_process(struct names *n, void (*fn)(__u32 tgid, void *ctx), void *ctx)
{
	struct each_process w = { .fn = fn, .ctx = ctx };

	hashtab__each_u32_key(n->procs, fn, ctx);
	hashtab__for_each(n->listeners, each_listener, &w);
}

#define SOCKET_FILES_MAX 4096 /* as many as the kernel's unix_served holds */

/* A name of a socket file seen listened on (names->socket_files). */
struct socket_file {
	__u64 bound; /* the hash of the name it was bound by */
	time_t seen; /* when last told listened on */
	char path[]; /* this name */
};

int names__socket_file(struct names *n, __u64 hash, const char *path, __u64 bound, time_t seen)
{
	size_t len = strlen(path) + 1;
	struct socket_file *f = hashtab__get(n->socket_files, &hash, sizeof(hash));
	int err;

	if (f) {
		if (seen > f->seen)
			f->seen = seen;
		return 0;
	}
	if (hashtab__count(n->socket_files) >= SOCKET_FILES_MAX)
		return 0;
	f = malloc(sizeof(*f) + len);
	if (!f)
		return 0;
	f->bound = bound;
	f->seen = seen;
	memcpy(f->path, path, len);
	hashtab__put(n->socket_files, &hash, sizeof(hash), f, &err);
	if (err) {
		free(f);
		return 0;
	}
	return 1;
}

struct socket_file_walk {
	names_socket_file_fn fn;
	void *ctx;
};

static int socket_file_each(const struct hashtab_entry *e, void *arg)
{
	struct socket_file_walk *w = arg;
	const struct socket_file *f = e->value;
	__u64 hash;

	memcpy(&hash, e->key, sizeof(hash));
	w->fn(hash, f->path, f->bound, f->seen, w->ctx);
	return 0;
}

void names__each_socket_file(struct names *n, names_socket_file_fn fn, void *ctx)
{
	struct socket_file_walk w = { fn, ctx };

	hashtab__for_each(n->socket_files, socket_file_each, &w);
}

/*
 * A callee over a socket file whose listener no record told: the process
 * /proc says listens there (its service, from now on a listener known),
 * else "unix:<path>" (its listener now, or one seen before), else the
 * address.
 */
static const char *unix_callee(struct names *n, const struct claimd_addr *a)
{
	char path[CLAIMD_UNIX_NAME_MAX + 2], buf[CLAIMD_UNIX_NAME_MAX + 8];
	__u64 hash = claimd_addr_unix_hash(a);
	const struct socket_file *seen = hashtab__get(n->socket_files, &hash, sizeof(hash));
	__u32 tgid;

	if (!unix_listeners__find(hash, path, sizeof(path), &tgid)) {
		if (tgid) {
			names__listen(n, tgid, a, NULL, false);
			return names__service(n, tgid, a->port, NULL);
		}
		snprintf(buf, sizeof(buf), "unix:%s", path);
	} else if (seen) {
		snprintf(buf, sizeof(buf), "unix:%s", seen->path);
	} else {
		addr__format(a, buf, sizeof(buf));
	}
	return callee_keep(n, a, buf);
}

/* The name a socket file at a was bound by, if a is another name of it: into *bound. */
static bool socket_file_alias(const struct names *n, const struct claimd_addr *a,
			      struct claimd_addr *bound)
{
	__u64 hash = claimd_addr_unix_hash(a);
	const struct socket_file *f;

	if (!claimd_addr_is_unix(a))
		return false;
	f = hashtab__get(n->socket_files, &hash, sizeof(hash));
	if (!f || f->bound == hash)
		return false;
	claimd_addr_unix(bound, f->bound);
	return true;
}

const char *names__callee(struct names *n, const struct claimd_addr *a)
{
	char buf[64], *name = hashtab__get(n->mapped, a, sizeof(*a));
	const struct listener *l;
	struct claimd_addr bound;

	if (name)
		return name;
	/* Another name of a socket file: the callee by the name it was bound by. */
	if (socket_file_alias(n, a, &bound))
		return names__callee(n, &bound);
	l = listener_for(n, hashtab__get(n->listeners, &a->port, sizeof(a->port)), a);
	if (l)
		return names__service(n, l->tgid, a->port, NULL);
	l = listener_for(n, hashtab__get(n->departed, &a->port, sizeof(a->port)), a);
	if (l)
		return l->name;
	name = hashtab__get(n->callees, a, sizeof(*a));
	if (name)
		return name;
	if (claimd_addr_is_unix(a))
		return unix_callee(n, a);
	name = (char *)remote_name(n, a);
	if (name)
		return name;
	addr__format(a, buf, sizeof(buf));
	return callee_keep(n, a, buf);
}

static bool addr_is_link_local(const struct claimd_addr *a)
{
	return a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80;
}

static bool addr_is_v4(const struct claimd_addr *a)
{
	static const __u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a->addr, v4mapped, 12);
}

struct addr_walk {
	struct names *n;
	void (*fn)(const char *service, const struct claimd_addr *a, void *ctx);
	void *ctx;
};

static int walk_listeners(const struct hashtab_entry *e, void *arg)
{
	struct addr_walk *w = arg;
	const struct listener *l;
	int i;

	for (l = e->value; l; l = l->next) {
		const char *service = names__service(w->n, l->tgid, l->local.port, NULL);

		if (!names__addr_is_any(&l->local)) {
			if (!names__addr_is_loopback(&l->local) && !addr_is_link_local(&l->local))
				w->fn(service, &l->local, w->ctx);
			continue;
		}
		for (i = 0; i < w->n->n_local; i++) {
			struct claimd_addr a = w->n->local_addrs[i];

			if (names__addr_is_loopback(&a) || addr_is_link_local(&a) ||
			    (addr_is_v4(&l->local) && !addr_is_v4(&a)))
				continue;
			a.port = l->local.port;
			w->fn(service, &a, w->ctx);
		}
	}
	return 0;
}

void names__for_each_address(struct names *n,
			     void (*fn)(const char *service, const struct claimd_addr *a,
					void *ctx),
			     void *ctx)
{
	struct addr_walk w = { n, fn, ctx };

	hashtab__for_each(n->listeners, walk_listeners, &w);
}

struct map_entry {
	struct claimd_addr addr;
	char name[NAME_MAX_LEN];
};

int names__parse_map(struct names *n, const char *text, size_t len, char *err, size_t errlen)
{
	struct map_entry *entries = NULL;
	size_t count = 0, cap = 0, lineno = 0, i;
	const char *p = text, *end = text + len;
	int ret = -1;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[512], addr[256], name[256], extra[2];
		int fields;

		lineno++;
		if (l >= sizeof(line)) {
			snprintf(err, errlen, "line %zu: longer than %zu bytes", lineno,
				 sizeof(line) - 1);
			goto out;
		}
		memcpy(line, p, l);
		line[l] = 0;
		p += l + (nl ? 1 : 0);
		if (memchr(line, 0, l)) {
			snprintf(err, errlen, "line %zu: contains a NUL byte", lineno);
			goto out;
		}
		line[strcspn(line, "#\r")] = 0;
		fields = sscanf(line, "%255s %255s %1s", addr, name, extra);
		if (fields <= 0)
			continue; /* blank or comment */
		if (fields != 2) {
			snprintf(err, errlen, "line %zu: expected 'ip:port name'", lineno);
			goto out;
		}
		if (strlen(addr) >= sizeof(addr) - 1) { /* sscanf split a longer word */
			snprintf(err, errlen, "line %zu: address longer than %zu bytes", lineno,
				 sizeof(addr) - 2);
			goto out;
		}
		if (strlen(name) >= NAME_MAX_LEN) {
			snprintf(err, errlen, "line %zu: name longer than %d bytes", lineno,
				 NAME_MAX_LEN - 1);
			goto out;
		}
		if (count == cap) {
			void *q = realloc(entries, (cap ? cap * 2 : 16) * sizeof(*entries));

			if (!q) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			entries = q;
			cap = cap ? cap * 2 : 16;
		}
		if (addr__parse(addr, &entries[count].addr)) {
			snprintf(err, errlen, "line %zu: '%s' is not ip:port", lineno, addr);
			goto out;
		}
		snprintf(entries[count].name, sizeof(entries[count].name), "%s", name);
		count++;
	}
	/* All lines are good: only now does anything change. */
	for (i = 0; i < count; i++) {
		char *copy = strdup(entries[i].name);

		if (copy)
			free(hashtab__put(n->mapped, &entries[i].addr, sizeof(entries[i].addr),
					  copy, NULL));
	}
	ret = (int)count;
	n->generation++;
out:
	free(entries);
	return ret;
}

int names__load_map(struct names *n, const char *path)
{
	char err[256], *text;
	FILE *f = fopen(path, "r");
	long size;
	int ret;

	if (!f) {
		fprintf(stderr, "claimd: error: cannot open the names file %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	if (size < 0 || size > (16 << 20)) {
		fclose(f);
		fprintf(stderr, "claimd: error: names file %s is too large\n", path);
		return -1;
	}
	text = malloc(size + 1);
	if (!text || fread(text, 1, size, f) != (size_t)size) {
		free(text);
		fclose(f);
		fprintf(stderr, "claimd: error: cannot read the names file %s\n", path);
		return -1;
	}
	fclose(f);
	ret = names__parse_map(n, text, size, err, sizeof(err));
	free(text);
	if (ret < 0) {
		fprintf(stderr, "claimd: error: names file %s: %s\n", path, err);
		return -1;
	}
	return 0;
}
