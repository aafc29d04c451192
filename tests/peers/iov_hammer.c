// SPDX-License-Identifier: GPL-2.0
/*
 * Vectored writes for the benchmark: one keep-alive connection on loopback,
 * a client writing the same request head with one writev(2) of N iovec
 * entries (the head cut into N pieces), a server thread answering each
 * with an empty 200. With claimd following the process, bench.sh reads the
 * read/write program's time over the requests: against one piece, what
 * framing an N-piece head costs. Prints the wall time per request.
 *
 *   iov_hammer SEGMENTS REQUESTS
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_SEGMENTS 1024

static const char head[] = "GET /r/1 HTTP/1.1\r\n"
			   "Host: 127.0.0.1\r\n"
			   "User-Agent: iov-hammer/1\r\n"
			   "Accept: */*\r\n"
			   "Accept-Encoding: identity\r\n"
			   "X-Request-Id: 0123456789abcdef\r\n"
			   "X-Forwarded-For: 127.0.0.1\r\n"
			   "Connection: keep-alive\r\n"
			   "\r\n";
static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

/* Reads until n whole copies of 'msg' arrived; 0 or -1. */
static int read_messages(int fd, size_t msglen)
{
	char buf[4096];
	size_t got = 0;

	while (got < msglen) {
		ssize_t r = read(fd, buf, sizeof(buf) < msglen - got ? sizeof(buf) : msglen - got);

		if (r <= 0)
			return -1;
		got += r;
	}
	return 0;
}

struct server {
	int lfd;
	long requests;
};

static void *serve(void *arg)
{
	struct server *s = arg;
	int fd = accept(s->lfd, NULL, NULL);
	long i;

	if (fd < 0)
		return NULL;
	for (i = 0; i < s->requests; i++) {
		if (read_messages(fd, sizeof(head) - 1) ||
		    write(fd, answer, sizeof(answer) - 1) != (ssize_t)(sizeof(answer) - 1))
			break;
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	int nseg = argc > 1 ? atoi(argv[1]) : 8;
	long n = argc > 2 ? atol(argv[2]) : 100000, i;
	struct sockaddr_in a = { .sin_family = AF_INET };
	static struct iovec iov[MAX_SEGMENTS];
	size_t len = sizeof(head) - 1, off = 0;
	struct server s = { .requests = n };
	socklen_t alen = sizeof(a);
	struct timespec t0, t1;
	pthread_t th;
	int fd, k, one = 1;

	if (nseg < 1 || nseg > MAX_SEGMENTS || (size_t)nseg > len || n <= 0) {
		fprintf(stderr, "usage: iov_hammer SEGMENTS(1..%d) REQUESTS\n", MAX_SEGMENTS);
		return 2;
	}
	for (k = 0; k < nseg; k++) {
		size_t piece = len / nseg + ((size_t)k < len % nseg);

		iov[k].iov_base = (char *)head + off;
		iov[k].iov_len = piece;
		off += piece;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s.lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (s.lfd < 0 || bind(s.lfd, (struct sockaddr *)&a, sizeof(a)) || listen(s.lfd, 1) ||
	    getsockname(s.lfd, (struct sockaddr *)&a, &alen))
		return 1;
	if (pthread_create(&th, NULL, serve, &s))
		return 1;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		if (writev(fd, iov, nseg) != (ssize_t)len || read_messages(fd, sizeof(answer) - 1))
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(fd);
	pthread_join(th, NULL);
	printf("{\"segments\":%d,\"requests\":%ld,\"ns_per_request\":%.1f}\n", nseg, n,
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n);
	return 0;
}
