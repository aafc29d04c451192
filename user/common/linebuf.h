/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Newline-delimited JSON over a stream socket, as claimd and claimctl speak
 * it on the control socket: a line buffer that reads what arrived and hands
 * out complete lines, bounded so a client cannot make claimd grow forever.
 */
#ifndef CLAIMD_LINEBUF_H
#define CLAIMD_LINEBUF_H

#include <stddef.h>
#include <sys/types.h>

struct linebuf {
	char *buf;
	size_t start; /* first byte not handed out yet */
	size_t len;
	size_t cap;
	size_t max; /* a line longer than this is an error */
};

void linebuf__init(struct linebuf *lb, size_t max);
void linebuf__release(struct linebuf *lb);
/* Reads what fd has. Returns bytes read, 0 at EOF, -errno on error
 * (-EAGAIN when nothing is there, -E2BIG when a line exceeds max). */
ssize_t linebuf__fill(struct linebuf *lb, int fd);
/* The next complete line (NUL-terminated, newline removed), or NULL. The
 * pointer is valid until the next linebuf__fill. */
char *linebuf__next(struct linebuf *lb, size_t *len);

/* Writes all of buf to a blocking fd. Returns 0 or -errno. */
int write_all(int fd, const void *buf, size_t len);

#endif
