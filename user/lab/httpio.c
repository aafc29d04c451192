// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP/1.1 on loopback sockets for the lab: reading one whole message from a
 * keep-alive connection, framed by the project's one parser (http_feed() of
 * headers/http_parse.h, the same framer the BPF side runs), and the client
 * and server ends built on it. Messages are fed one byte at a time so that a
 * message's end is found exactly and bytes of a next, pipelined message stay
 * in the buffer; heads are a hundred bytes, so this costs nothing next to the
 * system calls.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lab.h"

void hconn_init(struct hconn *c, int fd)
{
	c->fd = fd;
	c->len = 0;
}

void hconn_close(struct hconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->len = 0;
}

static void on_event(void *ctx, struct http_framer *f, __u32 ev)
{
	(void)f;
	*(__u32 *)ctx |= ev;
}

/* The target of a request line the framer accepted: between its two spaces. */
static void copy_target(const char *line, size_t len, struct hmsg *m)
{
	const char *sp1 = memchr(line, ' ', len), *sp2;
	size_t n;

	m->target[0] = 0;
	if (!sp1)
		return;
	sp2 = memchr(sp1 + 1, ' ', line + len - sp1 - 1);
	if (!sp2)
		return;
	n = sp2 - sp1 - 1;
	if (n >= sizeof(m->target))
		n = sizeof(m->target) - 1;
	memcpy(m->target, sp1 + 1, n);
	m->target[n] = 0;
}

int hconn_read(struct hconn *c, enum http_kind kind, struct hmsg *m)
{
	struct http_framer f;
	size_t off = 0, start = 0;
	bool started = false, line_done = false;
	ssize_t n;

	memset(m, 0, sizeof(*m));
	http_framer_init(&f, kind, 0);
	for (;;) {
		while (off < c->len) {
			__u32 ev = 0;
			__u8 b = c->buf[off];

			if (!started && f.state == HS_START && b != '\r' && b != '\n') {
				started = true;
				start = off;
			}
			http_feed(&f, (const __u8 *)c->buf + off, 1, on_event, &ev);
			off++;
			if ((ev & (HTTP_EV_ERROR | HTTP_EV_RESYNC)) || http_swallowing(&f))
				goto bad; /* not HTTP, or a body framed by the close */
			if (ev & HTTP_EV_START) {
				line_done = true;
				if (kind == HTTP_KIND_REQUEST) {
					m->method = f.method;
					copy_target(c->buf + start, off - start, m);
				} else {
					m->status = f.status;
				}
			}
			if (ev & HTTP_EV_HEAD_END)
				m->claim = f.claim;
			if (ev & HTTP_EV_END) {
				memmove(c->buf, c->buf + off, c->len - off);
				c->len -= off;
				return 0;
			}
		}
		/* All fed: keep only an unfinished request line. */
		if (started && !line_done) {
			memmove(c->buf, c->buf + start, c->len - start);
			c->len -= start;
			off -= start;
			start = 0;
		} else {
			c->len = off = 0;
		}
		if (c->len == sizeof(c->buf))
			goto bad; /* a request line longer than the buffer */
		n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto bad; /* closed, reset or timed out before the message ended */
		c->len += n;
	}
bad:
	hconn_close(c);
	return -1;
}

int lab_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, p, len); /* a file */
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

int lab_listen(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(*port) };
	socklen_t len = sizeof(sa);
	int fd, one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1024) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

int lab_connect(const char *addr, int port, int timeout_ms)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int fd, one = 1;

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		errno = EINVAL;
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (timeout_ms > 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

int hclient_get(struct hclient *hc, const char *target, enum http_claim *claim)
{
	char req[LAB_PATH_MAX + 128];
	struct hmsg m;
	int n;

	*claim = HTTP_CLAIM_NONE;
	if (hc->conn.fd < 0) {
		int fd = lab_connect(hc->addr, hc->port, hc->timeout_ms);

		if (fd < 0)
			return 0; /* refused: a transport failure */
		hconn_init(&hc->conn, fd);
	}
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%d\r\n\r\n", target, hc->addr,
		     hc->port);
	if (n < 0 || (size_t)n >= sizeof(req) || lab_write_all(hc->conn.fd, req, n)) {
		hconn_close(&hc->conn);
		return 0;
	}
	if (hconn_read(&hc->conn, HTTP_KIND_RESPONSE, &m))
		return 0;
	*claim = m.claim;
	return m.status;
}

static const char *reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	default:
		return status >= 500 ? "Error" : "Status";
	}
}

int http_respond(int fd, int status, const char *extra, const char *body)
{
	char buf[1024];
	size_t blen = strlen(body);
	int n;

	/* One write: the status line, headers and body leave together. */
	n = snprintf(buf, sizeof(buf), "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\n%s\r\n%s", status,
		     reason(status), blen, extra ? extra : "", body);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1;
	return lab_write_all(fd, buf, n);
}
