// SPDX-License-Identifier: GPL-2.0
/*
 * A reverse proxy in the shape real ones have, for the end-to-end shape
 * tests (tests/bpf/test_shapes.c): an accept loop hands client connections
 * to N worker threads; each request GET <target> becomes a call to one
 * backend on a connection from a pool all workers share (pool_conn.c). The
 * request head goes out in ONE writev of one iovec per line; the backend's
 * answer head is relayed to the client before its body is read, then the
 * body (Content-Length); the proxy's status is the backend's, 502 when the
 * call itself failed. With --tls the client side is TLS through memory BIOs
 * (pool_tls.c). With --break-once ID the call for /r/ID writes its head in
 * more than 64 iovecs of 2 bytes, past what the observer frames, so that
 * claimd loses the framing of that connection on purpose.
 *
 *   pool_proxy --backend PORT --ready FILE [--port PORT] [--threads N]
 *              [--tls CERT KEY] [--break-once ID] [--stats FILE]
 *
 * The ready file gets the listening port; the stats file, at SIGTERM, what
 * the pool did (JSON), for the test to check that the shape is the one it
 * asked for.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pool_proxy.h"

#define HEAD_MAX    8192
#define QUEUE_MAX   1024
#define BREAK_PIECE 2

static struct {
	int backend;
	bool tls;
	char break_target[32]; /* "" or "/r/<id>" */
	int broke;	       /* the broken call was made */
	int head_iovecs;       /* an ordinary head's */
	int break_iovecs;      /* the broken one's */
} cfg;

/* Accepted connections waiting for a worker. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t ready;
	int fds[QUEUE_MAX];
	unsigned head, count;
} queue = { .lock = PTHREAD_MUTEX_INITIALIZER, .ready = PTHREAD_COND_INITIALIZER };

static volatile sig_atomic_t exiting;

static void on_term(int sig)
{
	(void)sig;
	exiting = 1;
}

static void queue_push(int fd)
{
	pthread_mutex_lock(&queue.lock);
	if (queue.count == QUEUE_MAX) {
		pthread_mutex_unlock(&queue.lock);
		close(fd);
		return;
	}
	queue.fds[(queue.head + queue.count++) % QUEUE_MAX] = fd;
	pthread_cond_signal(&queue.ready);
	pthread_mutex_unlock(&queue.lock);
}

static int queue_pop(void)
{
	int fd;

	pthread_mutex_lock(&queue.lock);
	while (!queue.count)
		pthread_cond_wait(&queue.ready, &queue.lock);
	fd = queue.fds[queue.head];
	queue.head = (queue.head + 1) % QUEUE_MAX;
	queue.count--;
	pthread_mutex_unlock(&queue.lock);
	return fd;
}

/* Reads until a blank line ends a head; the bytes after it stay in buf. */
struct reader {
	char buf[HEAD_MAX];
	size_t len;
};

typedef ssize_t (*read_fn)(void *src, void *buf, size_t len);

static ssize_t head_read(struct reader *r, read_fn rd, void *src)
{
	for (;;) {
		char *end;
		ssize_t n;

		r->buf[r->len] = 0;
		end = strstr(r->buf, "\r\n\r\n");
		if (end)
			return end + 4 - r->buf;
		if (r->len >= sizeof(r->buf) - 1)
			return -1;
		n = rd(src, r->buf + r->len, sizeof(r->buf) - 1 - r->len);
		if (n <= 0)
			return n;
		r->len += n;
	}
}

static void reader_consume(struct reader *r, size_t n)
{
	memmove(r->buf, r->buf + n, r->len - n);
	r->len -= n;
}

static ssize_t read_client(void *src, void *buf, size_t len)
{
	return client_read(src, buf, len);
}

