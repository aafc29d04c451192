// SPDX-License-Identifier: GPL-2.0
/* The fleet's edge classes and callee names; see fleet_table.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet_table.h"
#include "hashtab.h"
#include "promql.h"

struct fleet_edge {
	enum claim_class cls;
	double ratio;
};

struct fleet_table {
	struct hashtab *edges; /* "caller\0callee" -> struct fleet_edge */
	struct hashtab *names; /* "ip:port" (with its NUL) -> its service's name */
};

void fleet_table__free(struct fleet_table *t)
{
	if (!t)
		return;
	hashtab__free_all(t->edges);
	hashtab__free_all(t->names);
	free(t);
}

/* "caller\0callee" in buf; its length, or 0 when it does not fit. */
static size_t edge_key(const char *caller, const char *callee, char *buf, size_t len)
{
	size_t x = strlen(caller), y = strlen(callee);

	if (!x || !y || x + y + 2 > len)
		return 0;
	memcpy(buf, caller, x + 1);
	memcpy(buf + x + 1, callee, y + 1);
	return x + y + 2;
}

/* The edge of a sample, made if new; NULL when it has no names or memory ran out. */
static struct fleet_edge *edge_of(struct fleet_table *t, struct json_object *sample)
{
	char key[512];
	size_t n = edge_key(promql__label(sample, "caller"), promql__label(sample, "callee"), key,
			    sizeof(key));
	struct fleet_edge *e;
	int err = 0;

	if (!n)
		return NULL;
	e = hashtab__get(t->edges, key, n);
	if (e)
		return e;
	e = malloc(sizeof(*e));
	if (!e)
		return NULL;
	e->cls = CLAIM_CLASS_UNKNOWN;
	e->ratio = NAN;
	hashtab__put(t->edges, key, n, e, &err);
	if (err) {
		free(e);
		return NULL;
	}
	return e;
}

/* Classes (0, 1, 2) or ratios ([0, 1]) onto their edges; anything else is skipped. */
static void add_values(struct fleet_table *t, struct json_object *res, bool ratios)
{
	size_t i;

	for (i = 0; res && i < json_object_array_length(res); i++) {
		struct json_object *s = json_object_array_get_idx(res, i);
		double v = promql__value(s);
		struct fleet_edge *e;

		if (ratios ? isnan(v) || v < 0 || v > 1
			   : v != CLAIM_CLASS_FAIL_CLOSE && v != CLAIM_CLASS_FAIL_OPEN &&
				     v != CLAIM_CLASS_UNKNOWN)
			continue;
		e = edge_of(t, s);
		if (e && ratios)
			e->ratio = v;
		else if (e)
			e->cls = (enum claim_class)v;
	}
}

static void add_names(struct fleet_table *t, struct json_object *res)
{
	size_t i;

	for (i = 0; res && i < json_object_array_length(res); i++) {
		struct json_object *s = json_object_array_get_idx(res, i);
		const char *addr = promql__label(s, "callee_address");
		const char *name = promql__label(s, "callee");
		char *copy;

		if (!*addr || !*name)
			continue;
		copy = strdup(name);
		if (copy)
			free(hashtab__put(t->names, addr, strlen(addr) + 1, copy, NULL));
	}
}

struct fleet_table *fleet_table__new(struct json_object *classes, struct json_object *ratios,
				     struct json_object *addresses)
{
	struct fleet_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->edges = hashtab__new();
	t->names = hashtab__new();
	if (!t->edges || !t->names) {
		fleet_table__free(t);
		return NULL;
	}
	add_values(t, classes, false);
	add_values(t, ratios, true);
	add_names(t, addresses);
	return t;
}

size_t fleet_table__edges(const struct fleet_table *t)
{
	return t ? hashtab__count(t->edges) : 0;
}

static const struct fleet_edge *find(const struct fleet_table *t, const char *caller,
				     const char *callee)
{
	char key[512];
	size_t n = edge_key(caller, callee, key, sizeof(key));

	return n ? hashtab__get(t->edges, key, n) : NULL;
}

bool fleet_table__class(const struct fleet_table *t, const char *caller, const char *callee,
			enum claim_class *cls, double *ratio)
{
	const struct fleet_edge *e;
	const char *name;

	if (!t)
		return false;
	e = find(t, caller, callee);
	if (!e) {
		name = fleet_table__name(t, callee);
		e = name ? find(t, caller, name) : NULL;
	}
	if (!e || e->cls == CLAIM_CLASS_UNKNOWN)
		return false;
	*cls = e->cls;
	*ratio = e->ratio;
	return true;
}

const char *fleet_table__name(const struct fleet_table *t, const char *addr)
{
	return t ? hashtab__get(t->names, addr, strlen(addr) + 1) : NULL;
}

static int name_differs(const struct hashtab_entry *e, void *ctx)
{
	const char *other = fleet_table__name(ctx, (const char *)e->key);

	return !other || strcmp(other, e->value);
}

bool fleet_table__same_names(const struct fleet_table *a, const struct fleet_table *b)
{
	size_t na = a ? hashtab__count(a->names) : 0, nb = b ? hashtab__count(b->names) : 0;

	if (na != nb)
		return false;
	return !na || !hashtab__for_each(a->names, name_differs, (void *)b);
}

void fleet_table__drop_classes(struct fleet_table *t)
{
	struct hashtab *empty = hashtab__new();

	if (!t || !empty) {
		hashtab__free(empty);
		return;
	}
	hashtab__free_all(t->edges);
	t->edges = empty;
}
