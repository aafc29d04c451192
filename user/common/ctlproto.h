/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control protocol between claimctl and claimd: one JSON request per
 * line on a UNIX stream socket, answered by JSON lines. "trace" streams a
 * line per record until the client goes away; the others answer once.
 *
 *   {"cmd":"trace","roots":true}   {"cmd":"status"}   {"cmd":"edges"}
 *   {"cmd":"services"}   {"cmd":"graph"}
 */
#ifndef CLAIMD_CTLPROTO_H
#define CLAIMD_CTLPROTO_H

#include <stdbool.h>
#include <stddef.h>

#define CTL_DEFAULT_SOCKET "/run/claimd/control.sock"
#define CTL_MAX_LINE	   65536

enum ctl_cmd {
	CTL_TRACE = 0,
	CTL_STATUS,
	CTL_EDGES,
	CTL_SERVICES,
	CTL_GRAPH,
	CTL__COUNT,
};

struct ctl_request {
	enum ctl_cmd cmd;
	bool roots; /* trace: also calls made outside any ingress */
};

/* Parses one request line. Returns 0, or -1 with a reason in err. */
int ctl_request__parse(const char *line, size_t len, struct ctl_request *req, char *err,
		       size_t errlen);
/* The request as a line (with its newline), malloc'd; NULL on failure. */
char *ctl_request__format(const struct ctl_request *req);
const char *ctl_cmd__name(enum ctl_cmd cmd);

#endif
