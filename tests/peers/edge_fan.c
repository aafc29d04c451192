// SPDX-License-Identifier: GPL-2.0
/*
 * Many distinct edges, quickly, for the benchmark's idle-CPU figures. An edge
 * is a (caller service, callee) pair, and claimd names a service that sets
 * no CLAIMD_SERVICE "<command>:<port>", port by port: so C caller ports
 * times B backend ports make C x B edges from two processes.
 *
 *   edge_fan backend -n B -r FILE
 *	one thread, epoll: listens on B ports of 127.0.0.1 (the kernel's
 *	choice), answers every request 200 with "Connection: close" and closes.
 *	Writes the ports to FILE, one a line, once all listen. Named
 *	fan_backend, so its callees are "fan_backend:<port>".
 *
 *   edge_fan callers -n C -b BACKENDS_FILE -r FILE
 *	listens on C ports, thread per connection, keep-alive; a request
 *	GET /fan/<first>/<count> calls backends first .. first+count-1 (the
 *	lines of BACKENDS_FILE), one after another, each on a connection of
 *	its own, then answers 200 (502 when a call failed). Named fan_caller:
 *	its instances are "fan_caller:<port>".
 *
 *   edge_fan drive -c CALLERS_FILE -f FIRST -t END -n B [-k K] [-j J] [-w S]
 *	for each caller port in lines FIRST .. END-1 of CALLERS_FILE, one
 *	keep-alive connection asking for backends 0 .. B-1, K per request
 *	(default 10; claimd logs at most 16 calls per request), J connections
 *	at once (default 4), giving up on an answer after S seconds (default
 *	10). Prints one JSON object: requests, ok, failed, calls, seconds.
 *	Exits 1 when a request failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PORTS 4096
#define HEAD_MAX  4096

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_timeouts(int fd, double seconds)
{
	struct timeval tv = { .tv_sec = (time_t)seconds,
			      .tv_usec = (suseconds_t)((seconds - (time_t)seconds) * 1e6) };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* A listening socket on 127.0.0.1, port chosen by the kernel; its port in *port. */
static int listen_any(int *port, int flags)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1024) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		perror("edge_fan: listen");
		exit(1);
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

static int dial(int port, double timeout)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	set_timeouts(fd, timeout);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Writes the ports, one a line, to path (through a temporary: readers see all or nothing). */
static void write_ports(const char *path, const int *ports, int n)
{
	char tmp[4096];
	FILE *f;
	int i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		perror(tmp);
		exit(1);
	}
	for (i = 0; i < n; i++)
		fprintf(f, "%d\n", ports[i]);
	if (fclose(f) || rename(tmp, path)) {
		perror(path);
		exit(1);
	}
}

static int read_ports(const char *path, int *ports, int max)
{
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f) {
		perror(path);
		exit(1);
	}
	while (n < max && fscanf(f, "%d", &ports[n]) == 1)
		n++;
	fclose(f);
	return n;
}

/* Reads one answer head and its Content-Length body; the status, or -1. */
static int read_answer(int fd, char *buf, size_t cap)
{
	size_t have = 0, need;
	char *end, *cl;
	int status;

	for (;;) {
		ssize_t r;

		buf[have] = 0;
		end = strstr(buf, "\r\n\r\n");
		if (end)
			break;
		if (have == cap - 1)
			return -1;
		r = read(fd, buf + have, cap - 1 - have);
		if (r <= 0)
			return -1;
		have += r;
	}
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	cl = strcasestr(buf, "\r\ncontent-length:");
	need = (size_t)(end + 4 - buf) + (cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0);
	if (need >= cap)
		return -1;
	while (have < need) {
		ssize_t r = read(fd, buf + have, need - have);

		if (r <= 0)
			return -1;
		have += r;
	}
	return status;
}

/* backend */

struct bconn {
	int fd;
	int listener; /* 1: a listening socket */
	size_t have;
	char buf[1024];
};

static const char backend_answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
				     "Connection: close\r\n\r\n";

static void bconn_close(int ep, struct bconn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c);
}

