/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claimd's control socket: accepts claimctl connections, parses their
 * requests (ctlproto.h), answers through a handler claimd supplies, and
 * streams records to tracing clients. A slow client gets a bounded queue;
 * what overflows it is dropped, counted and reported to that client.
 */
#ifndef CLAIMD_CONTROL_H
#define CLAIMD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "ctlproto.h"

struct control;

/* Answers a one-shot request; returns a new JSON object (owned by the caller). */
typedef struct json_object *(*control_handler)(void *ctx, const struct ctl_request *req);

struct control_opts {
	const char *path;
	mode_t mode; /* of the socket: 0600 by default */
	gid_t group; /* (gid_t)-1: leave as is */
};

struct control *control__open(const struct control_opts *opts, int epfd, control_handler h,
			      void *ctx);
void control__close(struct control *c);

/* Anybody tracing? (roots: anybody who wants calls outside ingresses?) */
bool control__tracing(const struct control *c, bool roots);
/* Sends one JSON line (without newline) to every tracing client that wants it. */
void control__publish(struct control *c, const char *line, size_t len, bool root);
/* Lines queued for tracing clients so far (one a client), and dropped for slow ones. */
unsigned long control__published(const struct control *c);
unsigned long control__dropped(const struct control *c);
/* Clients streaming a trace. */
int control__tracers(const struct control *c);

#endif
