// SPDX-License-Identifier: GPL-2.0
/*
 * claimctl edges and claimctl services: what claimd learned. Edges: calls,
 * failures of the callee, how often the caller failed with it, the ratio and
 * class (and whether the class came from the recent window or the memory);
 * services: requests, failures, and whose failures they were.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "claimctl.h"

/* Parses "--json" for a listing and asks claimd; NULL after reporting errors. */
static struct json_object *listing(const struct ctl_global *g, enum ctl_cmd cmd, int argc,
				   char **argv, const char *doc, bool *json)
{
	struct ctl_request req = { .cmd = cmd };

	if (ctl_parse_json_only(argc, argv, doc, json))
		return NULL;
	return ctl_call(g, &req);
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
		return ctl_print_json(arr);
	printf("%-20s %-20s %9s %9s %9s %7s %6s %-10s %s\n", "CALLER", "CALLEE", "CALLS",
	       "CALLEE_F", "BOTH_F", "RETRIES", "RATIO", "CLASS", "FROM");
	for (i = 0, n = json_object_array_length(arr); i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		double ratio = ctl_num(e, "ratio");

		printf("%-20s %-20s %9.0f %9.0f %9.0f %7.0f ", ctl_str(e, "caller"),
		       ctl_str(e, "callee"), ctl_num(e, "calls"), ctl_num(e, "callee_failures"),
		       ctl_num(e, "both_failed"), ctl_num(e, "retries"));
		if (isnan(ratio))
			printf("%6s ", "-");
		else
			printf("%6.2f ", ratio);
		/* A root caller's edge is never classified: say so where the class comes from. */
		printf("%-10s %s\n", ctl_str(e, "class"),
		       ctl_num(e, "root") > 0 ? "root" : ctl_str(e, "class_source"));
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
		return ctl_print_json(arr);
	printf("%-24s %10s %10s %10s %10s %10s  %s\n", "SERVICE", "REQUESTS", "FAILURES", "CLAIMED",
	       "UNCLAIMED", "UNKNOWN", "MODE");
	for (i = 0, n = json_object_array_length(arr); i < n; i++) {
		struct json_object *s = json_object_array_get_idx(arr, i);

		printf("%-24s %10.0f %10.0f %10.0f %10.0f %10.0f  %s\n", ctl_str(s, "service"),
		       ctl_num(s, "requests"), ctl_num(s, "failures"), ctl_num(s, "claimed"),
		       ctl_num(s, "unclaimed"), ctl_num(s, "unknown"), ctl_str(s, "mode"));
	}
	json_object_put(arr);
	return 0;
}
