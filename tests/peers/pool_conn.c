// SPDX-License-Identifier: GPL-2.0
/*
 * pool_proxy's pool of keep-alive connections to its backend, shared by
 * every worker thread under one mutex: a connection one thread opened
 * carries the later calls of others. Before reuse a connection is probed
 * with a non-blocking read, as real pools do: EAGAIN means it is alive, 0
 * that the backend closed it (then it is dropped and the next one tried).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pool_proxy.h"

#define POOL_MAX 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pooled idle[POOL_MAX];
static int n_idle;
static int port;
static struct pool_stats stats;

void pool_init(int backend_port)
{
	port = backend_port;
}

static void count(unsigned long *what)
{
	pthread_mutex_lock(&lock);
	(*what)++;
	pthread_mutex_unlock(&lock);
}

static int backend_connect(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Alive: nothing to read, and no end of stream. */
static bool probe(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		count(&stats.probed_alive);
		return true;
	}
	count(n == 0 ? &stats.probed_closed : &stats.discarded);
	return false;
}

int pool_take(struct pooled *p)
{
	pid_t self = gettid();

	for (;;) {
		bool got = false;

		pthread_mutex_lock(&lock);
		if (n_idle) {
			*p = idle[--n_idle];
			got = true;
		}
		pthread_mutex_unlock(&lock);
		if (!got)
			break;
		if (probe(p->fd)) {
			pthread_mutex_lock(&lock);
			stats.reused++;
			stats.reused_other += p->opener != self;
			stats.after_break += p->broken;
			pthread_mutex_unlock(&lock);
			return 0;
		}
		close(p->fd);
	}
	p->fd = backend_connect();
	p->opener = self;
	p->broken = false;
	if (p->fd < 0)
		return -1;
	count(&stats.opened);
	return 0;
}

void pool_put(const struct pooled *p)
{
	bool kept = false;

	pthread_mutex_lock(&lock);
	if (n_idle < POOL_MAX) {
		idle[n_idle++] = *p;
		kept = true;
	}
	pthread_mutex_unlock(&lock);
	if (!kept)
		close(p->fd);
}

void pool_discard(struct pooled *p)
{
	count(&stats.discarded);
	close(p->fd);
	p->fd = -1;
}

void pool_stats(struct pool_stats *out)
{
	pthread_mutex_lock(&lock);
	*out = stats;
	pthread_mutex_unlock(&lock);
}
