// SPDX-License-Identifier: GPL-2.0
/* Patched copies of Go programs; see gopatch.h. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gopatch.h"

/* The whole file at path, malloc'd; NULL on error. */
static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && st.st_size > 0)
		buf = malloc(st.st_size);
	if (buf && pread(fd, buf, st.st_size, 0) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	*len = buf ? (size_t)st.st_size : 0;
	close(fd);
	return buf;
}

int gopatch_copy(const char *src, const char *dst, const char *anchor, size_t anchor_len,
		 const char *from, const char *to, int max)
{
	size_t len, n = strlen(from);
	char *buf = slurp(src, &len), *p, *end;
	int done = 0, fd;

	if (!buf || strlen(to) != n)
		goto fail;
	p = buf;
	end = buf + len;
	if (anchor && !(p = memmem(buf, len, anchor, anchor_len)))
		goto fail;
	while ((!max || done < max) && (p = memmem(p, (size_t)(end - p), from, n))) {
		memcpy(p, to, n);
		p += n;
		done++;
	}
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0)
		goto fail;
	if (write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		goto fail;
	}
	close(fd);
	free(buf);
	return done;
fail:
	free(buf);
	return -1;
}
