// SPDX-License-Identifier: GPL-2.0
/*
 * claimctl: the operator's view of a running claimd, over its control
 * socket. Global options, then a command with its own options:
 *   claimctl [--socket PATH] COMMAND [OPTIONS]
 */
#include <argp.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "claimctl.h"
#include "linebuf.h"
#include "log.h"

const char *argp_program_version = "claimctl 0.1";

static const char doc[] = "claimctl -- ask a running claimd what it sees.\n\n"
			  "Commands:\n"
			  "  trace      one line per finished inbound request, as they finish\n"
			  "  edges      caller -> callee: failures, ratio, fail-close/fail-open\n"
			  "  services   requests and failures, claimed and unclaimed\n"
			  "  status     claimd's own health: records, drops, tables\n"
			  "  graph      services and edges, as JSON or Graphviz dot\n"
			  "  storm      retry fan-out per path against the slack: ship or not\n"
			  "  top        a live view of edges and services in the terminal\n"
			  "\n'claimctl COMMAND --help' tells a command's options.";

static const struct argp_option global_options[] = {
	{ "socket", 's', "PATH", 0, "claimd's control socket (default " CTL_DEFAULT_SOCKET ")", 0 },
	{},
};

struct global_args {
	struct ctl_global g;
	int cmd_index;
};

static error_t parse_global(int key, char *arg, struct argp_state *state)
{
	struct global_args *a = state->input;

	switch (key) {
	case 's':
		a->g.socket = arg;
		break;
	case ARGP_KEY_ARG:
		a->cmd_index = state->next - 1;
		state->next = state->argc; /* the rest belongs to the command */
		break;
	case ARGP_KEY_END:
		if (!a->cmd_index)
			argp_usage(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t parse_json_only(int key, char *arg, struct argp_state *state)
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

int ctl_parse_json_only(int argc, char **argv, const char *doc, bool *json)
{
	static const struct argp_option opts[] = {
		{ "json", 'j', NULL, 0, "JSON output", 0 },
		{},
	};
	struct argp argp = { .options = opts, .parser = parse_json_only, .doc = doc };

	*json = false;
	return argp_parse(&argp, argc, argv, 0, NULL, json) ? 2 : 0;
}

int ctl_open(const struct ctl_global *g, const struct ctl_request *req)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *line;
	int fd, err;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		pr_err("socket: %s", strerror(errno));
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", g->socket);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = errno;
		pr_err("cannot reach claimd at %s: %s%s", g->socket, strerror(err),
		       err == ENOENT || err == ECONNREFUSED ? " (is claimd running?)"
		       : err == EACCES			    ? " (claimd's socket is owner-only; "
							      "try as root)"
							    : "");
		close(fd);
		return -1;
	}
	line = ctl_request__format(req);
	if (!line || write_all(fd, line, strlen(line))) {
		pr_err("cannot send the request to claimd");
		free(line);
		close(fd);
		return -1;
	}
	free(line);
	return fd;
}

struct json_object *ctl_call(const struct ctl_global *g, const struct ctl_request *req)
{
	struct json_object *reply = NULL, *err;
	struct linebuf lb;
	char *line = NULL;
	ssize_t n;
	int fd = ctl_open(g, req);

	if (fd < 0)
		return NULL;
	linebuf__init(&lb, 256u << 20);
	while (!(line = linebuf__next(&lb, NULL))) {
		n = linebuf__fill(&lb, fd);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
	}
	if (line)
		reply = json_tokener_parse(line);
	if (!reply)
		pr_err("claimd closed the connection without a valid answer");
	else if (json_object_object_get_ex(reply, "error", &err)) {
		pr_err("claimd: %s", json_object_get_string(err));
		json_object_put(reply);
		reply = NULL;
	}
	linebuf__release(&lb);
	close(fd);
	return reply;
}

const char *ctl_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "-";
}

double ctl_num(struct json_object *o, const char *key)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_double(v) : NAN;
}

int ctl_print_json(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return 0;
}

struct json_object *ctl_graph(const struct ctl_global *g)
{
	struct ctl_request req = { .cmd = CTL_GRAPH };

	if (g->prometheus)
		return ctl_fleet_graph(g->prometheus);
	return ctl_call(g, &req);
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = global_options,
		.parser = parse_global,
		.args_doc = "COMMAND [OPTIONS]",
		.doc = doc,
	};
	static const struct {
		const char *name;
		int (*fn)(const struct ctl_global *g, int argc, char **argv);
	} cmds[] = {
		{ "trace", cmd_trace },	      { "status", cmd_status }, { "edges", cmd_edges },
		{ "services", cmd_services }, { "graph", cmd_graph },	{ "storm", cmd_storm },
		{ "top", cmd_top },
	};
	struct global_args a = { .g = { .socket = CTL_DEFAULT_SOCKET } };
	const char *env = getenv("CLAIMD_CONTROL");
	size_t i;

	log_set_prefix("claimctl");
	if (env && *env)
		a.g.socket = env;
	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, &a))
		return 2;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[a.cmd_index], cmds[i].name))
			return cmds[i].fn(&a.g, argc - a.cmd_index, argv + a.cmd_index);
	fprintf(stderr, "claimctl: unknown command '%s' (try: claimctl --help)\n",
		argv[a.cmd_index]);
	return 2;
}
