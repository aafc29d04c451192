// SPDX-License-Identifier: GPL-2.0
/* The service graph built from claimd's edges and services; see graph.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define CHAIN_MAX_DEPTH 64

static const char *const svc_counts[] = { "requests", "failures", "claimed", "unclaimed",
					  "unknown" };

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static long long int_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static bool bool_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* A node: the service's counts when claimd saw it serve, else zeros. */
static struct json_object *node_new(const char *name, struct json_object *svc)
{
	struct json_object *o = json_object_new_object();
	size_t i;

	if (!o)
		return NULL;
	json_object_object_add(o, "service", json_object_new_string(name));
	json_object_object_add(o, "seen", json_object_new_boolean(svc != NULL));
	for (i = 0; i < sizeof(svc_counts) / sizeof(svc_counts[0]); i++)
		json_object_object_add(o, svc_counts[i],
				       json_object_new_int64(svc ? int_of(svc, svc_counts[i]) : 0));
	json_object_object_add(o, "failing", json_object_new_boolean(int_of(o, "failures") > 0));
	json_object_object_add(o, "origin", json_object_new_boolean(int_of(o, "claimed") > 0));
	json_object_object_add(o, "root", json_object_new_boolean(0));
	return o;
}

static int add_node(struct json_object *nodes, const char *name, struct json_object *svc)
{
	struct json_object *n;

	if (!name || json_object_object_get_ex(nodes, name, NULL))
		return 0;
	n = node_new(name, svc);
	return n ? json_object_object_add(nodes, name, n) : -1;
}

static int by_service(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a;
	struct json_object *y = *(struct json_object *const *)b;

	return strcmp(str_of(x, "service"), str_of(y, "service"));
}

/* The unclaimed edges as index pairs into the sorted node array. */
struct chains {
	struct json_object *nodes; /* sorted array */
	struct json_object *index; /* name -> index */
	int (*up)[2];		   /* sorted by caller */
	int n_up;
	int *first; /* per node: its first edge in up, or n_up */
	int path[CHAIN_MAX_DEPTH];
	bool *on_path;
	struct json_object *out;
};

static void emit(struct chains *c, int depth)
{
	struct json_object *arr = json_object_new_array();
	int i;

	for (i = 0; i < depth; i++) {
		struct json_object *n = json_object_array_get_idx(c->nodes, c->path[i]);

		json_object_array_add(arr, json_object_new_string(str_of(n, "service")));
	}
	json_object_array_add(c->out, arr);
}

/* Follows unclaimed edges down from path[depth - 1]; a path ends where the
 * failure was claimed (no unclaimed edge goes further). */
static void walk(struct chains *c, int depth)
{
	int from = c->path[depth - 1], i;
	bool further = false;

	for (i = c->first[from]; i < c->n_up && c->up[i][0] == from; i++) {
		int to = c->up[i][1];

		if (c->on_path[to] || depth >= CHAIN_MAX_DEPTH)
			continue;
		if (json_object_array_length(c->out) >= GRAPH_MAX_CHAINS)
			return;
		further = true;
		c->on_path[to] = true;
		c->path[depth] = to;
		walk(c, depth + 1);
		c->on_path[to] = false;
	}
	if (!further && depth > 1 && json_object_array_length(c->out) < GRAPH_MAX_CHAINS)
		emit(c, depth);
}

