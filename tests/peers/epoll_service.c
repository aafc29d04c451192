// SPDX-License-Identifier: GPL-2.0
/*
 * A single-threaded epoll proxy for the explicit-context test: one thread,
 * many requests in flight. Each request GET /r/<id> becomes a call to the
 * downstream service on a new non-blocking connection; the answer is 200,
 * or 502 with x-error-claim from libclaim when the call failed. Around all
 * the work it does for one request it calls claim_context_enter(client fd)
 * and claim_context_leave(), so claimd keeps the requests' calls apart.
 * The framing of requests and answers uses the project's one parser.
 *
 *   epoll_service -d PORT -r READY_FILE [-n] (-n: never call libclaim)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "claim.h"
#include "http_parse.h"

#define MAX_FDS 4096

enum kind { NONE, LISTENER, CLIENT, UPSTREAM };

struct conn {
	enum kind kind;
	int peer;	      /* CLIENT: its upstream fd, or -1; UPSTREAM: its client fd */
	struct http_framer f; /* what this fd sends us */
	int started, done;    /* a message began / its head is complete */
	int status;
	char target[64];
	char out[512];
	size_t out_len, out_off;
};

static struct conn conns[MAX_FDS];
static struct claim *claim;
static int epfd, down_port, use_claim = 1;

static void enter(int client)
{
	if (use_claim)
		claim_context_enter(client);
}

static void leave(void)
{
	if (use_claim)
		claim_context_leave();
}

static void watch(int fd, enum kind kind, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	conns[fd].kind = kind;
	epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void drop(int fd)
{
	epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	memset(&conns[fd], 0, sizeof(conns[fd]));
	conns[fd].peer = -1;
}

static void on_event(void *ctx, struct http_framer *f, __u32 ev)
{
	struct conn *c = ctx;

	if (ev & HTTP_EV_START) {
		c->started = 1;
		c->status = f->status;
	}
	if (ev & HTTP_EV_HEAD_END)
		c->done = 1;
}

/* Reads what fd has into its framer; keeps the request target for clients. */
static int receive(int fd)
{
	struct conn *c = &conns[fd];
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	if (n <= 0)
		return n == 0 || errno != EAGAIN ? -1 : 0;
	buf[n] = 0;
	if (c->kind == CLIENT && !c->started && sscanf(buf, "GET %63s", c->target) != 1)
		c->target[0] = 0;
	http_feed(&c->f, (const __u8 *)buf, n, on_event, c);
	return c->f.state == HS_LOST ? -1 : 0;
}

static void answer(int client, int status)
{
	struct conn *c = &conns[client];
	char claim_hdr[64] = "";

	if (status != 200 && use_claim)
		claim_format_header(claim_current(claim, NULL), claim_hdr, sizeof(claim_hdr));
	c->out_len = snprintf(c->out, sizeof(c->out),
			      "HTTP/1.1 %d %s\r\nContent-Length: 0\r\n%sConnection: close\r\n\r\n",
			      status, status == 200 ? "OK" : "Bad Gateway", claim_hdr);
	if (write(client, c->out, c->out_len) < 0)
		perror("write");
	drop(client);
}

static void call_downstream(int client)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(down_port) };
	char target[sizeof(conns[0].target)];
	struct conn *u;
	int fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || fd >= MAX_FDS) {
		answer(client, 502);
		return;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS) {
		close(fd);
		answer(client, 502);
		return;
	}
	/* A copy: compilers cannot tell the two connections apart. */
	memcpy(target, conns[client].target, sizeof(target));
	u = &conns[fd];
	http_framer_init(&u->f, HTTP_KIND_RESPONSE, 0);
	u->peer = client;
	conns[client].peer = fd;
	u->out_len = snprintf(u->out, sizeof(u->out),
			      "GET %s HTTP/1.1\r\nHost: down\r\nConnection: close\r\n\r\n", target);
	watch(fd, UPSTREAM, EPOLLOUT | EPOLLIN);
}

static void on_client(int fd)
{
	enter(fd);
	if (receive(fd) < 0) {
		if (conns[fd].peer >= 0)
			drop(conns[fd].peer);
		drop(fd);
	} else if (conns[fd].done && conns[fd].peer < 0) {
		call_downstream(fd);
	}
	leave();
}

static void on_upstream(int fd, uint32_t events)
{
	struct conn *u = &conns[fd];
	int client = u->peer;

	enter(client);
	if ((events & EPOLLOUT) && u->out_off < u->out_len) {
		ssize_t n = write(fd, u->out + u->out_off, u->out_len - u->out_off);

		if (n > 0)
			u->out_off += n;
		if (n < 0 && errno != EAGAIN) {
			drop(fd);
			answer(client, 502);
			goto out;
		}
		if (u->out_off == u->out_len) {
			struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

			epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
		}
	}
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
		int failed = receive(fd) < 0;

		if (u->done || failed) {
			int status = u->done && u->status < 500 ? 200 : 502;

			drop(fd);
			answer(client, status);
		}
	}
out:
	leave();
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const char *ready = NULL;
	socklen_t len = sizeof(sa);
	int lfd, opt, i;
	FILE *f;

	while ((opt = getopt(argc, argv, "d:r:n")) != -1) {
		if (opt == 'd')
			down_port = atoi(optarg);
		else if (opt == 'r')
			ready = optarg;
		else if (opt == 'n')
			use_claim = 0;
	}
	if (!down_port || !ready) {
		fprintf(stderr, "usage: %s -d PORT -r READY_FILE [-n]\n", argv[0]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < MAX_FDS; i++)
		conns[i].peer = -1;
	claim = claim_open(NULL);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 256) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len)) {
		perror("listen");
		return 1;
	}
	watch(lfd, LISTENER, EPOLLIN);
	f = fopen(ready, "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", ntohs(sa.sin_port));
	fclose(f);

	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(epfd, evs, 64, -1);

		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (conns[fd].kind == LISTENER) {
				int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

				if (c < 0)
					continue;
				if (c >= MAX_FDS) {
					close(c);
					continue;
				}
				http_framer_init(&conns[c].f, HTTP_KIND_REQUEST, 0);
				conns[c].peer = -1;
				watch(c, CLIENT, EPOLLIN);
			} else if (conns[fd].kind == CLIENT) {
				on_client(fd);
			} else if (conns[fd].kind == UPSTREAM) {
				on_upstream(fd, evs[i].events);
			}
		}
	}
}
