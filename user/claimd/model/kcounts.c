// SPDX-License-Identifier: GPL-2.0
/* The kernel's counts into edges and services; see kcounts.h. */
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "model/classes.h"
#include "counts.h"
#include "model/edges.h"
#include "hashtab.h"
#include "model/kcounts.h"
#include "kernel/service_slots.h"
#include "model/names.h"
#include "model/roots.h"
#include "pidlist.h"

#define BATCH 256

/* What a counter had at the last read (summed over CPUs), and where it goes. */
struct edge_entry {
	struct claimd_edge_counts last;
	struct edge *edge;
	unsigned long names_gen;
};

struct service_entry {
	struct claimd_service_counts last;
	struct service_stats *service;
	unsigned long names_gen;
};

struct poll_ctx;

/* A kind of counter's dirty lists, and where their keys' values are. */
struct dirty_kind {
	int list_fd;
	size_t list_size, key_size;
	/* One key's counts read from the kernel and taken; a key gone meanwhile is skipped. */
	void (*fetch)(struct poll_ctx *x, const void *key);
	/* A gone process's key: its counts dropped from the kernel's map. */
	void (*drop)(const struct kcounts *k, const void *key);
	__u32 *read; /* per CPU: keys of the list read last taken already */
};

/* Every counter is read at least this often, whatever the dirty lists say. */
#define FULL_READ_S 30.0

struct kcounts {
	struct kcounts_maps m;
	int edge_fd, service_fd;
	int ncpus;
	double last_full;	  /* monotonic seconds */
	uint64_t full_reads;	  /* reads of every counter */
	uint64_t dirty_reads;	  /* reads of the changed ones */
	struct hashtab *edges;	  /* struct claimd_edge_key -> struct edge_entry */
	struct hashtab *services; /* struct claimd_service_key -> struct service_entry */
	uint64_t counted;	  /* the kernel's count at the last read */
	unsigned long names_gen;  /* names at the last read */
	bool read_once;
	void *keys, *values;		       /* batch buffers */
	struct claimd_service_counts *scratch; /* one slot's values, all CPUs */
	void *dirty, *dirty_zero;	       /* one dirty list, all CPUs; zeroes of that size */
	struct dirty_kind kinds[2];	       /* services, edges */
};

static void take_edge(struct poll_ctx *x, const void *key, const void *percpu);
static void fetch_edge(struct poll_ctx *x, const void *key);
static void drop_edge(const struct kcounts *k, const void *key);
static void fetch_service(struct poll_ctx *x, const void *key);
static void drop_service(const struct kcounts *k, const void *key);

struct kcounts *kcounts__new(const struct kcounts_maps *m)
{
	struct kcounts *k = calloc(1, sizeof(*k));
	size_t dsz = sizeof(struct claimd_dirty_edges) > sizeof(struct claimd_dirty_services)
			     ? sizeof(struct claimd_dirty_edges)
			     : sizeof(struct claimd_dirty_services);
	size_t vsz = sizeof(struct claimd_service_counts) > sizeof(struct claimd_edge_counts)
			     ? sizeof(struct claimd_service_counts)
			     : sizeof(struct claimd_edge_counts);

	if (!k)
		return NULL;
	k->m = *m;
	k->edge_fd = m->edge_fd;
	k->service_fd = m->service_fd;
	k->ncpus = libbpf_num_possible_cpus();
	if (k->ncpus < 1)
		k->ncpus = 1;
	k->edges = hashtab__new();
	k->services = hashtab__new();
	k->keys = calloc(BATCH, sizeof(struct claimd_edge_key));
	k->values = calloc((size_t)BATCH * k->ncpus, vsz);
	k->scratch = calloc(k->ncpus, sizeof(*k->scratch));
	dsz = (dsz + 7) & ~(size_t)7;
	k->dirty = calloc(k->ncpus, dsz);
	k->dirty_zero = calloc(k->ncpus, dsz);
	k->kinds[0] = (struct dirty_kind){ .list_fd = m->dirty_services_fd,
					   .list_size = sizeof(struct claimd_dirty_services),
					   .key_size = sizeof(struct claimd_service_key),
					   .fetch = fetch_service,
					   .drop = drop_service,
					   .read = calloc(k->ncpus, sizeof(__u32)) };
	k->kinds[1] = (struct dirty_kind){ .list_fd = m->dirty_edges_fd,
					   .list_size = sizeof(struct claimd_dirty_edges),
					   .key_size = sizeof(struct claimd_edge_key),
					   .fetch = fetch_edge,
					   .drop = drop_edge,
					   .read = calloc(k->ncpus, sizeof(__u32)) };
	/* Epoch 0 is the one no counter is noted in: a new counter's own. */
	if (k->m.epoch && !*k->m.epoch)
		__atomic_store_n(k->m.epoch, 1, __ATOMIC_RELEASE);
	if (!k->edges || !k->services || !k->keys || !k->values || !k->scratch || !k->dirty ||
	    !k->dirty_zero || !k->kinds[0].read || !k->kinds[1].read) {
		kcounts__free(k);
		return NULL;
	}
	return k;
}