static int run_backend(int n, const char *ready)
{
	static int ports[MAX_PORTS];
	int ep = epoll_create1(EPOLL_CLOEXEC), i;

	for (i = 0; i < n; i++) {
		struct bconn *l = calloc(1, sizeof(*l));
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = l };

		l->fd = listen_any(&ports[i], SOCK_NONBLOCK);
		l->listener = 1;
		epoll_ctl(ep, EPOLL_CTL_ADD, l->fd, &ev);
	}
	write_ports(ready, ports, n);
	for (;;) {
		struct epoll_event evs[64];
		int k = epoll_wait(ep, evs, 64, -1), j;

		for (j = 0; j < k; j++) {
			struct bconn *c = evs[j].data.ptr;
			ssize_t r;

			if (c->listener) {
				int fd;

				while ((fd = accept4(c->fd, NULL, NULL,
						     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					struct bconn *d = calloc(1, sizeof(*d));
					struct epoll_event ev = { .events = EPOLLIN,
								  .data.ptr = d };

					d->fd = fd;
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
				}
				continue;
			}
			r = read(c->fd, c->buf + c->have, sizeof(c->buf) - 1 - c->have);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r <= 0) {
				bconn_close(ep, c);
				continue;
			}
			c->have += r;
			c->buf[c->have] = 0;
			if (strstr(c->buf, "\r\n\r\n")) {
				if (write(c->fd, backend_answer, sizeof(backend_answer) - 1) < 0)
					perror("edge_fan: backend write");
				bconn_close(ep, c);
			} else if (c->have == sizeof(c->buf) - 1) {
				bconn_close(ep, c);
			}
		}
	}
	return 0;
}

/* callers */

static int backend_ports[MAX_PORTS], n_backends;

/* One call to a backend, on a connection of its own: 0 when it answered 2xx. */
static int call_backend(int port)
{
	static const char req[] = "GET /b HTTP/1.1\r\nHost: fan\r\nConnection: close\r\n\r\n";
	char buf[HEAD_MAX];
	int fd = dial(port, 5), status;

	if (fd < 0)
		return -1;
	if (write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1) {
		close(fd);
		return -1;
	}
	status = read_answer(fd, buf, sizeof(buf));
	close(fd);
	return status >= 200 && status < 300 ? 0 : -1;
}

static void *serve_caller(void *arg)
{
	int fd = (int)(intptr_t)arg, one = 1;
	char buf[HEAD_MAX];
	size_t have = 0;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (;;) {
		char *end, body[32], out[256];
		int first = 0, count = 0, ok = 0, i, blen, len;
		ssize_t r;

		buf[have] = 0;
		end = strstr(buf, "\r\n\r\n");
		if (!end) {
			if (have == sizeof(buf) - 1)
				break;
			r = read(fd, buf + have, sizeof(buf) - 1 - have);
			if (r <= 0)
				break;
			have += r;
			continue;
		}
		if (sscanf(buf, "GET /fan/%d/%d ", &first, &count) != 2 || first < 0 || count < 0)
			first = count = 0;
		if (first > n_backends)
			first = n_backends;
		if (count > n_backends - first)
			count = n_backends - first;
		for (i = 0; i < count; i++)
			ok += !call_backend(backend_ports[first + i]);
		blen = snprintf(body, sizeof(body), "%d/%d\n", ok, count);
		len = snprintf(out, sizeof(out), "HTTP/1.1 %s\r\nContent-Length: %d\r\n\r\n%s",
			       ok == count ? "200 OK" : "502 Bad Gateway", blen, body);
		if (write(fd, out, len) != len)
			break;
		have -= end + 4 - buf;
		memmove(buf, end + 4, have);
	}
	close(fd);
	return NULL;
}

