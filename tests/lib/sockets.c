// SPDX-License-Identifier: GPL-2.0
/* Loopback socket helpers for tests; see sockets.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "sockets.h"

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sa;
}

int sock_listen(int *port)
{
	struct sockaddr_in sa = loopback(0);
	socklen_t len = sizeof(sa);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 128) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

int sock_connect(int port)
{
	struct sockaddr_in sa = loopback(port);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

int sock_free_port(void)
{
	int port = 0, fd = sock_listen(&port);

	if (fd < 0)
		return -1;
	close(fd);
	return port;
}

int sock_wait_listening(int port, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	while (now_ms() < end) {
		int fd = sock_connect(port);

		if (fd >= 0) {
			close(fd);
			return 0;
		}
		sleep_ms(50);
	}
	return -1;
}

int sock_send(int fd, const char *data)
{
	return write_all_fd(fd, data, strlen(data));
}

int sock_send_pieces(int fd, const char *data, const size_t *sizes, int n, int pause_ms)
{
	size_t off = 0, len = strlen(data);
	int i;

	for (i = 0; i < n && off < len; i++) {
		size_t sz = sizes[i] < len - off ? sizes[i] : len - off;

		if (write_all_fd(fd, data + off, sz))
			return -1;
		off += sz;
		sleep_ms(pause_ms);
	}
	return off < len ? write_all_fd(fd, data + off, len - off) : 0;
}

ssize_t sock_recv_until(int fd, char *buf, size_t len, const char *want, size_t chunk)
{
	size_t got = 0;

	while (got < len - 1) {
		size_t n = chunk < len - 1 - got ? chunk : len - 1 - got;
		ssize_t r = read(fd, buf + got, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return got ? (ssize_t)got : -errno;
		if (r == 0)
			break;
		got += r;
		buf[got] = 0;
		if (want && strstr(buf, want))
			break;
	}
	buf[got] = 0;
	return got;
}

void sock_reset(int fd)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}
