// SPDX-License-Identifier: GPL-2.0
/* Edge classes into the kernel; see classes.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "model/classes.h"
#include "hashtab.h"
#include "model/names.h"

struct instance_key {
	uint32_t tgid;
	uint16_t port;
	uint16_t pad;
};

struct classes {
	int map_fd;
	struct hashtab *instances; /* instance_key -> char *service */
	struct hashtab *callees;   /* struct claimd_addr -> char *callee name */
	struct hashtab *written;   /* struct claimd_edge_key -> class (as a pointer) */
	struct hashtab *edges_in;  /* "caller\0callee" -> (void *)1, edges in the kernel */
	struct hashtab *refused;   /* struct claimd_edge_key -> (void *)1: the map was full */
	unsigned long refusals;	   /* keys newly refused, since start */
	unsigned long changes;	   /* names noted or forgotten: classes__changes */
};

struct classes *classes__new(int map_fd)
{
	struct classes *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->map_fd = map_fd;
	c->instances = hashtab__new();
	c->callees = hashtab__new();
	c->written = hashtab__new();
	c->edges_in = hashtab__new();
	c->refused = hashtab__new();
	if (!c->instances || !c->callees || !c->written || !c->edges_in || !c->refused) {
		classes__free(c);
		return NULL;
	}
	return c;
}

void classes__free(struct classes *c)
{
	if (!c)
		return;
	hashtab__free_all(c->instances);
	hashtab__free_all(c->callees);
	hashtab__free(c->written);
	hashtab__free(c->edges_in);
	hashtab__free(c->refused);
	free(c);
}

/* Sets key -> a copy of name, if it is new or changed. */
static void remember(struct classes *c, struct hashtab *h, const void *key, size_t len,
		     const char *name)
{
	char *old = hashtab__get(h, key, len), *copy;

	if (old && !strcmp(old, name))
		return;
	c->changes++;
	copy = strdup(name);
	if (!copy)
		return;
	free(hashtab__put(h, key, len, copy, NULL));
}

void classes__note_instance(struct classes *c, uint32_t tgid, uint16_t port, const char *service)
{
	struct instance_key ik = { .tgid = tgid, .port = port };

	remember(c, c->instances, &ik, sizeof(ik), service);
}

void classes__note_callee(struct classes *c, const struct claimd_addr *a, const char *name)
{
	remember(c, c->callees, a, sizeof(*a), name);
}

void classes__note_ingress(struct classes *c, const struct claimd_ingress *r, struct names *names)
{
	int i;

	classes__note_instance(c, r->tgid, r->local.port,
			       names__service(names, r->tgid, r->local.port, r->comm));
	for (i = 0; i < r->n_egress && i < CLAIMD_EGRESS_MAX; i++)
		classes__note_callee(c, &r->egress[i].callee,
				     names__callee(names, &r->egress[i].callee));
}

struct forget_ctx {
	uint32_t tgid;
	int n;
	struct instance_key keys[256];
};

static int collect_instances(const struct hashtab_entry *e, void *arg)
{
	struct forget_ctx *f = arg;
	const struct instance_key *k = (const void *)e->key;

	if (k->tgid == f->tgid && f->n < 256)
		f->keys[f->n++] = *k;
	return 0;
}

void classes__forget_process(struct classes *c, uint32_t tgid)
{
	struct forget_ctx f = { .tgid = tgid };
	int i;

	hashtab__for_each(c->instances, collect_instances, &f);
	for (i = 0; i < f.n; i++)
		free(hashtab__del(c->instances, &f.keys[i], sizeof(f.keys[i])));
	c->changes += f.n;
}

unsigned long classes__changes(const struct classes *c)
{
	return c->changes;
}

/* An edge class the kernel should hold, and the edge it comes from. */
struct wanted {
	__u8 cls;
	bool failed; /* the kernel refused it (map full) */
	size_t pair_len;
	char pair[]; /* "caller\0callee\0" */
};

struct sync_ctx {
	struct classes *c;
	struct edges *e;
	double now;
	time_t wall;
	struct hashtab *want; /* edge key -> struct wanted */
	struct hashtab *written;
	struct hashtab *edges_in;
	struct hashtab *refused;
	struct hashtab *by_service; /* service name -> struct group of instance keys */
	struct hashtab *by_callee;  /* callee name -> struct group of addresses */
	int changes;
	int err;
};

/* Keys grouped by name: a service's instances, a callee's addresses. */
struct group {
	size_t n, cap, key_size;
	unsigned char *keys;
};

static int group_add(struct hashtab *by_name, const char *name, const void *key, size_t key_size)
{
	struct group *g = hashtab__get(by_name, name, strlen(name));

	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g || hashtab__put(by_name, name, strlen(name), g, NULL) ||
		    !hashtab__get(by_name, name, strlen(name))) {
			free(g);
			return -ENOMEM;
		}
		g->key_size = key_size;
	}
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 4;
		unsigned char *k = realloc(g->keys, cap * key_size);

		if (!k)
			return -ENOMEM;
		g->keys = k;
		g->cap = cap;
	}
	memcpy(g->keys + g->n++ * key_size, key, key_size);
	return 0;
}

static int group_instance(const struct hashtab_entry *he, void *arg)
{
	return group_add(arg, he->value, he->key, sizeof(struct instance_key));
}

static int group_callee(const struct hashtab_entry *he, void *arg)
{
	return group_add(arg, he->value, he->key, sizeof(struct claimd_addr));
}

static int group_free(const struct hashtab_entry *he, void *arg)
{
	struct group *g = he->value;

	(void)arg;
	free(g->keys);
	free(g);
	return 0;
}