static int run_callers(int n, const char *backends, const char *ready)
{
	static int ports[MAX_PORTS];
	int ep = epoll_create1(EPOLL_CLOEXEC), i;
	pthread_attr_t attr;

	n_backends = read_ports(backends, backend_ports, MAX_PORTS);
	if (!n_backends) {
		fprintf(stderr, "edge_fan: no backend ports in %s\n", backends);
		return 1;
	}
	for (i = 0; i < n; i++) {
		int fd = listen_any(&ports[i], SOCK_NONBLOCK);
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
	write_ports(ready, ports, n);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	for (;;) {
		struct epoll_event evs[64];
		int k = epoll_wait(ep, evs, 64, -1), j;

		for (j = 0; j < k; j++) {
			int fd = accept4(evs[j].data.fd, NULL, NULL, SOCK_CLOEXEC);
			pthread_t th;

			if (fd >= 0 &&
			    pthread_create(&th, &attr, serve_caller, (void *)(intptr_t)fd))
				close(fd);
		}
	}
	return 0;
}

/* drive */

static struct {
	int ports[MAX_PORTS];
	int first, end, backends, per_request;
	double timeout;
	int next; /* next caller line to drive */
	unsigned long requests, ok, failed, calls;
	pthread_mutex_t lock;
} drv = { .per_request = 10, .timeout = 10, .lock = PTHREAD_MUTEX_INITIALIZER };

/* Drives one caller: every backend, per_request at a time, on one connection. */
static void drive_one(int port)
{
	unsigned long requests = 0, ok = 0, calls = 0;
	int fd = dial(port, drv.timeout), b;

	for (b = 0; b < drv.backends; b += drv.per_request) {
		int count = drv.backends - b < drv.per_request ? drv.backends - b : drv.per_request;
		char req[128], buf[HEAD_MAX];
		int len = snprintf(req, sizeof(req), "GET /fan/%d/%d HTTP/1.1\r\nHost: fan\r\n\r\n",
				   b, count);

		requests++;
		if (fd < 0)
			fd = dial(port, drv.timeout);
		if (fd < 0 || write(fd, req, len) != len ||
		    read_answer(fd, buf, sizeof(buf)) != 200) {
			if (fd >= 0)
				close(fd); /* the answer may still come: never read it as the next */
			fd = -1;
			continue;
		}
		ok++;
		calls += count;
	}
	if (fd >= 0)
		close(fd);
	pthread_mutex_lock(&drv.lock);
	drv.requests += requests;
	drv.ok += ok;
	drv.failed += requests - ok;
	drv.calls += calls;
	pthread_mutex_unlock(&drv.lock);
}

static void *drive_worker(void *arg)
{
	(void)arg;
	for (;;) {
		int i = __atomic_fetch_add(&drv.next, 1, __ATOMIC_RELAXED);

		if (i >= drv.end)
			return NULL;
		drive_one(drv.ports[i]);
	}
}

static int run_drive(const char *callers, int conns)
{
	int n = read_ports(callers, drv.ports, MAX_PORTS), i;
	pthread_t th[64];
	double t0 = now_s();

	if (drv.end > n || drv.first < 0 || drv.first > drv.end) {
		fprintf(stderr, "edge_fan: callers %d .. %d asked, %d in %s\n", drv.first,
			drv.end - 1, n, callers);
		return 2;
	}
	drv.next = drv.first;
	if (conns > 64)
		conns = 64;
	for (i = 0; i < conns; i++)
		pthread_create(&th[i], NULL, drive_worker, NULL);
	for (i = 0; i < conns; i++)
		pthread_join(th[i], NULL);
	printf("{\"requests\":%lu,\"ok\":%lu,\"failed\":%lu,\"calls\":%lu,\"seconds\":%.3f}\n",
	       drv.requests, drv.ok, drv.failed, drv.calls, now_s() - t0);
	return drv.failed ? 1 : 0;
}

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s backend -n B -r FILE\n"
		"       %s callers -n C -b BACKENDS_FILE -r FILE\n"
		"       %s drive -c CALLERS_FILE -f FIRST -t END -n B [-k K] [-j J] [-w S]\n",
		prog, prog, prog);
	return 2;
}

int main(int argc, char **argv)
{
	const char *ready = NULL, *backends = NULL, *callers = NULL, *mode;
	int n = 0, conns = 4, opt;

	if (argc < 2)
		return usage(argv[0]);
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "n:r:b:c:f:t:k:j:w:")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'r':
			ready = optarg;
			break;
		case 'b':
			backends = optarg;
			break;
		case 'c':
			callers = optarg;
			break;
		case 'f':
			drv.first = atoi(optarg);
			break;
		case 't':
			drv.end = atoi(optarg);
			break;
		case 'k':
			drv.per_request = atoi(optarg);
			break;
		case 'j':
			conns = atoi(optarg);
			break;
		case 'w':
			drv.timeout = atof(optarg);
			break;
		default:
			return usage(argv[0]);
		}
	}
	if (optind != argc || n <= 0 || n > MAX_PORTS)
		return usage(argv[0]);
	signal(SIGPIPE, SIG_IGN);
	/* The name claimd gives each port: "<command>:<port>" (no CLAIMD_SERVICE). */
	if (!strcmp(mode, "backend") && ready) {
		prctl(PR_SET_NAME, "fan_backend");
		return run_backend(n, ready);
	}
	if (!strcmp(mode, "callers") && ready && backends) {
		prctl(PR_SET_NAME, "fan_caller");
		return run_callers(n, backends, ready);
	}
	if (!strcmp(mode, "drive") && callers && drv.per_request > 0 && conns > 0 &&
	    drv.timeout > 0) {
		prctl(PR_SET_NAME, "fan_driver");
		drv.backends = n;
		return run_drive(callers, conns);
	}
	return usage(argv[0]);
}
