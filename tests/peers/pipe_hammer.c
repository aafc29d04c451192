// SPDX-License-Identifier: GPL-2.0
/*
 * An untraced process for the benchmark: N one-byte writes and reads
 * - on a pipe (no program of claimd's runs for them: its bytes come from
 *   the socket tracepoints);
 * - on a loopback TCP connection (the program runs and leaves at its filter);
 * - on a Unix stream connection to a socket file (D-Bus's and X11's
 *   clients, and services' stdout to journald, talk so: the Unix filter);
 * - on a Unix datagram pair (a logging client's, syslog's and journald's
 *   native protocol: the Unix filter leaves at the socket's type);
 * or N getppid() calls (no program, only what any syscall tracepoint costs
 * every syscall). Prints the wall time per syscall, best of five rounds,
 * so that bench.sh can compare it with and without claimd, and read the
 * program's time per run for the socket cases.
 *
 *   pipe_hammer N [pipe|tcp|unix|unixdg|getppid]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 5

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* A connected loopback TCP pair in fd[0] (one end) and fd[1] (the other); 0 or -1. */
static int tcp_pair(int fd[2])
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sa, &len))
		return -1;
	fd[1] = socket(AF_INET, SOCK_STREAM, 0);
	if (fd[1] < 0 || connect(fd[1], (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	fd[0] = accept(l, NULL, NULL);
	close(l);
	if (fd[0] < 0)
		return -1;
	setsockopt(fd[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

/* The same over a socket file (made and removed here): a named listener's connection. */
static int unix_pair(int fd[2])
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/pipe_hammer.%d.sock", (int)getpid());
	unlink(sa.sun_path);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1))
		return -1;
	fd[1] = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd[1] < 0 || connect(fd[1], (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	fd[0] = accept(l, NULL, NULL);
	close(l);
	unlink(sa.sun_path);
	return fd[0] < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i;
	const char *mode = argc > 2 ? argv[2] : "pipe";
	double best = 0;
	int fd[2] = { -1, -1 }, r;
	char c = 'x';

	if (n <= 0)
		return 2;
	if (!strcmp(mode, "pipe")) {
		int p[2];

		if (pipe(p))
			return 2;
		fd[0] = p[0];
		fd[1] = p[1];
	} else if (!strcmp(mode, "tcp")) {
		if (tcp_pair(fd))
			return 2;
	} else if (!strcmp(mode, "unix")) {
		if (unix_pair(fd))
			return 2;
	} else if (!strcmp(mode, "unixdg")) {
		if (socketpair(AF_UNIX, SOCK_DGRAM, 0, fd))
			return 2;
	} else if (strcmp(mode, "getppid")) {
		return 2;
	}
	for (r = 0; r < ROUNDS; r++) {
		double t0 = now_ns(), per;

		for (i = 0; i < n; i++) {
			if (!strcmp(mode, "getppid")) {
				syscall(SYS_getppid);
				continue;
			}
			if (write(fd[1], &c, 1) != 1 || read(fd[0], &c, 1) != 1)
				return 1;
		}
		per = (now_ns() - t0) / (strcmp(mode, "getppid") ? 2 * n : n);
		if (!r || per < best)
			best = per;
	}
	printf("{\"mode\":\"%s\",\"syscalls\":%ld,\"ns_per_syscall\":%.1f}\n", mode,
	       ROUNDS * (strcmp(mode, "getppid") ? 2 * n : n), best);
	return 0;
}
