// SPDX-License-Identifier: GPL-2.0
/* A typed picture of edges and services; see snapshot.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "model/edges.h"
#include "model/names.h"
#include "expose/snapshot.h"

struct fill {
	struct snapshot *s;
	const struct edges *e;
	double now;
	time_t wall;
	int err;
};

static bool grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap * 2 : 256;
	void *p;

	if (n < *cap)
		return true;
	p = realloc(*arr, c * size);
	if (!p)
		return false;
	*arr = p;
	*cap = c;
	return true;
}

static void add_edge(struct edge *ed, void *arg)
{
	struct fill *f = arg;
	struct snapshot *s = f->s;
	struct edge_class c;
	struct metrics_edge *m;
	struct claimd_addr a;

	if (f->err || !grow((void **)&s->edges, &s->cap_edges, s->n_edges, sizeof(*s->edges))) {
		f->err = -ENOMEM;
		return;
	}
	c = edges__effective(f->e, ed, f->now, f->wall);
	m = &s->edges[s->n_edges++];
	m->caller = ed->caller;
	m->callee = ed->callee;
	/* Named here by no one: the callee's own host names it (names.h). */
	m->callee_address = addr__parse(ed->callee, &a) ? NULL : ed->callee;
	m->calls = ed->total.calls;
	m->callee_failures = ed->total.callee_failures;
	m->both_failed = ed->total.both_failed;
	m->tied_failures = ed->total.tied_failures;
	m->retries = ed->total.retries;
	m->ratio = c.ratio;
	m->cls = c.cls;
	m->root = ed->root;
}

static void add_service(struct service_stats *st, void *arg)
{
	struct fill *f = arg;
	struct snapshot *s = f->s;
	struct metrics_service *m;

	if (f->err ||
	    !grow((void **)&s->services, &s->cap_services, s->n_services, sizeof(*s->services))) {
		f->err = -ENOMEM;
		return;
	}
	m = &s->services[s->n_services++];
	m->name = st->name;
	m->requests = st->requests;
	m->claimed = st->claimed;
	m->unclaimed = st->unclaimed;
	m->unknown = st->unknown;
}

static void add_address(const char *service, const struct claimd_addr *a, void *arg)
{
	struct fill *f = arg;
	struct snapshot *s = f->s;
	struct metrics_address *m;

	if (f->err || !grow((void **)&s->addresses, &s->cap_addresses, s->n_addresses,
			    sizeof(*s->addresses))) {
		f->err = -ENOMEM;
		return;
	}
	m = &s->addresses[s->n_addresses++];
	m->service = service;
	addr__format(a, m->address, sizeof(m->address));
}

static int by_names(const void *a, const void *b)
{
	const struct metrics_edge *x = a, *y = b;
	int c = strcmp(x->caller, y->caller);

	if (c)
		return c;
	c = strcmp(x->callee, y->callee);
	return c ? c : (int)x->root - (int)y->root;
}

static int by_service(const void *a, const void *b)
{
	return strcmp(((const struct metrics_service *)a)->name,
		      ((const struct metrics_service *)b)->name);
}

static int by_address(const void *a, const void *b)
{
	const struct metrics_address *x = a, *y = b;
	int c = strcmp(x->service, y->service);

	return c ? c : strcmp(x->address, y->address);
}

int snapshot__build(struct snapshot *s, const struct edges *e, struct names *n, double now,
		    time_t wall)
{
	struct fill f = { .s = s, .e = e, .now = now, .wall = wall };

	s->n_edges = 0;
	s->n_services = 0;
	s->n_addresses = 0;
	edges__for_each(e, add_edge, &f);
	edges__for_each_service(e, add_service, &f);
	if (n)
		names__for_each_address(n, add_address, &f);
	if (f.err)
		return f.err;
	/* An empty array may still be NULL: qsort wants a pointer even for none. */
	if (s->n_edges)
		qsort(s->edges, s->n_edges, sizeof(*s->edges), by_names);
	if (s->n_services)
		qsort(s->services, s->n_services, sizeof(*s->services), by_service);
	if (s->n_addresses)
		qsort(s->addresses, s->n_addresses, sizeof(*s->addresses), by_address);
	return 0;
}

struct metrics_model snapshot__model(const struct snapshot *s)
{
	struct metrics_model m = { s->edges,	  s->n_edges,	s->services,
				   s->n_services, s->addresses, s->n_addresses };

	return m;
}

void snapshot__free(struct snapshot *s)
{
	free(s->edges);
	free(s->services);
	free(s->addresses);
	memset(s, 0, sizeof(*s));
}
