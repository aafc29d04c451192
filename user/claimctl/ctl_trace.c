// SPDX-License-Identifier: GPL-2.0
/*
 * claimctl trace: a line per finished inbound request (and, with --roots,
 * per call made outside any request), as claimd sees them. --json passes
 * claimd's objects through; otherwise one readable line each.
 */
#include <argp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argnum.h"
#include "claimctl.h"
#include "linebuf.h"
#include "log.h"

#define MAX_FILTERS 64

struct trace_args {
	bool json;
	bool roots;
	long count; /* stop after this many lines; 0: never */
	int n_pids;
	long pids[MAX_FILTERS];
	int n_services;
	const char *services[MAX_FILTERS];
};

static const struct argp_option trace_options[] = {
	{ "json", 'j', NULL, 0, "One JSON object per line", 0 },
	{ "roots", 'r', NULL, 0, "Also calls made outside any inbound request (clients)", 0 },
	{ "pid", 'p', "PID", 0, "Only this process (repeatable)", 0 },
	{ "service", 'S', "NAME", 0, "Only this service or caller (repeatable)", 0 },
	{ "count", 'n', "N", 0, "Exit after N lines", 0 },
	{},
};

static error_t parse_trace(int key, char *arg, struct argp_state *state)
{
	struct trace_args *t = state->input;

	switch (key) {
	case 'j':
		t->json = true;
		break;
	case 'r':
		t->roots = true;
		break;
	case 'p':
		if (t->n_pids == MAX_FILTERS)
			argp_error(state, "too many --pid");
		if (arg_long(arg, 1, INT32_MAX, &t->pids[t->n_pids]))
			argp_error(state, "invalid --pid: %s", arg);
		t->n_pids++;
		break;
	case 'S':
		if (t->n_services == MAX_FILTERS)
			argp_error(state, "too many --service");
		t->services[t->n_services++] = arg;
		break;
	case 'n':
		if (arg_long(arg, 0, LONG_MAX, &t->count))
			argp_error(state, "invalid --count: %s", arg);
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument: %s", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static int64_t int_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static double double_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : 0;
}

static bool wanted(const struct trace_args *t, struct json_object *o)
{
	const char *name = str_of(o, "service");
	int i;

	if (!*name)
		name = str_of(o, "caller");
	if (t->n_pids) {
		for (i = 0; i < t->n_pids; i++)
			if (int_of(o, "pid") == t->pids[i])
				break;
		if (i == t->n_pids)
			return false;
	}
	if (t->n_services) {
		for (i = 0; i < t->n_services; i++)
			if (!strcmp(name, t->services[i]))
				break;
		if (i == t->n_services)
			return false;
	}
	return true;
}

static void print_egress(struct json_object *e)
{
	struct json_object *v;
	int64_t status = int_of(e, "status");

	/* A database's or a cache's call: its protocol, and ok or an error reply. */
	bool wire = json_object_object_get_ex(e, "protocol", &v) &&
		    strcmp(json_object_get_string(v), "http");

	printf(" -> %s %s ", str_of(e, "callee"),
	       wire ? str_of(e, "protocol") : str_of(e, "method"));
	if (json_object_object_get_ex(e, "transport_failure", &v) && json_object_get_boolean(v))
		printf("FAILED(transport)");
	else if (json_object_object_get_ex(e, "pending", &v))
		printf("pending");
	else if (wire && json_object_object_get_ex(e, "error_reply", &v))
		printf("%s", json_object_get_boolean(v) ? "ERROR" : "ok");
	else
		printf("%" PRId64, status);
	printf(" %.2fms", double_of(e, "duration_ms"));
	if (strcmp(str_of(e, "claim"), "none"))
		printf(" [%s]", str_of(e, "claim"));
}

static void print_text(struct json_object *o)
{
	struct json_object *eg, *flags;
	size_t i, n;

	if (!strcmp(str_of(o, "type"), "egress")) {
		printf("%s[%" PRId64 "/%" PRId64 "]", str_of(o, "caller"), int_of(o, "pid"),
		       int_of(o, "tid"));
		if (json_object_object_get_ex(o, "egress", &eg))
			print_egress(eg);
		putchar('\n');
		return;
	}
	printf("%s[%" PRId64 "/%" PRId64 "] %s %" PRId64 " %.2fms", str_of(o, "service"),
	       int_of(o, "pid"), int_of(o, "tid"), str_of(o, "method"), int_of(o, "status"),
	       double_of(o, "duration_ms"));
	if (json_object_object_get_ex(o, "flags", &flags) && json_object_array_length(flags)) {
		for (i = 0, n = json_object_array_length(flags); i < n; i++)
			printf(" (%s)",
			       json_object_get_string(json_object_array_get_idx(flags, i)));
	}
	if (json_object_object_get_ex(o, "egress", &eg)) {
		for (i = 0, n = json_object_array_length(eg); i < n; i++)
			print_egress(json_object_array_get_idx(eg, i));
	}
	if (int_of(o, "egress_dropped"))
		printf(" (+%" PRId64 " calls not logged)", int_of(o, "egress_dropped"));
	putchar('\n');
}

int cmd_trace(const struct ctl_global *g, int argc, char **argv)
{
	static const struct argp argp = {
		.options = trace_options,
		.parser = parse_trace,
		.doc = "Stream finished requests from a running claimd.",
	};
	struct trace_args t = { 0 };
	struct ctl_request req = { .cmd = CTL_TRACE };
	struct linebuf lb;
	long printed = 0;
	char *line;
	int fd;

	if (argp_parse(&argp, argc, argv, 0, NULL, &t))
		return 2;
	req.roots = t.roots;
	fd = ctl_open(g, &req);
	if (fd < 0)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	linebuf__init(&lb, CTL_MAX_LINE * 4);
	for (;;) {
		ssize_t n = linebuf__fill(&lb, fd);

		if (n == -EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				pr_err("reading from claimd: %s", strerror((int)-n));
			else
				pr_err("claimd closed the trace");
			break;
		}
		while ((line = linebuf__next(&lb, NULL))) {
			struct json_object *o = json_tokener_parse(line);

			if (!o)
				continue;
			if (!strcmp(str_of(o, "type"), "notice")) {
				pr_warn("claimd dropped %" PRId64 " lines this client was too slow "
					"to read",
					int_of(o, "dropped"));
			} else if (wanted(&t, o)) {
				if (t.json)
					puts(line);
				else
					print_text(o);
				printed++;
			}
			json_object_put(o);
			if (t.count && printed >= t.count)
				goto out;
		}
	}
out:
	linebuf__release(&lb);
	close(fd);
	return t.count && printed < t.count ? 1 : 0;
}
