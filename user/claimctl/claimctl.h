/* SPDX-License-Identifier: GPL-2.0 */
/* claimctl's commands, one file each, sharing the connection to claimd. */
#ifndef CLAIMD_CLAIMCTL_H
#define CLAIMD_CLAIMCTL_H

#include <stdbool.h>

#include <json-c/json.h>

#include "ctlproto.h"

struct ctl_global {
	const char *socket;
	const char *prometheus; /* the fleet's graph from this Prometheus, not claimd's */
};

/* The option graph, storm and top share: --prometheus URL (a ctl_global's). */
#define CTL_KEY_PROMETHEUS 0x200
#define CTL_OPT_PROMETHEUS                                                                \
	{                                                                                 \
		"prometheus", CTL_KEY_PROMETHEUS, "URL", 0,                               \
			"The fleet's graph from this Prometheus (http://HOST:9090, with " \
			"claimd.rules.yml), "                                             \
			"every host's claimd summed, instead of this host's claimd",      \
			0                                                                 \
	}

/* Connects to claimd and sends req. Returns the socket, or -1 (reported). */
int ctl_open(const struct ctl_global *g, const struct ctl_request *req);
/* Sends req and reads the one JSON reply (an "error" reply is reported and
 * gives NULL). */
struct json_object *ctl_call(const struct ctl_global *g, const struct ctl_request *req);

/* Parses a command that takes only --json (-j); 0, or 2 after argp reported. */
int ctl_parse_json_only(int argc, char **argv, const char *doc, bool *json);
/* A member of o: its string ("-" when absent or null), its number (NAN). */
const char *ctl_str(struct json_object *o, const char *key);
double ctl_num(struct json_object *o, const char *key);
/* Prints o as one line of JSON and puts it. Returns 0. */
int ctl_print_json(struct json_object *o);
/* claimd's graph (graph.h), or the fleet's with g->prometheus; NULL after
 * reporting why. */
struct json_object *ctl_graph(const struct ctl_global *g);
/* The fleet's graph from Prometheus (ctl_fleet.c), or NULL after reporting why. */
struct json_object *ctl_fleet_graph(const char *url);

int cmd_trace(const struct ctl_global *g, int argc, char **argv);
int cmd_status(const struct ctl_global *g, int argc, char **argv);
int cmd_edges(const struct ctl_global *g, int argc, char **argv);
int cmd_services(const struct ctl_global *g, int argc, char **argv);
int cmd_graph(const struct ctl_global *g, int argc, char **argv);
int cmd_storm(const struct ctl_global *g, int argc, char **argv);
int cmd_top(const struct ctl_global *g, int argc, char **argv);

#endif