/*
 * An edge with a class: the kernel should hold it for every instance of its
 * caller and every address of its callee. Work in edges, then in the keys
 * wanted: no instance is paired with a callee it has no edge to.
 */
static void want_edge(struct edge *ed, void *arg)
{
	struct sync_ctx *s = arg;
	struct group *callers, *callees;
	struct edge_class cls;
	char pk[512];
	size_t n, i, j;

	if (ed->root || s->err)
		return;
	callers = hashtab__get(s->by_service, ed->caller, strlen(ed->caller));
	callees = hashtab__get(s->by_callee, ed->callee, strlen(ed->callee));
	if (!callers || !callees)
		return;
	cls = edges__effective(s->e, ed, s->now, s->wall);
	if (cls.cls == CLAIM_CLASS_UNKNOWN)
		return;
	n = edges__pair_key(ed->caller, ed->callee, pk, sizeof(pk));
	for (i = 0; i < callers->n; i++) {
		const struct instance_key *ik =
			(const void *)(callers->keys + i * callers->key_size);

		for (j = 0; j < callees->n; j++) {
			const struct claimd_addr *a =
				(const void *)(callees->keys + j * callees->key_size);
			struct claimd_edge_key k = { .tgid = ik->tgid,
						     .local_port = ik->port,
						     .callee_port = a->port };
			struct wanted *w = calloc(1, sizeof(*w) + n);

			if (!w) {
				s->err = -ENOMEM;
				return;
			}
			memcpy(k.callee_addr, a->addr, 16);
			w->cls = cls.cls;
			w->pair_len = n;
			memcpy(w->pair, pk, n);
			free(hashtab__put(s->want, &k, sizeof(k), w, NULL));
		}
	}
}

/* First make room: what the kernel holds and should not any more goes. */
static int delete_unwanted(const struct hashtab_entry *he, void *arg)
{
	struct sync_ctx *s = arg;

	if (hashtab__get(s->want, he->key, he->key_len))
		return 0;
	if (bpf_map_delete_elem(s->c->map_fd, he->key) && errno != ENOENT)
		s->err = -errno;
	else
		s->changes++;
	return 0;
}

/* Then write what changed. A full map refuses: counted, and tried again next time. */
static int write_wanted(const struct hashtab_entry *he, void *arg)
{
	struct sync_ctx *s = arg;
	uintptr_t had = (uintptr_t)hashtab__get(s->c->written, he->key, he->key_len);
	struct wanted *w = he->value;

	if (had != w->cls && bpf_map_update_elem(s->c->map_fd, he->key, &w->cls, BPF_ANY)) {
		if (errno != E2BIG && errno != ENOMEM)
			s->err = -errno;
		w->failed = true;
		if (!hashtab__get(s->c->refused, he->key, he->key_len))
			s->c->refusals++;
		hashtab__put(s->refused, he->key, he->key_len, (void *)1, NULL);
		return 0;
	}
	if (had != w->cls)
		s->changes++;
	hashtab__put(s->written, he->key, he->key_len, (void *)(uintptr_t)w->cls, NULL);
	if (w->pair_len)
		hashtab__put(s->edges_in, w->pair, w->pair_len, (void *)1, NULL);
	return 0;
}

static int free_wanted(const struct hashtab_entry *he, void *arg)
{
	(void)arg;
	free(he->value);
	return 0;
}

int classes__sync(struct classes *c, struct edges *e, double now, time_t wall)
{
	struct sync_ctx s = { .c = c, .e = e, .now = now, .wall = wall };

	s.want = hashtab__new();
	s.written = hashtab__new();
	s.edges_in = hashtab__new();
	s.refused = hashtab__new();
	if (!s.want || !s.written || !s.edges_in || !s.refused) {
		hashtab__free(s.want);
		hashtab__free(s.written);
		hashtab__free(s.edges_in);
		hashtab__free(s.refused);
		return -ENOMEM;
	}
	s.by_service = hashtab__new();
	s.by_callee = hashtab__new();
	if (s.by_service && s.by_callee &&
	    !hashtab__for_each(c->instances, group_instance, s.by_service) &&
	    !hashtab__for_each(c->callees, group_callee, s.by_callee))
		edges__for_each(e, want_edge, &s);
	else
		s.err = -ENOMEM;
	if (s.by_service)
		hashtab__for_each(s.by_service, group_free, NULL);
	if (s.by_callee)
		hashtab__for_each(s.by_callee, group_free, NULL);
	hashtab__free(s.by_service);
	hashtab__free(s.by_callee);
	if (s.err) {
		/* What is wanted is not all known: the kernel keeps what it has. */
		hashtab__for_each(s.want, free_wanted, NULL);
		hashtab__free(s.want);
		hashtab__free(s.written);
		hashtab__free(s.edges_in);
		hashtab__free(s.refused);
		return s.err;
	}
	hashtab__for_each(c->written, delete_unwanted, &s);
	hashtab__for_each(s.want, write_wanted, &s);
	hashtab__for_each(s.want, free_wanted, NULL);
	hashtab__free(s.want);
	hashtab__free(c->written);
	hashtab__free(c->edges_in);
	hashtab__free(c->refused);
	c->written = s.written;
	c->edges_in = s.edges_in;
	c->refused = s.refused;
	return s.err ? s.err : s.changes;
}

size_t classes__refused(const struct classes *c)
{
	return hashtab__count(c->refused);
}

unsigned long classes__refusals(const struct classes *c)
{
	return c->refusals;
}

bool classes__in_kernel(const struct classes *c, const char *caller, const char *callee)
{
	char pk[512];
	size_t n = edges__pair_key(caller, callee, pk, sizeof(pk));

	return n && hashtab__get(c->edges_in, pk, n);
}
