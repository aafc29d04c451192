/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nginx (Debian's package) as a reverse proxy with a config of the test's
 * own: one worker, on a free loopback port, its prefix in the test's
 * directory. nginx rewrites its environment area for its process titles,
 * so claimd names it by design.md's fallback, "nginx:<port>".
 */
#ifndef CLAIMD_TEST_NGINX_H
#define CLAIMD_TEST_NGINX_H

#include <sys/types.h>

#include "harness.h"

struct ngx {
	const char *bin; /* the program to run; NULL: Debian's nginx */
	pid_t pid;
	int port;
	char conf[H_PATH];
	char name[32]; /* as claimd names it */
};

/*
 * Starts nginx (prefix dir/nginx-<name>) serving the location blocks given
 * (e.g. "location / { proxy_pass http://127.0.0.1:8080; }"), and waits
 * until it listens. 0, or -1 with the reason printed.
 */
int nginx_start(struct ngx *n, const char *dir, const char *name, const char *locations);
/* The same with more of the http block (an upstream block) before the server's. */
int nginx_start_http(struct ngx *n, const char *dir, const char *name, const char *http,
		     const char *locations);
void nginx_stop(struct ngx *n);

/*
 * A copy of Debian's nginx at path whose code does not show an offset
 * claimd's probe reads, and runs as the original does: in
 * ngx_chain_writer, the load of the writer's connection (ctx + 16) from
 * its first argument (RDI) becomes a load from R15, to which the
 * function's prologue copied RDI (REX.B, 0x48 -> 0x49: the same length).
 * 0, or -1 (not this build: its bytes are not found once).
 */
int nginx_refused_copy(const char *path);

#endif
