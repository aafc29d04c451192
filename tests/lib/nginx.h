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

#endif