void kcounts__free(struct kcounts *k)
{
	if (!k)
		return;
	hashtab__free_all(k->edges);
	hashtab__free_all(k->services);
	free(k->keys);
	free(k->values);
	free(k->scratch);
	free(k->dirty);
	free(k->dirty_zero);
	free(k->kinds[0].read);
	free(k->kinds[1].read);
	free(k);
}

struct poll_ctx {
	struct kcounts *k;
	struct edges *e;
	struct names *n;
	struct classes *c;
	struct roots *r;
	double now;
	time_t wall;
	unsigned long names_gen;
	int gained;
	struct hashtab *owners; /* read_services: the slots' owners */
};

/* Names the edge counter's key and links it to its edge (made if new). */
static void edge_resolve(struct poll_ctx *x, const struct claimd_edge_key *key,
			 struct edge_entry *en)
{
	struct claimd_addr callee = { .port = key->callee_port };
	const char *caller = names__service(x->n, key->tgid, key->local_port, NULL);
	const char *callee_name;

	memcpy(callee.addr, key->callee_addr, sizeof(callee.addr));
	callee_name = names__callee(x->n, &callee);
	en->edge = edges__get(x->e, caller, callee_name);
	en->names_gen = x->names_gen;
	classes__note_instance(x->c, key->tgid, key->local_port, caller);
	classes__note_callee(x->c, &callee, callee_name);
}

static void service_resolve(struct poll_ctx *x, const struct claimd_service_key *key,
			    struct service_entry *en)
{
	const char *name = names__service(x->n, key->tgid, key->local_port, NULL);

	en->service = edges__service(x->e, name);
	en->names_gen = x->names_gen;
	classes__note_instance(x->c, key->tgid, key->local_port, name);
}

/* The per-CPU values of one counter, summed. */
_Static_assert(sizeof(struct claimd_edge_counts) % sizeof(__u64) == 0, "all __u64");
_Static_assert(sizeof(struct claimd_service_counts) % sizeof(__u64) == 0, "all __u64");
_Static_assert(offsetof(struct claimd_service_counts, epoch) == 0 &&
		       offsetof(struct claimd_service_counts, owner) == sizeof(__u64),
	       "the epoch and the owner, then the counts");

/* A counter's per-CPU values summed word by word (both kinds are all __u64). */
static void sum_cpus(const struct kcounts *k, const void *percpu, void *out, size_t size)
{
	const __u64 *in = percpu;
	__u64 *o = out;
	size_t words = size / sizeof(__u64), i;
	int cpu;

	memset(out, 0, size);
	for (cpu = 0; cpu < k->ncpus; cpu++)
		for (i = 0; i < words; i++)
			o[i] += in[cpu * words + i];
}

/* The entry for key, made (zeroed) if new; NULL when out of memory. */
static void *entry_get(struct hashtab *h, const void *key, size_t key_size, size_t entry_size)
{
	void *en = hashtab__get(h, key, key_size);

	if (en)
		return en;
	en = calloc(1, entry_size);
	if (!en || hashtab__put(h, key, key_size, en, NULL) || !hashtab__get(h, key, key_size)) {
		free(en);
		return NULL;
	}
	return en;
}

