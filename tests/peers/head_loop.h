/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the C test services share: one connection served head by head.
 * Each request head (no body) read up to its blank line is handed to
 * answer(fd, head, arg), which writes the answer; a non-zero return ends
 * the connection, as does the client's end or a head longer than 8 KiB.
 * Closes fd.
 */
#ifndef CLAIMD_PEERS_HEAD_LOOP_H
#define CLAIMD_PEERS_HEAD_LOOP_H

#include <string.h>
#include <unistd.h>

typedef int (*head_answer_fn)(int fd, const char *head, void *arg);

static inline void serve_heads(int fd, head_answer_fn answer, void *arg)
{
	char buf[8192];
	size_t have = 0;

	for (;;) {
		char *end;
		ssize_t n;

		buf[have] = 0;
		while ((end = strstr(buf, "\r\n\r\n"))) {
			size_t used = end + 4 - buf;

			if (answer(fd, buf, arg))
				goto out;
			memmove(buf, buf + used, have - used);
			have -= used;
			buf[have] = 0;
		}
		if (have == sizeof(buf) - 1)
			break; /* a head this large is not ours */
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			break;
		have += n;
	}
out:
	close(fd);
}

#endif
