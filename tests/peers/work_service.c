// SPDX-License-Identifier: GPL-2.0
/*
 * A service that does some CPU work per request, for the benchmark: thread
 * per connection, HTTP/1.1 keep-alive on 127.0.0.1, every request (any
 * method and target, no body) answered 200 after spinning about US
 * microseconds of CPU. The spin is a fixed number of rounds of a hash loop,
 * calibrated at start against the thread's CPU clock, so a request costs the
 * same CPU whether or not its thread is preempted meanwhile; a GET whose
 * target starts /fail is answered 503 after the same work. Writes its port
 * to FILE once listening; prints the calibration on stderr.
 *
 *   work_service [-p PORT] [-u US] [-r FILE]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "head_loop.h"

static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
static const char failed[] = "HTTP/1.1 503 Failed\r\nContent-Length: 3\r\n\r\nno\n";
static unsigned long rounds_per_request;
static volatile uint64_t sink;

/* The work: rounds of a xorshift-multiply hash, kept from being optimized away. */
static void spin(unsigned long rounds)
{
	uint64_t x = (uint64_t)(uintptr_t)&rounds | 1;
	unsigned long i;

	for (i = 0; i < rounds; i++) {
		x ^= x >> 33;
		x *= 0xff51afd7ed558ccdull;
		x ^= x >> 29;
	}
	sink = x;
}

static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Rounds that take 'us' microseconds of this thread's CPU: the fastest of a few tries. */
static unsigned long calibrate(double us)
{
	unsigned long n = 1 << 20;
	double best = 0;
	int i;

	spin(n); /* warm up */
	for (i = 0; i < 5; i++) {
		double t0 = thread_cpu_ns(), dt;

		spin(n);
		dt = thread_cpu_ns() - t0;
		if (dt > 0 && (best == 0 || dt < best))
			best = dt;
	}
	return best > 0 ? (unsigned long)(n * us * 1000 / best) : n;
}

/* One request's answer: the work, then the answer. */
static int work_answer(int fd, const char *head, void *arg)
{
	const char *a = strncmp(head, "GET /fail", 9) ? answer : failed;
	size_t len = strlen(a);

	(void)arg;
	spin(rounds_per_request);
	return write(fd, a, len) == (ssize_t)len ? 0 : -1;
}

/* Serves one connection: each request head read (no body), then the work, then the answer. */
static void *serve(void *arg)
{
	int fd = (int)(intptr_t)arg, one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	serve_heads(fd, work_answer, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	const char *ready = NULL;
	double us = 100;
	int opt, lfd, one = 1, port = 0;
	pthread_attr_t attr;

	while ((opt = getopt(argc, argv, "p:u:r:")) != -1) {
		if (opt == 'p')
			port = atoi(optarg);
		else if (opt == 'u')
			us = atof(optarg);
		else if (opt == 'r')
			ready = optarg;
		else
			goto usage;
	}
	if (optind != argc || us < 0 || port < 0 || port > 65535)
		goto usage;
	signal(SIGPIPE, SIG_IGN);
	rounds_per_request = us > 0 ? calibrate(us) : 0;
	fprintf(stderr, "work_service: %.0f us of work per request: %lu rounds\n", us,
		rounds_per_request);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(port);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1024) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len)) {
		perror("work_service: listen");
		return 1;
	}
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (!f) {
			perror(ready);
			return 1;
		}
		fprintf(f, "%d\n", ntohs(sa.sin_port));
		fclose(f);
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		pthread_t th;

		if (fd < 0)
			continue;
		if (pthread_create(&th, &attr, serve, (void *)(intptr_t)fd))
			close(fd);
	}
usage:
	fprintf(stderr, "usage: %s [-p PORT] [-u US] [-r FILE]\n", argv[0]);
	return 2;
}