static int by_caller(const void *a, const void *b)
{
	const int *x = a, *y = b;

	return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

static int node_index(struct chains *c, const char *name)
{
	struct json_object *v;

	return json_object_object_get_ex(c->index, name, &v) ? json_object_get_int(v) : -1;
}

static struct json_object *find_chains(struct json_object *nodes, struct json_object *edges)
{
	size_t n = json_object_array_length(nodes), m = json_object_array_length(edges), i;
	struct chains c = { .nodes = nodes };
	bool *has_in = NULL, *walked = NULL;

	c.out = json_object_new_array();
	c.index = json_object_new_object();
	c.up = calloc(m + 1, sizeof(*c.up));
	c.on_path = calloc(n + 1, sizeof(bool));
	has_in = calloc(n + 1, sizeof(bool));
	walked = calloc(n + 1, sizeof(bool));
	c.first = calloc(n + 1, sizeof(int));
	if (!c.out || !c.index || !c.up || !c.on_path || !has_in || !walked || !c.first) {
		json_object_put(c.out);
		c.out = NULL;
		goto cleanup;
	}
	for (i = 0; i < n; i++)
		json_object_object_add(c.index,
				       str_of(json_object_array_get_idx(nodes, i), "service"),
				       json_object_new_int(i));
	for (i = 0; i < m; i++) {
		struct json_object *e = json_object_array_get_idx(edges, i), *u;
		int a = node_index(&c, str_of(e, "caller")),
		    b = node_index(&c, str_of(e, "callee"));

		if (a < 0 || b < 0 || a == b || !json_object_object_get_ex(e, "unclaimed", &u) ||
		    !json_object_get_boolean(u))
			continue;
		c.up[c.n_up][0] = a;
		c.up[c.n_up][1] = b;
		c.n_up++;
		has_in[b] = true;
	}
	qsort(c.up, c.n_up, sizeof(*c.up), by_caller);
	for (i = 0; i <= n; i++)
		c.first[i] = c.n_up;
	for (i = c.n_up; i-- > 0;)
		c.first[c.up[i][0]] = (int)i;
	for (i = 0; i < (size_t)c.n_up; i++) {
		int top = c.up[i][0];

		if (has_in[top] || c.on_path[top] || walked[top])
			continue;
		walked[top] = true;
		c.on_path[top] = true;
		c.path[0] = top;
		walk(&c, 1);
		c.on_path[top] = false;
	}
cleanup:
	json_object_put(c.index);
	free(c.up);
	free(c.on_path);
	free(has_in);
	free(walked);
	free(c.first);
	return c.out;
}

struct json_object *graph__build(struct json_object *edges, struct json_object *services,
				 time_t wall)
{
	struct json_object *g = json_object_new_object(), *dict = json_object_new_object();
	struct json_object *nodes = json_object_new_array(), *out_edges = json_object_new_array();
	struct json_object *chains;
	size_t i, n_svc = json_object_array_length(services), n_edges;

	n_edges = json_object_array_length(edges);
	if (!g || !dict || !nodes || !out_edges)
		goto fail;
	for (i = 0; i < n_svc; i++) {
		struct json_object *s = json_object_array_get_idx(services, i);

		if (add_node(dict, str_of(s, "service"), s))
			goto fail;
	}
	for (i = 0; i < n_edges; i++) {
		struct json_object *e = json_object_array_get_idx(edges, i), *copy = NULL, *caller;
		bool unclaimed;

		if (add_node(dict, str_of(e, "caller"), NULL) ||
		    add_node(dict, str_of(e, "callee"), NULL))
			goto fail;
		if (!str_of(e, "caller") || !str_of(e, "callee") ||
		    json_object_deep_copy(e, &copy, NULL))
			continue;
		json_object_object_get_ex(dict, str_of(e, "caller"), &caller);
		/* A root caller serves nothing: a node of its own kind, not a service. */
		if (bool_of(e, "root") && !bool_of(caller, "seen"))
			json_object_object_add(caller, "root", json_object_new_boolean(1));
		unclaimed = int_of(e, "both_failed") > 0 && int_of(caller, "unclaimed") > 0;
		json_object_object_add(copy, "unclaimed", json_object_new_boolean(unclaimed));
		json_object_array_add(out_edges, copy);
	}
	{
		json_object_object_foreach(dict, name, node) {
			(void)name;
			json_object_array_add(nodes, json_object_get(node));
		}
	}
	json_object_array_sort(nodes, by_service);
	chains = find_chains(nodes, out_edges);
	if (!chains)
		goto fail;
	json_object_put(dict);
	json_object_object_add(g, "version", json_object_new_int(GRAPH_VERSION));
	json_object_object_add(g, "generated_unix", json_object_new_int64(wall));
	json_object_object_add(g, "nodes", nodes);
	json_object_object_add(g, "edges", out_edges);
	json_object_object_add(g, "chains", chains);
	return g;
fail:
	json_object_put(dict);
	json_object_put(nodes);
	json_object_put(out_edges);
	json_object_put(g);
	return NULL;
}

static bool is_array_of_objects(struct json_object *o, const char *key, struct json_object **arr)
{
	size_t i;

	if (!json_object_object_get_ex(o, key, arr) || !json_object_is_type(*arr, json_type_array))
		return false;
	for (i = 0; i < json_object_array_length(*arr); i++)
		if (!json_object_is_type(json_object_array_get_idx(*arr, i), json_type_object))
			return false;
	return true;
}

int graph__check(struct json_object *o, char *err, size_t errlen)
{
	struct json_object *nodes, *edges;
	size_t i;

	if (!json_object_is_type(o, json_type_object) || int_of(o, "version") != GRAPH_VERSION) {
		snprintf(err, errlen, "not a claimd graph of version %d", GRAPH_VERSION);
		return -1;
	}
	if (!is_array_of_objects(o, "nodes", &nodes) || !is_array_of_objects(o, "edges", &edges)) {
		snprintf(err, errlen, "\"nodes\" and \"edges\" must be arrays of objects");
		return -1;
	}
	for (i = 0; i < json_object_array_length(nodes); i++)
		if (!str_of(json_object_array_get_idx(nodes, i), "service")) {
			snprintf(err, errlen, "node %zu has no \"service\" name", i);
			return -1;
		}
	for (i = 0; i < json_object_array_length(edges); i++) {
		struct json_object *e = json_object_array_get_idx(edges, i);

		if (!str_of(e, "caller") || !str_of(e, "callee")) {
			snprintf(err, errlen, "edge %zu has no \"caller\" or \"callee\"", i);
			return -1;
		}
		if (int_of(e, "calls") < 0 || int_of(e, "retries") < 0) {
			snprintf(err, errlen, "edge %zu has negative counts", i);
			return -1;
		}
	}
	return 0;
}
