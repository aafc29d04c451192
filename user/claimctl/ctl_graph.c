// SPDX-License-Identifier: GPL-2.0
/*
 * claimctl graph: the service graph claimd sees (graph.h), as JSON (to
 * save and analyse elsewhere with 'claimctl storm --file') or as Graphviz
 * dot (edges coloured by class, as wide as their recent traffic, unclaimed
 * chains dashed; failing services outlined: red when they claim failures,
 * orange when they pass them up).
 */
#include <argp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "claimctl.h"
#include "verdict_names.h"

enum graph_format { FMT_DOT, FMT_JSON };

struct graph_args {
	enum graph_format fmt;
	struct ctl_global g; /* claimd's socket, or --prometheus */
};

static error_t parse_graph(int key, char *arg, struct argp_state *state)
{
	struct graph_args *a = state->input;

	switch (key) {
	case 'f':
		if (!strcmp(arg, "dot"))
			a->fmt = FMT_DOT;
		else if (!strcmp(arg, "json"))
			a->fmt = FMT_JSON;
		else
			argp_error(state, "--format must be dot or json, not '%s'", arg);
		break;
	case 'j':
		a->fmt = FMT_JSON;
		break;
	case CTL_KEY_PROMETHEUS:
		a->g.prometheus = arg;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument: %s", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* A DOT double-quoted string; a newline becomes DOT's line break. */
static void dot_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '\n') {
			fputs("\\n", stdout);
			continue;
		}
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

static const char *class_colour(const char *cls)
{
	switch (verdict__class_of(cls)) {
	case CLAIM_CLASS_FAIL_CLOSE:
		return "#d62728";
	case CLAIM_CLASS_FAIL_OPEN:
		return "#2ca02c";
	default:
		return "#9e9e9e";
	}
}

static bool b_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static void dot_node(struct json_object *n)
{
	bool origin = b_of(n, "origin"), failing = b_of(n, "failing");
	char label[256];

	if (b_of(n, "seen"))
		snprintf(label, sizeof(label), "%s\n%.0f req, %.0f claimed, %.0f unclaimed",
			 ctl_str(n, "service"), ctl_num(n, "requests"), ctl_num(n, "claimed"),
			 ctl_num(n, "unclaimed"));
	else if (b_of(n, "root"))
		snprintf(label, sizeof(label), "%s\nroot caller", ctl_str(n, "service"));
	else
		snprintf(label, sizeof(label), "%s\ncalled only", ctl_str(n, "service"));
	printf("\t");
	dot_str(ctl_str(n, "service"));
	printf(" [label=");
	dot_str(label);
	if (origin)
		printf(", color=\"#c62828\", fillcolor=\"#ffebee\", penwidth=3");
	else if (failing)
		printf(", color=\"#ef6c00\", fillcolor=\"#fff3e0\", penwidth=3");
	if (b_of(n, "root"))
		printf(", shape=ellipse, color=\"#1e88e5\", fillcolor=\"#e8eaf6\"");
	else if (!b_of(n, "seen"))
		printf(", style=\"rounded,dashed\"");
	printf("];\n");
}

static void dot_edge(struct json_object *e)
{
	double calls = ctl_num(e, "calls"), ratio = ctl_num(e, "ratio");
	char label[160], r[16] = "-";
	struct json_object *w;
	int n;

	if (json_object_object_get_ex(e, "window", &w) && !isnan(ctl_num(w, "calls")))
		calls = ctl_num(w, "calls");
	if (!isnan(ratio))
		snprintf(r, sizeof(r), "%.2f", ratio);
	if (b_of(e, "root")) /* never classified: its failures instead */
		n = snprintf(label, sizeof(label), "root, %.0f failed\n%.0f calls",
			     ctl_num(e, "callee_failures"), ctl_num(e, "calls"));
	else
		n = snprintf(label, sizeof(label), "%s %s\n%.0f calls", ctl_str(e, "class"), r,
			     ctl_num(e, "calls"));
	if (ctl_num(e, "retries") > 0 && n > 0 && (size_t)n < sizeof(label))
		snprintf(label + n, sizeof(label) - n, ", %.0f retries", ctl_num(e, "retries"));
	printf("\t");
	dot_str(ctl_str(e, "caller"));
	printf(" -> ");
	dot_str(ctl_str(e, "callee"));
	printf(" [color=\"%s\", penwidth=%.1f, label=",
	       b_of(e, "root") ? "#1e88e5" : class_colour(ctl_str(e, "class")),
	       fmin(12, 1.5 + 2 * log10(1 + fmax(calls, 0))));
	dot_str(label);
	printf("%s];\n", b_of(e, "unclaimed") ? ", style=dashed"
			 : b_of(e, "root")    ? ", style=dotted"
					      : "");
}

static void print_dot(struct json_object *g)
{
	struct json_object *nodes, *edges;
	size_t i;

	json_object_object_get_ex(g, "nodes", &nodes);
	json_object_object_get_ex(g, "edges", &edges);
	printf("digraph claimd {\n\trankdir=LR;\n"
	       "\tnode [shape=box, style=\"rounded,filled\", fillcolor=\"#e3f2fd\", "
	       "fontname=\"Helvetica\"];\n\tedge [fontname=\"Helvetica\", fontsize=10];\n");
	for (i = 0; i < json_object_array_length(nodes); i++)
		dot_node(json_object_array_get_idx(nodes, i));
	for (i = 0; i < json_object_array_length(edges); i++)
		dot_edge(json_object_array_get_idx(edges, i));
	printf("}\n");
}

int cmd_graph(const struct ctl_global *g, int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{ "format", 'f', "FORMAT", 0, "dot (Graphviz, the default) or json", 0 },
		{ "json", 'j', NULL, 0, "The same as --format json", 0 },
		CTL_OPT_PROMETHEUS,
		{},
	};
	static const struct argp argp = {
		.options = opts,
		.parser = parse_graph,
		.doc = "The service graph claimd sees: services, edges, classes, unclaimed "
		       "chains.\vSave it with --format json for 'claimctl storm --file'; draw it "
		       "with 'claimctl graph | dot -Tsvg > map.svg'. claimd serves the same graph "
		       "live at /map on its metrics address.",
	};
	struct graph_args a = { .fmt = FMT_DOT, .g = *g };
	struct json_object *graph;

	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	graph = ctl_graph(&a.g);
	if (!graph)
		return 1;
	if (a.fmt == FMT_JSON)
		return ctl_print_json(graph);
	print_dot(graph);
	json_object_put(graph);
	return 0;
}
