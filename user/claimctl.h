/* SPDX-License-Identifier: GPL-2.0 */
/* claimctl's commands, one file each, sharing the connection to claimd. */
#ifndef CLAIMD_CLAIMCTL_H
#define CLAIMD_CLAIMCTL_H

#include <json-c/json.h>

#include "ctlproto.h"

struct ctl_global {
	const char *socket;
};

/* Connects to claimd and sends req. Returns the socket, or -1 (reported). */
int ctl_open(const struct ctl_global *g, const struct ctl_request *req);
/* Sends req and reads the one JSON reply (an "error" reply is reported and
 * gives NULL). */
struct json_object *ctl_call(const struct ctl_global *g, const struct ctl_request *req);

int cmd_trace(const struct ctl_global *g, int argc, char **argv);
int cmd_status(const struct ctl_global *g, int argc, char **argv);
int cmd_edges(const struct ctl_global *g, int argc, char **argv);
int cmd_services(const struct ctl_global *g, int argc, char **argv);

#endif
