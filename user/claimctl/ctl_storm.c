// SPDX-License-Identifier: GPL-2.0
/*
 * claimctl storm: seed 003's retry-amplification rule on the observed graph
 * (or a graph saved with 'claimctl graph --format json', --file): per root
 * and path the hops H, retries per hop R, the fan-out (1+R)^H against the
 * terminal's slack and the decision; per root the storm radius now and with
 * claim-aware retries, and the policy to use. The arithmetic is storm.c's.
 */
#include <argp.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argnum.h"
#include "claimctl.h"
#include "log.h"
#include "storm.h"

struct storm_args {
	struct storm_opts o;
	const char *file;
	bool json;
	struct ctl_global g; /* claimd's socket, or --prometheus */
};

enum { OPT_HOP_BUDGET = 0x100 };

static error_t parse_storm(int key, char *arg, struct argp_state *state)
{
	struct storm_args *a = state->input;
	double v;

	switch (key) {
	case 'f':
		a->file = arg;
		break;
	case CTL_KEY_PROMETHEUS:
		a->g.prometheus = arg;
		break;
	case 'r':
		if (arg_double(arg, 0, 100, &v))
			argp_error(state, "--retries must be a number from 0 to 100, not '%s'",
				   arg);
		a->o.retries = v;
		break;
	case 's':
		if (arg_double(arg, 0, DBL_MAX, &v) || v == 0)
			argp_error(state, "--slack must be a number more than 0, not '%s'", arg);
		a->o.policy.slack = v;
		break;
	case 'd':
		a->o.policy.deadline = true;
		break;
	case 'b':
		if (arg_double(arg, 0, DBL_MAX, &v))
			argp_error(state, "--budget must be a share of requests (0.1 = 10%%)");
		a->o.policy.shared_budget = v;
		break;
	case OPT_HOP_BUDGET:
		if (arg_double(arg, 0, DBL_MAX, &v))
			argp_error(state, "--hop-budget must be a share of calls (0.1 = 10%%)");
		a->o.policy.hop_budget = v;
		break;
	case 'j':
		a->json = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument: %s", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct json_object *load_file(const char *path)
{
	struct json_object *o;

	if (!strcmp(path, "-"))
		path = "/dev/stdin";
	o = json_object_from_file(path);
	if (!o)
		pr_err("cannot read a graph from %s: %s", path, json_util_get_last_err());
	return o;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void print_path(const char *root, struct json_object *p)
{
	struct json_object *rs = get(p, "retries_per_hop"), *names = get(p, "path");
	char r[64] = "";
	size_t i, n = 0;

	for (i = 0; i < json_object_array_length(rs) && n < sizeof(r); i++)
		n += snprintf(r + n, sizeof(r) - n, "%s%.2f", i ? " " : "",
			      json_object_get_double(json_object_array_get_idx(rs, i)));
	printf("%-16s %4.0f  %-18s %9.4g  %-16s %6.0f  ", root, ctl_num(p, "hops"), r,
	       ctl_num(p, "fanout"), ctl_str(p, "decision"), ctl_num(p, "radius"));
	for (i = 0; i < json_object_array_length(names); i++)
		printf("%s%s", i ? " > " : "",
		       json_object_get_string(json_object_array_get_idx(names, i)));
	printf("\n");
}

static void print_report(struct json_object *rep)
{
	struct json_object *roots = get(rep, "roots"), *budget, *rv = get(rep, "retries");
	size_t i, k;

	printf("slack %.4g; retries per hop: ", ctl_num(rep, "slack"));
	if (json_object_is_type(rv, json_type_double))
		printf("%.4g on every hop", json_object_get_double(rv));
	else
		printf("observed (retries / first calls of each edge)");
	if ((budget = get(rep, "shared_budget")))
		printf("; shared budget %.4g", json_object_get_double(budget));
	if ((budget = get(rep, "hop_budget")))
		printf("; per-hop budget %.4g", json_object_get_double(budget));
	printf("; %s\n\n", json_object_get_boolean(get(rep, "deadline"))
				   ? "a deadline is propagated"
				   : "no deadline");
	if (!json_object_array_length(roots)) {
		printf("no call paths: claimd has seen no service call another yet\n");
		return;
	}
	printf("%-16s %4s  %-18s %9s  %-16s %6s  %s\n", "ROOT", "HOPS", "RETRIES/HOP", "FAN-OUT",
	       "DECISION", "RADIUS", "PATH");
	for (i = 0; i < json_object_array_length(roots); i++) {
		struct json_object *r = json_object_array_get_idx(roots, i),
				   *paths = get(r, "paths");

		for (k = 0; k < json_object_array_length(paths); k++)
			print_path(ctl_str(r, "root"), json_object_array_get_idx(paths, k));
	}
	for (i = 0; i < json_object_array_length(roots); i++) {
		struct json_object *r = json_object_array_get_idx(roots, i);

		printf("\nroot %s: %s (%s)%s\n", ctl_str(r, "root"), ctl_str(r, "decision"),
		       ctl_str(r, "reason"),
		       ctl_num(r, "root_caller") > 0 ? "\n  a root caller: it serves nothing" : "");
		printf("  storm radius %.0f now, %.0f with claim-aware retries (fan-out %.4g)\n",
		       ctl_num(r, "radius_now"), ctl_num(r, "radius_claim_aware"),
		       ctl_num(r, "claim_aware_fanout"));
		printf("  recommended: %s (seed 003's dispatch: %s)\n", ctl_str(r, "policy"),
		       ctl_str(r, "seed_policy"));
	}
	if (json_object_get_boolean(get(rep, "truncated")))
		printf("\n(more paths than shown: the walk stops at %d paths or %d hops)\n",
		       STORM_MAX_PATHS, STORM_MAX_HOPS);
}

int cmd_storm(const struct ctl_global *g, int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{ "file", 'f', "FILE", 0,
		  "A graph saved with 'claimctl graph --format json' ('-': stdin) instead of "
		  "asking claimd",
		  0 },
		{ "slack", 's', "S", 0,
		  "The multiple of its normal load the terminal service absorbs (default 2)", 0 },
		{ "retries", 'r', "R", 0,
		  "Retries per hop on every hop (default: observed, retries / first calls of "
		  "each edge)",
		  0 },
		{ "deadline", 'd', NULL, 0,
		  "An absolute deadline is propagated and consumed at every hop", 0 },
		{ "budget", 'b', "B", 0,
		  "Retries come from one budget shared across hops: B per request (0.1 = 10%)", 0 },
		{ "hop-budget", OPT_HOP_BUDGET, "B", 0,
		  "Each hop has its own retry budget B: R is at most B per hop", 0 },
		{ "json", 'j', NULL, 0, "The report as JSON", 0 },
		CTL_OPT_PROMETHEUS,
		{},
	};
	static const struct argp argp = {
		.options = opts,
		.parser = parse_storm,
		.doc = "Retry amplification per call path (seed 003): fan-out (1+R)^H against "
		       "the terminal's slack, and whether that can ship.\v"
		       "Decisions: safe (no retries, or a shared budget within the slack); "
		       "degraded (fan-out <= slack: safe until a correlated failure); "
		       "do-not-ship (fan-out > slack); deadline-bounded (--deadline). The storm "
		       "radius is the longest run of consecutive retrying edges; with claim-aware "
		       "retries only the edge nearest the failure retries (radius 1).",
	};
	struct storm_args a = {
		.o = { .policy = { .slack = 2,
				   .shared_budget = STORM_NO_BUDGET,
				   .hop_budget = STORM_NO_BUDGET },
		       .retries = STORM_OBSERVED_R },
		.g = *g,
	};
	struct json_object *graph, *rep;
	char err[256];

	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	graph = a.file ? load_file(a.file) : ctl_graph(&a.g);
	if (!graph)
		return 1;
	rep = storm__analyse(graph, &a.o, err, sizeof(err));
	json_object_put(graph);
	if (!rep) {
		pr_err("%s%s%s",
		       a.file		? a.file
		       : a.g.prometheus ? "the fleet's graph"
					: "claimd's graph",
		       ": ", err);
		return 1;
	}
	if (a.json)
		return ctl_print_json(rep);
	print_report(rep);
	json_object_put(rep);
	return 0;
}
