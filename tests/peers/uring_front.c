// SPDX-License-Identifier: GPL-2.0
/*
 * A front whose calls go through io_uring, as services built on an
 * io_uring runtime make them: it reads each request GET /r/<id> and
 * answers with plain syscalls, one connection at a time, and calls its
 * backend for it on a new connection whose connect, send and receive are
 * io_uring operations (liburing). The backend's 5xx is passed up as 502;
 * a call that fails otherwise too.
 *
 *   uring_front -d BACKEND_PORT -r READY_FILE
 *
 * Writes its listening port into READY_FILE when it serves.
 */
#include <arpa/inet.h>
#include <liburing.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct io_uring ring;

/* One operation prepared by prep, submitted and waited for: its result. */
static int uring_op(void (*prep)(struct io_uring_sqe *sqe, void *arg), void *arg)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;
	int res;

	if (!sqe)
		return -1;
	prep(sqe, arg);
	if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe))
		return -1;
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

struct op {
	int fd;
	void *buf;
	size_t len;
	struct sockaddr_in *sa;
};

static void prep_connect(struct io_uring_sqe *sqe, void *arg)
{
	struct op *o = arg;

	io_uring_prep_connect(sqe, o->fd, (struct sockaddr *)o->sa, sizeof(*o->sa));
}

static void prep_send(struct io_uring_sqe *sqe, void *arg)
{
	struct op *o = arg;

	io_uring_prep_send(sqe, o->fd, o->buf, o->len, 0);
}

static void prep_recv(struct io_uring_sqe *sqe, void *arg)
{
	struct op *o = arg;

	io_uring_prep_recv(sqe, o->fd, o->buf, o->len, 0);
}

/* GET target of the backend at port, through the ring: its status, or 0 when the call failed. */
static int call(int port, const char *target)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	char req[256], resp[1024];
	struct op o = { .sa = &sa };
	int status = 0, n, got = 0;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	o.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (o.fd < 0 || uring_op(prep_connect, &o) < 0)
		goto out;
	o.len = snprintf(req, sizeof(req),
			 "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", target);
	o.buf = req;
	if (uring_op(prep_send, &o) != (int)o.len)
		goto out;
	/* Until the status line is in. */
	while (got < (int)sizeof(resp) - 1 && !memchr(resp, '\n', got)) {
		o.buf = resp + got;
		o.len = sizeof(resp) - 1 - got;
		n = uring_op(prep_recv, &o);
		if (n <= 0)
			break;
		got += n;
	}
	resp[got] = 0;
	if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1)
		status = 0;
out:
	if (o.fd >= 0)
		close(o.fd);
	return status;
}

static void serve(int client, int down_port)
{
	char buf[2048], target[64] = "", out[256];
	int status, len;
	ssize_t n = read(client, buf, sizeof(buf) - 1);

	if (n <= 0)
		return;
	buf[n] = 0;
	if (sscanf(buf, "GET %63s", target) != 1)
		return;
	status = call(down_port, target);
	status = status >= 200 && status < 500 ? 200 : 502;
	len = snprintf(out, sizeof(out),
		       "HTTP/1.1 %d %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status,
		       status == 200 ? "OK" : "Bad Gateway");
	if (write(client, out, len) != len)
		perror("write");
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	const char *ready = NULL;
	int opt, lfd, down_port = 0, one = 1;
	FILE *f;

	while ((opt = getopt(argc, argv, "d:r:")) != -1) {
		if (opt == 'd')
			down_port = atoi(optarg);
		else if (opt == 'r')
			ready = optarg;
	}
	if (!down_port || !ready) {
		fprintf(stderr, "usage: uring_front -d BACKEND_PORT -r READY_FILE\n");
		return 64;
	}
	if (io_uring_queue_init(8, &ring, 0)) {
		perror("io_uring_queue_init");
		return 1;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl)) {
		perror("listen");
		return 1;
	}
	f = fopen(ready, "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", ntohs(sa.sin_port));
	fclose(f);
	for (;;) {
		int client = accept(lfd, NULL, NULL);

		if (client < 0)
			continue;
		serve(client, down_port);
		close(client);
	}
}
