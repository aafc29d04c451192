// SPDX-License-Identifier: GPL-2.0
/*
 * A front service for the connection-churn soak (tests/bpf/test_churn.c):
 * thread per client connection; each request head (no body) becomes one
 * call to the backend on a connection of its own, opened for that call and
 * closed after its answer, as a client without keep-alive makes them. The
 * front answers with the backend's status (502 when the call itself
 * failed) and closes the client's connection when the client asked for it
 * ("Connection: close", as ab without -k does not; HTTP/1.0 heads too).
 * With -f N, every Nth request it answers (counted from 1, in the order
 * they arrive) asks the backend for /fail/<n> instead of its own target,
 * which tests/peers/work_service.c fails: the front passes that failure up.
 * With -m, a thread of its own accepts, and the main thread leaves
 * (pthread_exit) at SIGUSR1, as a daemon's main thread that hands over
 * once set up: the process goes on, its leader a zombie. Writes its port
 * to FILE once listening; at SIGTERM, how many requests it answered and
 * how many calls it made, as JSON on stdout.
 *
 *   churn_front -b BACKEND_PORT -r FILE [-f N] [-m]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "head_loop.h"

static int backend_port, fail_every;
static atomic_long answered, calls, calls_failed, requests;

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* One call on a new connection: the backend's status, 0 when the call failed. */
static int call_backend(const char *target)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(backend_port) };
	char req[512], buf[4096];
	size_t have = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0), status = 0;
	char *end, *cl;
	long body = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	atomic_fetch_add(&calls, 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		goto out;
	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", target,
		 backend_port);
	if (write_all(fd, req, strlen(req)))
		goto out;
	/* The head, then its Content-Length's body. */
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);

		if (n <= 0)
			goto out;
		have += n;
		buf[have] = 0;
		if ((end = strstr(buf, "\r\n\r\n")))
			break;
		if (have == sizeof(buf) - 1)
			goto out;
	}
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		goto out;
	cl = strcasestr(buf, "\r\ncontent-length:");
	if (cl)
		body = atol(cl + 17);
	body -= (long)(have - (end + 4 - buf));
	while (body > 0) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0) {
			status = 0;
			goto out;
		}
		body -= n;
	}
out:
	if (fd >= 0)
		close(fd);
	if (!status)
		atomic_fetch_add(&calls_failed, 1);
	return status;
}

static int answer(int fd, const char *head, void *arg)
{
	char target[256] = "/", out[256];
	long nth = atomic_fetch_add(&requests, 1) + 1;
	int status, n, close_after;

	(void)arg;
	if (fail_every && nth % fail_every == 0)
		snprintf(target, sizeof(target), "/fail/%ld", nth);
	else
		sscanf(head, "%*s %255s", target);
	status = call_backend(target);
	close_after = strstr(head, "HTTP/1.0") || strcasestr(head, "\r\nconnection: close");
	n = snprintf(out, sizeof(out), "HTTP/1.1 %d %s\r\nContent-Length: 3\r\n%s\r\nok\n",
		     status ?: 502, status && status < 500 ? "OK" : "Failed",
		     close_after ? "Connection: close\r\n" : "");
	if (write_all(fd, out, n))
		return 1;
	atomic_fetch_add(&answered, 1);
	return close_after;
}

static void *serve(void *p)
{
	serve_heads((int)(long)p, answer, NULL);
	return NULL;
}

static void *accept_loop(void *p)
{
	int lfd = (int)(long)p;

	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		pthread_t t;

		if (fd < 0)
			continue;
		if (pthread_create(&t, NULL, serve, (void *)(long)fd)) {
			close(fd);
			continue;
		}
		pthread_detach(t);
	}
	return NULL;
}

/* -m: accept on a thread of its own; the main thread leaves at SIGUSR1. */
static int main_leaves(int lfd)
{
	sigset_t usr1;
	pthread_t t;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	/* Blocked in every thread, so that only sigwait takes it. */
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (pthread_create(&t, NULL, accept_loop, (void *)(long)lfd))
		return 1;
	sigwait(&usr1, &sig);
	pthread_exit(NULL);
}

static void on_term(int sig)
{
	char out[160];
	int n;

	(void)sig;
	n = snprintf(out, sizeof(out),
		     "{\"answered\": %ld, \"calls\": %ld, \"calls_failed\": %ld}\n",
		     atomic_load(&answered), atomic_load(&calls), atomic_load(&calls_failed));
	write_all(STDOUT_FILENO, out, n);
	_exit(0);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	const char *ready = NULL;
	int lfd, one = 1, opt;
	bool leaves = false;
	FILE *f;

	while ((opt = getopt(argc, argv, "b:r:f:m")) != -1) {
		if (opt == 'm')
			leaves = true;
		else if (opt == 'b')
			backend_port = atoi(optarg);
		else if (opt == 'f')
			fail_every = atoi(optarg);
		else if (opt == 'r')
			ready = optarg;
		else
			return 2;
	}
	if (!backend_port || !ready) {
		fprintf(stderr, "usage: churn_front -b BACKEND_PORT -r FILE [-f N] [-m]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_term);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 512) ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen)) {
		perror("churn_front: listen");
		return 1;
	}
	f = fopen(ready, "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", ntohs(a.sin_port));
	fclose(f);
	if (leaves)
		return main_leaves(lfd);
	accept_loop((void *)(long)lfd);
	return 0;
}
