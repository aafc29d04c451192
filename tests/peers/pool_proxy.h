/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pool_proxy, a reverse proxy in the shape real ones have, for the
 * end-to-end shape tests: worker threads share one pool of keep-alive
 * connections to one backend (pool_conn.c), and talk to their clients in
 * the clear or through OpenSSL fed by memory BIOs (pool_tls.c).
 */
#ifndef CLAIMD_POOL_PROXY_H
#define CLAIMD_POOL_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* One client connection: a socket, plain or TLS through two memory BIOs. */
struct client {
	int fd;
	void *ssl; /* SSL *, or NULL in the clear */
};

/* Loads the certificate and key the client side serves. 0 or -1. */
int tls_init(const char *cert, const char *key);
/* tls: terminate TLS (tls_init first). 0 or -1. */
int client_open(struct client *c, int fd, bool tls);
void client_close(struct client *c);
/* Plaintext from the client: > 0 bytes, 0 at its end, -1 on error. */
ssize_t client_read(struct client *c, void *buf, size_t len);
/* All of buf to the client. 0 or -1. */
int client_write(struct client *c, const void *buf, size_t len);

/* What the pool did, for the test to check the shape it asked for. */
struct pool_stats {
	unsigned long opened;	     /* connections made to the backend */
	unsigned long reused;	     /* calls on a connection from the pool */
	unsigned long reused_other;  /* ... opened by another thread */
	unsigned long probed_alive;  /* probes answered EAGAIN */
	unsigned long probed_closed; /* probes that found the backend gone */
	unsigned long discarded;     /* connections closed after an error */
	unsigned long after_break;   /* calls on the connection of the broken call, after it */
};

/* One backend connection, and the thread that opened it. */
struct pooled {
	int fd;
	pid_t opener;
	bool broken; /* it carried the call written to lose claimd's framing */
};

void pool_init(int backend_port);
/* A live connection to the backend: from the pool (probed), else new. 0 or -1. */
int pool_take(struct pooled *p);
/* Back to the pool after a complete exchange. */
void pool_put(const struct pooled *p);
/* Closed: it is out of step or broken. */
void pool_discard(struct pooled *p);
void pool_stats(struct pool_stats *out);

#endif