static void edge_take(struct poll_ctx *x, const struct claimd_edge_key *key,
		      const struct claimd_edge_counts *percpu)
{
	struct edge_entry *en = entry_get(x->k->edges, key, sizeof(*key), sizeof(*en));
	struct claimd_edge_counts now;
	struct edge_counts d;

	if (!en)
		return;
	sum_cpus(x->k, percpu, &now, sizeof(now));
	d.calls = now.calls - en->last.calls;
	d.callee_failures = now.callee_failures - en->last.callee_failures;
	d.both_failed = now.both_failed - en->last.both_failed;
	d.retries = now.retries - en->last.retries;
	d.tied_failures = now.tied_failures - en->last.tied_failures;
	en->last = now;
	if (!d.calls && !d.callee_failures && !d.both_failed && !d.retries)
		return;
	x->gained++;
	/* A service's calls outside requests are under its port: its edge, below. */
	if (key->local_port == CLAIMD_ROOT_PORT) {
		struct claimd_addr callee = { .port = key->callee_port };

		memcpy(callee.addr, key->callee_addr, sizeof(callee.addr));
		roots__count(x->r, x->e, x->n, key->tgid, NULL, &callee, &d, x->now);
		return;
	}
	/* Named when it has something to add: a renamed key makes no empty edge. */
	if (!en->edge || en->names_gen != x->names_gen)
		edge_resolve(x, key, en);
	if (en->edge)
		edges__learn(x->e, en->edge, &d, x->now, x->wall);
}

static void service_take(struct poll_ctx *x, const struct claimd_service_key *key,
			 const struct claimd_service_counts *percpu)
{
	struct service_entry *en = entry_get(x->k->services, key, sizeof(*key), sizeof(*en));
	struct claimd_service_counts now, d;
	const __u64 *a, *b;
	__u64 *o, any = 0;
	size_t i;

	if (!en)
		return;
	sum_cpus(x->k, percpu, &now, sizeof(now));
	a = (const __u64 *)&now;
	b = (const __u64 *)&en->last;
	o = (__u64 *)&d;
	/* Every count: the words after the epoch and the owner, which count nothing. */
	o[0] = o[1] = 0;
	for (i = 2; i < sizeof(now) / sizeof(__u64); i++)
		any |= o[i] = a[i] - b[i];
	en->last = now;
	if (!any)
		return;
	x->gained++;
	if (!en->service || en->names_gen != x->names_gen)
		service_resolve(x, key, en);
	if (en->service)
		edges__count_requests(x->e, en->service, &d);
}

/* Reads a whole per-CPU hash in batches, handing each entry to take. */
static int read_map(struct poll_ctx *x, int fd, size_t key_size, size_t value_size,
		    void (*take)(struct poll_ctx *x, const void *key, const void *percpu))
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u64 token[8]; /* the batch position: opaque, a bucket index for hashes */
	void *in = NULL;
	size_t stride = ((value_size + 7) & ~(size_t)7) * x->k->ncpus;
	int err;

	for (;;) {
		__u32 count = BATCH, i;

		err = bpf_map_lookup_batch(fd, in, token, x->k->keys, x->k->values, &count, &opts);
		if (err && errno != ENOENT)
			return -errno;
		for (i = 0; i < count; i++)
			take(x, (char *)x->k->keys + i * key_size,
			     (char *)x->k->values + i * stride);
		if (err)
			return 0; /* ENOENT: that was the last batch */
		in = token;
	}
}

static void take_edge(struct poll_ctx *x, const void *key, const void *percpu)
{
	edge_take(x, key, percpu);
}

/* An edge's per-CPU values, by its key. */
static void fetch_edge(struct poll_ctx *x, const void *key)
{
	if (!bpf_map_lookup_elem(x->k->edge_fd, key, x->k->values))
		edge_take(x, key, x->k->values);
}

static void drop_edge(const struct kcounts *k, const void *key)
{
	bpf_map_delete_elem(k->edge_fd, key);
}

static __u64 service_owner(const struct claimd_service_key *key)
{
	return claimd_service_owner(key->tgid, key->local_port);
}

/* A service instance's, from every slot it holds; one that holds none is skipped. */
static void fetch_service(struct poll_ctx *x, const void *key)
{
	if (service_slots_read(x->k->service_fd, x->k->ncpus, service_owner(key), x->k->values,
			       x->k->scratch) > 0)
		service_take(x, key, x->k->values);
}

/* Its slots given back on every CPU. */
static void drop_service(const struct kcounts *k, const void *key)
{
	service_slots_forget(k->m.service_forget_fd, service_owner(key));
}