static ssize_t read_fd(void *src, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(*(int *)src, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

static long header_long(const char *head, size_t len, const char *name)
{
	size_t nl = strlen(name);
	const char *p = head, *end = head + len;

	while (p < end && (p = memchr(p, '\n', end - p))) {
		p++;
		if ((size_t)(end - p) > nl && !strncasecmp(p, name, nl) && p[nl] == ':')
			return strtol(p + nl + 1, NULL, 10);
	}
	return -1;
}

static int writev_all(int fd, struct iovec *iov, int n)
{
	while (n) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		while (n && (size_t)w >= iov->iov_len) {
			w -= iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= w;
		}
	}
	return 0;
}

/* The request head to the backend, one iovec per line: ten of them. */
static int send_head(struct pooled *p, const char *target, unsigned long seq)
{
	char lines[9][160], head[HEAD_MAX];
	struct iovec iov[IOV_MAX];
	int n = 0, i;
	size_t len = 0;

	snprintf(lines[n++], sizeof(lines[0]), "GET %s HTTP/1.1\r\n", target);
	snprintf(lines[n++], sizeof(lines[0]), "Host: 127.0.0.1:%d\r\n", cfg.backend);
	snprintf(lines[n++], sizeof(lines[0]), "User-Agent: pool_proxy/1.0\r\n");
	snprintf(lines[n++], sizeof(lines[0]), "Accept: */*\r\n");
	snprintf(lines[n++], sizeof(lines[0]), "X-Forwarded-For: 127.0.0.1\r\n");
	snprintf(lines[n++], sizeof(lines[0]), "X-Forwarded-Proto: %s\r\n",
		 cfg.tls ? "https" : "http");
	snprintf(lines[n++], sizeof(lines[0]), "X-Request-Seq: %lu\r\n", seq);
	snprintf(lines[n++], sizeof(lines[0]), "Via: 1.1 pool_proxy\r\n");
	snprintf(lines[n++], sizeof(lines[0]), "Connection: keep-alive\r\n");
	for (i = 0; i < n; i++) {
		iov[i] = (struct iovec){ lines[i], strlen(lines[i]) };
		len += iov[i].iov_len;
	}
	iov[n++] = (struct iovec){ "\r\n", 2 };
	len += 2;
	if (!cfg.break_target[0] || strcmp(target, cfg.break_target) ||
	    __atomic_exchange_n(&cfg.broke, 1, __ATOMIC_RELAXED)) {
		__atomic_store_n(&cfg.head_iovecs, n, __ATOMIC_RELAXED);
		return writev_all(p->fd, iov, n);
	}
	/* The one broken call: the same bytes, BREAK_PIECE at a time. */
	for (i = 0, len = 0; i < n; i++) {
		memcpy(head + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	for (n = 0; (size_t)n * BREAK_PIECE < len && n < IOV_MAX; n++) {
		size_t off = (size_t)n * BREAK_PIECE;

		iov[n] = (struct iovec){ head + off,
					 len - off < BREAK_PIECE ? len - off : BREAK_PIECE };
	}
	cfg.break_iovecs = n;
	p->broken = true;
	fprintf(stderr, "pool_proxy: %s written in %d iovecs\n", target, n);
	return writev_all(p->fd, iov, n);
}

static int answer_502(struct client *c)
{
	static const char r[] = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n";

	return client_write(c, r, sizeof(r) - 1);
}

/* One call to the backend for target, relayed to the client. 0, or -1: drop the client. */
static int relay(struct client *c, const char *target, unsigned long seq)
{
	struct reader *r = calloc(1, sizeof(*r));
	struct pooled p = { .fd = -1 };
	ssize_t head;
	long body;
	int ret = -1;

	if (!r)
		return -1;
	if (pool_take(&p) || send_head(&p, target, seq)) {
		ret = answer_502(c);
		goto out;
	}
	head = head_read(r, read_fd, &p.fd);
	body = head > 0 ? header_long(r->buf, head, "Content-Length") : -1;
	if (head <= 0 || body < 0) {
		ret = answer_502(c);
		goto out;
	}
	/* The answer head goes up before the rest of the body is read. */
	if (client_write(c, r->buf, head))
		goto out;
	reader_consume(r, head);
	while (body > 0) {
		size_t part;

		if (!r->len) {
			ssize_t n = read_fd(&p.fd, r->buf,
					    body < (long)sizeof(r->buf) ? (size_t)body
									: sizeof(r->buf));

			if (n <= 0)
				goto out;
			r->len = n;
		}
		part = (long)r->len < body ? r->len : (size_t)body;
		if (client_write(c, r->buf, part))
			goto out;
		reader_consume(r, part);
		body -= part;
	}
	if (r->len) /* more than it announced: out of step */
		goto out;
	pool_put(&p);
	p.fd = -1;
	ret = 0;
out:
	if (p.fd >= 0)
		pool_discard(&p);
	free(r);
	return ret;
}

static void serve(int fd)
{
	static unsigned long seq;
	struct reader *r = calloc(1, sizeof(*r));
	struct client c;

	if (!r || client_open(&c, fd, cfg.tls)) {
		free(r);
		close(fd);
		return;
	}
	for (;;) {
		ssize_t head = head_read(r, read_client, &c);
		char target[256];

		if (head <= 0 || sscanf(r->buf, "GET %255s HTTP/1.", target) != 1)
			break;
		reader_consume(r, head);
		if (relay(&c, target, __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED)))
			break;
	}
	client_close(&c);
	free(r);
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;)
		serve(queue_pop());
	return NULL;
}

static int write_ready(const char *path, int port)
{
	char tmp[PATH_MAX];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", port);
	if (fclose(f))
		return -1;
	return rename(tmp, path);
}

static void write_stats(const char *path)
{
	struct pool_stats s;
	FILE *f;

	pool_stats(&s);
	f = path ? fopen(path, "w") : NULL;
	if (!f)
		return;
	fprintf(f,
		"{\"opened\":%lu,\"reused\":%lu,\"reused_other\":%lu,\"probed_alive\":%lu,"
		"\"probed_closed\":%lu,\"discarded\":%lu,\"after_break\":%lu,\"head_iovecs\":%d,"
		"\"break_iovecs\":%d}\n",
		s.opened, s.reused, s.reused_other, s.probed_alive, s.probed_closed, s.discarded,
		s.after_break, cfg.head_iovecs, cfg.break_iovecs);
	fclose(f);
}

static void usage(const char *me)
{
	fprintf(stderr,
		"usage: %s --backend PORT --ready FILE [--port PORT] [--threads N]\n"
		"       [--tls CERT KEY] [--break-once ID] [--stats FILE]\n",
		me);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "backend", required_argument, NULL, 'b' },
		{ "threads", required_argument, NULL, 't' },
		{ "ready", required_argument, NULL, 'r' },
		{ "tls", required_argument, NULL, 'T' },
		{ "break-once", required_argument, NULL, 'B' },
		{ "stats", required_argument, NULL, 's' },
		{ 0 },
	};
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct sigaction term = { .sa_handler = on_term };
	const char *ready = NULL, *stats = NULL, *cert = NULL, *key = NULL;
	int opt, threads = 8, lfd, i, one = 1;
	socklen_t len = sizeof(sa);
	sigset_t block;

	while ((opt = getopt_long(argc, argv, "p:b:t:r:s:", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			sa.sin_port = htons(atoi(optarg));
			break;
		case 'b':
			cfg.backend = atoi(optarg);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		case 'r':
			ready = optarg;
			break;
		case 's':
			stats = optarg;
			break;
		case 'T': /* --tls CERT KEY */
			if (optind >= argc)
				usage(argv[0]);
			cert = optarg;
			key = argv[optind++];
			break;
		case 'B':
			snprintf(cfg.break_target, sizeof(cfg.break_target), "/r/%d", atoi(optarg));
			break;
		default:
			usage(argv[0]);
		}
	}
	if (!cfg.backend || !ready || threads < 1)
		usage(argv[0]);
	cfg.tls = cert != NULL;
	if (cfg.tls && tls_init(cert, key))
		return 1;
	pool_init(cfg.backend);
	signal(SIGPIPE, SIG_IGN);

	/* Workers never see SIGTERM: it interrupts the accept loop. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	for (i = 0; i < threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, NULL)) {
			perror("pthread_create");
			return 1;
		}
		pthread_detach(t);
	}
	sigaction(SIGTERM, &term, NULL);
	sigaction(SIGINT, &term, NULL);
	pthread_sigmask(SIG_UNBLOCK, &block, NULL);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 256) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) ||
	    write_ready(ready, ntohs(sa.sin_port))) {
		perror("pool_proxy: listen");
		return 1;
	}
	while (!exiting) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd >= 0)
			queue_push(fd);
		else if (errno != EINTR && errno != ECONNABORTED)
			perror("pool_proxy: accept");
	}
	write_stats(stats);
	return 0;
}
