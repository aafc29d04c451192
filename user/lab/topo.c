// SPDX-License-Identifier: GPL-2.0
/*
 * Topologies for the lab driver: a chain A -> B -> ... (chain:N), or a tree
 * of depth D and fan-out F (tree:D:F; the root n0 is level 0, the children
 * of n0.1 are n0.1.0, n0.1.1, ...). Nodes are kept in breadth-first order, so
 * a parent always comes before its children. Also the storm radius: the
 * longest run of consecutive edges on a root-to-leaf path that sent retries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define TOPO_MAX_NODES 1024

static int add_node(struct topo *t, int parent, const char *name)
{
	struct topo_node *n = &t->nodes[t->n];

	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->parent = parent;
	n->depth = parent < 0 ? 0 : t->nodes[parent].depth + 1;
	if (parent >= 0)
		t->nodes[parent].children[t->nodes[parent].n_children++] = t->n;
	if (n->depth > t->max_depth)
		t->max_depth = n->depth;
	return t->n++;
}

static int build_chain(struct topo *t, long len)
{
	char name[2] = "A";
	int i;

	t->nodes = calloc(len, sizeof(*t->nodes));
	if (!t->nodes)
		return -1;
	for (i = 0; i < len; i++) {
		name[0] = 'A' + i;
		add_node(t, i - 1, name);
	}
	return 0;
}

static int build_tree(struct topo *t, long depth, long fanout)
{
	long total = 1, level = 1, d;
	int i, c;

	for (d = 1; d <= depth; d++) {
		level *= fanout;
		total += level;
		if (total > TOPO_MAX_NODES)
			return -1;
	}
	t->nodes = calloc(total, sizeof(*t->nodes));
	if (!t->nodes)
		return -1;
	add_node(t, -1, "n0");
	/* Breadth first: each node's children are appended after it. */
	for (i = 0; i < t->n; i++) {
		if (t->nodes[i].depth >= depth)
			continue;
		for (c = 0; c < fanout; c++) {
			char name[LAB_NAME_MAX];

			if (snprintf(name, sizeof(name), "%s.%d", t->nodes[i].name, c) >=
			    (int)sizeof(name))
				return -1;
			add_node(t, i, name);
		}
	}
	return 0;
}

int topo_build(struct topo *t, const char *spec)
{
	long a = 0, b = 0;
	char extra;

	memset(t, 0, sizeof(*t));
	snprintf(t->spec, sizeof(t->spec), "%s", spec);
	if (sscanf(spec, "chain:%ld%c", &a, &extra) == 1) {
		if (a < 1 || a > 26) {
			pr_err("chain:N takes N from 1 to 26 (names A..Z): %s", spec);
			return -1;
		}
		if (build_chain(t, a))
			goto nomem;
		return 0;
	}
	if (sscanf(spec, "tree:%ld:%ld%c", &a, &b, &extra) == 2) {
		if (a < 0 || a > 10 || b < 1 || b > LAB_MAX_DOWN) {
			pr_err("tree:D:F takes D from 0 to 10, F from 1 to %d: %s", LAB_MAX_DOWN,
			       spec);
			return -1;
		}
		if (build_tree(t, a, b)) {
			pr_err("%s: more than %d nodes", spec, TOPO_MAX_NODES);
			topo_free(t);
			return -1;
		}
		return 0;
	}
	pr_err("unknown topology '%s' (chain:N or tree:D:F)", spec);
	return -1;
nomem:
	pr_err("out of memory");
	return -1;
}

void topo_free(struct topo *t)
{
	int i;

	for (i = 0; t->nodes && i < t->n; i++)
		json_object_put(t->nodes[i].stats);
	free(t->nodes);
	t->nodes = NULL;
	t->n = 0;
}

int topo_find(const struct topo *t, const char *name)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->nodes[i].name, name))
			return i;
	return -1;
}

int topo_storm_radius(const struct topo *t, const bool *edge_retried)
{
	int *run = calloc(t->n, sizeof(*run)), best = 0, i;

	if (!run)
		return -1;
	/* edge_retried[i]: the edge parent(i) -> i. Parents come first. */
	for (i = 1; i < t->n; i++) {
		run[i] = edge_retried[i] ? run[t->nodes[i].parent] + 1 : 0;
		if (run[i] > best)
			best = run[i];
	}
	free(run);
	return best;
}