/*
 * The keys in one dirty list (all CPUs) handed to read_key, beyond those
 * already taken (again: the list read at the last read, whose new keys are
 * only those noted since), and noted as taken; false when a list
 * overflowed (or cannot be read): every counter must be read.
 */
static bool read_dirty(struct poll_ctx *x, struct dirty_kind *dk, __u32 slot, bool again)
{
	size_t stride = (dk->list_size + 7) & ~(size_t)7;
	bool ok = true;
	int cpu;

	if (bpf_map_lookup_elem(dk->list_fd, &slot, x->k->dirty))
		return false;
	for (cpu = 0; cpu < x->k->ncpus; cpu++) {
		/* Both kinds of list begin with their head, then the keys. */
		const struct claimd_dirty_head *d =
			(const void *)((char *)x->k->dirty + cpu * stride);
		const char *keys = (const char *)d + offsetof(struct claimd_dirty_edges, keys);
		__u32 i, n = d->n < CLAIMD_DIRTY_MAX ? d->n : CLAIMD_DIRTY_MAX;

		if (d->overflow || d->n > CLAIMD_DIRTY_MAX)
			ok = false;
		for (i = again ? dk->read[cpu] : 0; ok && i < n; i++)
			dk->fetch(x, keys + i * dk->key_size);
		dk->read[cpu] = ok ? n : 0;
	}
	return ok;
}

/* Empties dirty list slot on every CPU. */
static void clear_dirty(struct kcounts *k, const struct dirty_kind *dk, __u32 slot)
{
	bpf_map_update_elem(dk->list_fd, &slot, k->dirty_zero, BPF_ANY);
}

_Static_assert(offsetof(struct claimd_dirty_edges, keys) ==
		       offsetof(struct claimd_dirty_services, keys),
	       "both lists begin alike");

/*
 * Reads what changed: the other parity's list again (a program that took
 * the epoch just before the last switch may have noted a key since: only
 * those keys), then empties it; the epoch moves on, so that the programs
 * note into the list just emptied; then the list of the epoch that ended.
 * Returns false when every counter must be read instead.
 */
static bool read_changed(struct poll_ctx *x)
{
	struct kcounts *k = x->k;
	__u32 epoch = __atomic_load_n(k->m.epoch, __ATOMIC_ACQUIRE), next = epoch + 1;
	__u32 ended = epoch & 1, other = next & 1;
	bool ok = true;
	int i;

	if (!next)
		next = 2; /* epoch 0 is a new counter's own; 2 has 0's parity */
	for (i = 0; i < 2; i++)
		ok &= read_dirty(x, &k->kinds[i], other, true);
	for (i = 0; i < 2; i++)
		clear_dirty(k, &k->kinds[i], other);
	__atomic_store_n(k->m.epoch, next, __ATOMIC_RELEASE);
	if (!ok)
		return false;
	for (i = 0; i < 2; i++)
		ok &= read_dirty(x, &k->kinds[i], ended, false);
	return ok;
}

/* A slot's owners (on any CPU), gathered into x->owners. */
static void take_owners(struct poll_ctx *x, const void *key, const void *percpu)
{
	const struct claimd_service_counts *v = percpu;
	int cpu;

	(void)key;
	for (cpu = 0; cpu < x->k->ncpus; cpu++)
		if (v[cpu].owner && !hashtab__get(x->owners, &v[cpu].owner, sizeof(__u64)))
			hashtab__put(x->owners, &v[cpu].owner, sizeof(__u64), x->owners, NULL);
}

static int read_owner(const struct hashtab_entry *he, void *arg)
{
	struct claimd_service_key key;
	__u64 owner;

	memcpy(&owner, he->key, sizeof(owner));
	key = claimd_service_key_of(owner);
	fetch_service(arg, &key);
	return 0;
}

/* Every service instance holding a slot: the slots walked, then each read once. */
static int read_services(struct poll_ctx *x)
{
	int err;

	x->owners = hashtab__new();
	if (!x->owners)
		return -ENOMEM;
	err = read_map(x, x->k->service_fd, sizeof(__u32), sizeof(struct claimd_service_counts),
		       take_owners);
	if (!err)
		hashtab__for_each(x->owners, read_owner, x);
	hashtab__free(x->owners);
	x->owners = NULL;
	return err;
}

