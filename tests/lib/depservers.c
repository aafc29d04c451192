// SPDX-License-Identifier: GPL-2.0
/* Databases and caches for the tests; see depservers.h. */
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "depservers.h"
#include "sockets.h"

#define PG_BIN "/usr/lib/postgresql/15/bin"

const char *dep_kind_name(enum dep_kind kind)
{
	static const char *const names[] = { "redis", "postgres", "mysql" };

	return names[kind];
}

/* Waits until the log at path says needle; 0, or -1 after timeout_ms. */
static int log_wait(const char *path, const char *needle, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	static char text[65536];

	while (now_ms() < end) {
		ssize_t n = read_file(path, text, sizeof(text));

		if (n > 0 && strstr(text, needle))
			return 0;
		sleep_ms(50);
	}
	return -1;
}

static int redis_start(struct dep_server *d)
{
	char port[16];
	const char *argv[] = { "redis-server",
			       "--port",
			       port,
			       "--bind",
			       "127.0.0.1",
			       "--unixsocket",
			       d->sock,
			       "--unixsocketperm",
			       "777",
			       "--save",
			       "",
			       "--appendonly",
			       "no",
			       NULL };

	snprintf(port, sizeof(port), "%d", d->port);
	snprintf(d->sock, sizeof(d->sock), "%s/redis.sock", d->dir);
	snprintf(d->unix_addr, sizeof(d->unix_addr), "%s", d->sock);
	snprintf(d->comm, sizeof(d->comm), "redis-server");
	d->pid = proc_spawn(argv, NULL, d->log);
	return log_wait(d->log, "Ready to accept connections", 10000);
}

/* A cluster made by initdb, then its server, both as the postgres user (with tls, ssl=on). */
static int postgres_start(struct dep_server *d, bool tls)
{
	char data[H_PATH], port[16], out[4096], cert[H_PATH + 32], key[H_PATH + 32];
	const char *init[] = { PG_BIN "/initdb", "-D",	      data, "-A", "trust", "-U",
			       "postgres",	 "--no-sync", NULL };
	/* the TLS settings from 11 on */
	const char *argv[] = { PG_BIN "/postgres",
			       "-D",
			       data,
			       "-k",
			       d->dir,
			       "-p",
			       port,
			       "-h",
			       "127.0.0.1",
			       "-c",
			       "fsync=off",
			       "-c",
			       "ssl=on",
			       "-c",
			       cert,
			       "-c",
			       key,
			       NULL };
	struct passwd *pw = getpwnam("postgres");
	pid_t pid;

	if (!pw) {
		printf("postgres: no such user (postgresql-15 not installed?)\n");
		return -1;
	}
	if (chown(d->dir, pw->pw_uid, pw->pw_gid))
		return -1;
	snprintf(data, sizeof(data), "%s/data", d->dir);
	snprintf(port, sizeof(port), "%d", d->port);
	snprintf(d->sock, sizeof(d->sock), "%s/.s.PGSQL.%d", d->dir, d->port);
	snprintf(d->unix_addr, sizeof(d->unix_addr), "%s:%d", d->dir, d->port);
	snprintf(d->comm, sizeof(d->comm), "postgres");
	if (tls) {
		char crt[H_PATH], pem[H_PATH];

		snprintf(crt, sizeof(crt), "%s/server.crt", d->dir);
		snprintf(pem, sizeof(pem), "%s/server.key", d->dir);
		if (tls_cert_make(crt, pem) || chown(crt, pw->pw_uid, pw->pw_gid) ||
		    chown(pem, pw->pw_uid, pw->pw_gid) || chmod(pem, 0600))
			return -1;
		snprintf(cert, sizeof(cert), "ssl_cert_file=%s", crt);
		snprintf(key, sizeof(key), "ssl_key_file=%s", pem);
	} else {
		argv[11] = NULL; /* no ssl=on and what follows */
	}
	pid = proc_spawn_as(init, NULL, d->log, pw->pw_uid, pw->pw_gid);
	if (pid <= 0 || proc_wait(pid, 60000) != 0) {
		read_file(d->log, out, sizeof(out));
		printf("initdb failed:\n%s\n", out);
		return -1;
	}
	d->pid = proc_spawn_as(argv, NULL, d->log, pw->pw_uid, pw->pw_gid);
	return log_wait(d->log, "ready to accept connections", 20000);
}

