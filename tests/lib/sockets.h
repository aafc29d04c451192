/* SPDX-License-Identifier: GPL-2.0 */
/* Real loopback sockets for tests: listeners on a free port, clients, exact I/O. */
#ifndef CLAIMD_TEST_SOCKETS_H
#define CLAIMD_TEST_SOCKETS_H

#include <stddef.h>
#include <sys/types.h>

/* A listening TCP socket on 127.0.0.1 and a port the kernel chose. */
int sock_listen(int *port);
/* A connected socket to 127.0.0.1:port (blocking), or -1. */
int sock_connect(int port);
/* A port with nobody listening on it (bound, then released). */
int sock_free_port(void);
/* Waits until something listens on 127.0.0.1:port, timeout_ms at most: 0, or -1. */
int sock_wait_listening(int port, int timeout_ms);
int sock_send(int fd, const char *data);
/* Sends data in pieces of the given sizes, pausing between them. */
int sock_send_pieces(int fd, const char *data, const size_t *sizes, int n, int pause_ms);
/* Reads until the buffer holds 'want' (a substring), EOF or an error,
 * 'chunk' bytes per read. Returns bytes read, or -errno if nothing was. */
ssize_t sock_recv_until(int fd, char *buf, size_t len, const char *want, size_t chunk);
/* Close with RST instead of FIN. */
void sock_reset(int fd);

#endif