/* Reads every counter. */
static int read_all(struct poll_ctx *x)
{
	int err = read_services(x);

	if (!err)
		err = read_map(x, x->k->edge_fd, sizeof(struct claimd_edge_key),
			       sizeof(struct claimd_edge_counts), take_edge);
	if (!err) {
		x->k->last_full = x->now;
		x->k->full_reads++;
	}
	return err;
}

static struct poll_ctx poll_ctx(struct kcounts *k, const struct kcounts_into *into, double now,
				time_t wall)
{
	struct poll_ctx x = { .k = k,
			      .e = into->edges,
			      .n = into->names,
			      .c = into->classes,
			      .r = into->roots,
			      .now = now,
			      .wall = wall };

	x.names_gen = names__generation(x.n);
	return x;
}

int kcounts__poll(struct kcounts *k, uint64_t counted, const struct kcounts_into *into, double now,
		  time_t wall)
{
	struct poll_ctx x = poll_ctx(k, into, now, wall);
	bool changed_only;
	int err = 0;

	if (k->read_once && counted == k->counted && x.names_gen == k->names_gen &&
	    now - k->last_full < FULL_READ_S)
		return 0;
	/* The lists are read (and the epoch moved) at every read, so that they never stay full. */
	changed_only = k->m.epoch && read_changed(&x);
	if (changed_only && k->read_once && now - k->last_full < FULL_READ_S)
		k->dirty_reads++;
	else
		err = read_all(&x);
	if (err)
		return err;
	k->counted = counted;
	k->names_gen = x.names_gen;
	k->read_once = true;
	return x.gained;
}

uint64_t kcounts__full_reads(const struct kcounts *k)
{
	return k->full_reads;
}

uint64_t kcounts__dirty_reads(const struct kcounts *k)
{
	return k->dirty_reads;
}

struct forget_ctx {
	const __u32 *tgids;
	int n;
	size_t key_size;
	void *gone;
	size_t found, cap;
};

static int collect(const struct hashtab_entry *he, void *arg)
{
	struct forget_ctx *f = arg;
	__u32 tgid;

	memcpy(&tgid, he->key, sizeof(tgid)); /* both keys begin with the tgid */
	if (!pid_listed(tgid, f->tgids, f->n))
		return 0;
	if (f->found == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		void *g = realloc(f->gone, cap * f->key_size);

		if (!g)
			return 0;
		f->gone = g;
		f->cap = cap;
	}
	memcpy((char *)f->gone + f->found++ * f->key_size, he->key, f->key_size);
	return 0;
}

/*
 * The counters of the processes listed: read a last time, then deleted
 * (a service instance's slots given back).
 */
static int forget_in(struct poll_ctx *x, struct hashtab *h, const struct dirty_kind *dk,
		     const __u32 *tgids, int n)
{
	struct forget_ctx f = { .tgids = tgids, .n = n, .key_size = dk->key_size };
	size_t i;

	/* Collect, then remove: the table may not change during a walk. */
	hashtab__for_each(h, collect, &f);
	for (i = 0; i < f.found; i++) {
		const void *key = (char *)f.gone + i * dk->key_size;

		dk->fetch(x, key);
		dk->drop(x->k, key);
		free(hashtab__del(h, key, dk->key_size));
	}
	free(f.gone);
	return (int)f.found;
}

int kcounts__forget(struct kcounts *k, const __u32 *tgids, int n, const struct kcounts_into *into,
		    double now, time_t wall)
{
	struct poll_ctx x = poll_ctx(k, into, now, wall);

	return forget_in(&x, k->edges, &k->kinds[1], tgids, n) +
	       forget_in(&x, k->services, &k->kinds[0], tgids, n);
}

void kcounts__each_process(struct kcounts *k, void (*fn)(__u32 tgid, void *ctx), void *ctx)
{
	/* Both keys begin with the tgid. */
	hashtab__each_u32_key(k->edges, fn, ctx);
	hashtab__each_u32_key(k->services, fn, ctx);
}

size_t kcounts__edges(const struct kcounts *k)
{
	return hashtab__count(k->edges);
}

size_t kcounts__services(const struct kcounts *k)
{
	return hashtab__count(k->services);
}