/* A data directory made by mariadb-install-db, then mariadbd on it, as root. */
static int mysql_start(struct dep_server *d)
{
	char data[H_PATH], datadir[H_PATH + 16], sock[H_PATH + 16], port[32], pidf[H_PATH + 16];
	char out[4096];
	const char *init[] = { "mariadb-install-db",
			       "--no-defaults",
			       datadir,
			       "--user=root",
			       "--auth-root-authentication-method=normal",
			       "--skip-test-db",
			       NULL };
	const char *argv[] = { "/usr/sbin/mariadbd",
			       "--no-defaults",
			       datadir,
			       sock,
			       port,
			       "--bind-address=127.0.0.1",
			       "--user=root",
			       "--skip-log-bin",
			       "--innodb-buffer-pool-size=16M",
			       pidf,
			       NULL };

	snprintf(data, sizeof(data), "%s/data", d->dir);
	snprintf(datadir, sizeof(datadir), "--datadir=%s", data);
	snprintf(d->sock, sizeof(d->sock), "%s/my.sock", d->dir);
	snprintf(sock, sizeof(sock), "--socket=%s", d->sock);
	snprintf(port, sizeof(port), "--port=%d", d->port);
	snprintf(pidf, sizeof(pidf), "--pid-file=%s/my.pid", d->dir);
	snprintf(d->unix_addr, sizeof(d->unix_addr), "%s", d->sock);
	snprintf(d->comm, sizeof(d->comm), "mariadbd");
	if (proc_run(init, out, sizeof(out), 60000) != 0) {
		printf("mariadb-install-db failed:\n%s\n", out);
		return -1;
	}
	d->pid = proc_spawn(argv, NULL, d->log);
	return log_wait(d->log, "ready for connections", 20000);
}

int dep_server_start(struct dep_server *d, enum dep_kind kind, bool tls)
{
	int rc;

	memset(d, 0, sizeof(*d));
	d->kind = kind;
	snprintf(d->dir, sizeof(d->dir), "/tmp/claimd-dep-%s.XXXXXX", dep_kind_name(kind));
	/* 0755: PostgreSQL's user reaches it, as the services do its socket file. */
	if (!mkdtemp(d->dir) || chmod(d->dir, 0755)) {
		d->dir[0] = 0;
		return -1;
	}
	snprintf(d->log, sizeof(d->log), "%s/server.log", d->dir);
	d->port = sock_free_port();
	snprintf(d->tcp_addr, sizeof(d->tcp_addr), "127.0.0.1:%d", d->port);
	rc = kind == DEP_REDIS	    ? redis_start(d)
	     : kind == DEP_POSTGRES ? postgres_start(d, tls)
				    : mysql_start(d);
	if (rc) {
		char out[4096];

		read_file(d->log, out, sizeof(out));
		printf("%s did not start; its log:\n%s\n", dep_kind_name(kind), out);
	} else {
		claimd_programs_settle();
	}
	return rc;
}

void dep_server_stop(struct dep_server *d)
{
	if (d->pid > 0) {
		/* PostgreSQL's fast shutdown (SIGINT) ends its backends; SIGTERM waits on them. */
		kill(d->pid, d->kind == DEP_POSTGRES ? SIGINT : SIGTERM);
		if (proc_wait(d->pid, 15000) == -1)
			proc_stop(d->pid, 1000);
	}
	d->pid = 0;
	tmpdir_remove(d->dir);
	d->dir[0] = 0;
}

const char *dep_server_callee(const struct dep_server *d, bool over_unix, char *out, size_t len)
{
	if (over_unix)
		snprintf(out, len, "%s:%s", d->comm, d->sock);
	else
		snprintf(out, len, "%s:%d", d->comm, d->port);
	return out;
}
