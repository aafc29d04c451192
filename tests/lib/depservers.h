/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The databases and caches the tests depend on, from Debian's packages,
 * started by the test with a directory of its own: redis-server,
 * PostgreSQL 15 (as the postgres user, its cluster made by initdb) and
 * MariaDB (its data directory made by mariadb-install-db). Each listens on
 * a free loopback port and on a socket file, and is ready when started.
 */
#ifndef CLAIMD_TEST_DEPSERVERS_H
#define CLAIMD_TEST_DEPSERVERS_H

#include <stdbool.h>
#include <sys/types.h>

#include "harness.h"

enum dep_kind { DEP_REDIS, DEP_POSTGRES, DEP_MYSQL };

struct dep_server {
	enum dep_kind kind;
	pid_t pid;
	int port;
	char dir[H_DIR];   /* its own, removed by dep_server_stop */
	char sock[H_PATH]; /* its socket file */
	char log[H_PATH];
	char tcp_addr[64];	/* what dep_service.py's --addr takes: HOST:PORT */
	char unix_addr[H_PATH]; /* the same over the socket file */
	char comm[16];		/* its listening process's name, as claimd names the callee */
};

/* "redis", "postgres", "mysql": dep_service.py's --dep. */
const char *dep_kind_name(enum dep_kind kind);

/*
 * Starts one (its files in a new directory under /tmp); with tls,
 * PostgreSQL offers TLS with a certificate of its own (ssl=on). 0, or -1
 * with the reason printed.
 */
int dep_server_start(struct dep_server *d, enum dep_kind kind, bool tls);
/* Stops it (as its own shutdown asks: no orphaned backend) and removes its directory. */
void dep_server_stop(struct dep_server *d);

/*
 * The callee claimd names for it over TCP ("<comm>:<port>") or over its
 * socket file ("<comm>:<path>"), into out.
 */
const char *dep_server_callee(const struct dep_server *d, bool over_unix, char *out, size_t len);

#endif
