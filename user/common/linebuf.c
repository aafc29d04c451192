// SPDX-License-Identifier: GPL-2.0
/* Newline-delimited JSON streams; see jsonio.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linebuf.h"

void linebuf__init(struct linebuf *lb, size_t max)
{
	memset(lb, 0, sizeof(*lb));
	lb->max = max;
}

void linebuf__release(struct linebuf *lb)
{
	free(lb->buf);
	memset(lb, 0, sizeof(*lb));
}

ssize_t linebuf__fill(struct linebuf *lb, int fd)
{
	ssize_t n;

	/* Lines handed out before are done with: drop them. */
	if (lb->start) {
		memmove(lb->buf, lb->buf + lb->start, lb->len - lb->start);
		lb->len -= lb->start;
		lb->start = 0;
	}
	if (lb->cap - lb->len < 4096) {
		size_t cap = lb->cap ? lb->cap * 2 : 8192;
		char *p;

		if (lb->len >= lb->max)
			return -E2BIG;
		if (cap > lb->max + 1)
			cap = lb->max + 1;
		p = realloc(lb->buf, cap);
		if (!p)
			return -ENOMEM;
		lb->buf = p;
		lb->cap = cap;
	}
	n = read(fd, lb->buf + lb->len, lb->cap - lb->len - 1);
	if (n < 0)
		return -errno;
	lb->len += n;
	return n;
}

char *linebuf__next(struct linebuf *lb, size_t *len)
{
	char *line = lb->buf + lb->start, *nl;

	if (lb->start >= lb->len)
		return NULL;
	nl = memchr(line, '\n', lb->len - lb->start);
	if (!nl)
		return NULL;
	*nl = 0;
	if (len)
		*len = nl - line;
	lb->start = nl + 1 - lb->buf;
	return line;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}
