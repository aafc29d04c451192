// SPDX-License-Identifier: GPL-2.0
/*
 * claimctl edges and claimctl services: what claimd learned. Edges: calls,
 * failures of the callee, how often the caller failed with it, the ratio and
 * class (and whether the class came from the recent window or the memory);
 * services: requests, failures, and whose failures they were.
 */
#include <argp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "claimctl.h"

static error_t parse_json_flag(int key, char *arg, struct argp_state *state)
{
	bool *json = state->input;

	switch (key) {
	case 'j':
		*json = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument: %s", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp_option json_options[] = {
	{ "json", 'j', NULL, 0, "JSON output", 0 },
	{},
};

/* Parses "--json" for a listing and asks claimd; NULL after reporting errors. */
static struct json_object *listing(const struct ctl_global *g, enum ctl_cmd cmd, int argc,
				   char **argv, const char *doc, bool *json)
{
	struct argp argp = { .options = json_options, .parser = parse_json_flag, .doc = doc };
	struct ctl_request req = { .cmd = cmd };

	*json = false;
	if (argp_parse(&argp, argc, argv, 0, NULL, json))
		return NULL;
	return ctl_call(g, &req);
}

static const char *s_of(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && v ? json_object_get_string(v) : "-";
}

static double d_of(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && v ? json_object_get_double(v) : NAN;
}

static int print_json(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return 0;
}

int cmd_edges(const struct ctl_global *g, int argc, char **argv)
{
	bool json;
	struct json_object *arr = listing(g, CTL_EDGES, argc, argv,
					  "Edges caller -> callee: calls, callee failures, "
					  "both failed, ratio, class.",
					  &json);
	size_t i, n;

	if (!arr)
		return 1;
	if (json)
		return print_json(arr);
	printf("%-20s %-20s %9s %9s %9s %7s %6s %-10s %s\n", "CALLER", "CALLEE", "CALLS",
	       "CALLEE_F", "BOTH_F", "RETRIES", "RATIO", "CLASS", "FROM");
	for (i = 0, n = json_object_array_length(arr); i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		double ratio = d_of(e, "ratio");

		printf("%-20s %-20s %9.0f %9.0f %9.0f %7.0f ", s_of(e, "caller"), s_of(e, "callee"),
		       d_of(e, "calls"), d_of(e, "callee_failures"), d_of(e, "both_failed"),
		       d_of(e, "retries"));
		if (isnan(ratio))
			printf("%6s ", "-");
		else
			printf("%6.2f ", ratio);
		printf("%-10s %s\n", s_of(e, "class"), s_of(e, "class_source"));
	}
	json_object_put(arr);
	return 0;
}

int cmd_services(const struct ctl_global *g, int argc, char **argv)
{
	bool json;
	struct json_object *arr = listing(g, CTL_SERVICES, argc, argv,
					  "Services: requests, failures, and whose "
					  "failures they were.",
					  &json);
	size_t i, n;

	if (!arr)
		return 1;
	if (json)
		return print_json(arr);
	printf("%-24s %10s %10s %10s %10s %10s  %s\n", "SERVICE", "REQUESTS", "FAILURES",
	       "CLAIMED", "UNCLAIMED", "UNKNOWN", "MODE");
	for (i = 0, n = json_object_array_length(arr); i < n; i++) {
		struct json_object *s = json_object_array_get_idx(arr, i);

		printf("%-24s %10.0f %10.0f %10.0f %10.0f %10.0f  %s\n", s_of(s, "service"),
		       d_of(s, "requests"), d_of(s, "failures"), d_of(s, "claimed"),
		       d_of(s, "unclaimed"), d_of(s, "unknown"), s_of(s, "mode"));
	}
	json_object_put(arr);
	return 0;
}
