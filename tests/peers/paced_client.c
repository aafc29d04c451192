// SPDX-License-Identifier: GPL-2.0
/*
 * A fixed-rate HTTP/1.1 client for the benchmark: C keep-alive connections,
 * one thread each, sending GET /r/<n> on a schedule that adds up to RATE
 * requests per second for SECONDS. Latency is counted from the scheduled
 * send time, so a server that falls behind shows it (no coordinated
 * omission). Responses are framed with the project's parser. Prints one
 * JSON object: sent, ok, failed, achieved rate, p50 and p99 in microseconds.
 *
 *   paced_client -p PORT -r RATE -d SECONDS [-c CONNS]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_parse.h"

struct worker {
	pthread_t th;
	int id;
	double interval_ns;
	unsigned long long start_ns, end_ns;
	unsigned long *lat_us; /* one per request sent */
	unsigned long sent, ok, failed;
};

static int port, conns = 8;
static double rate = 1000, seconds = 5;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void sleep_until(unsigned long long t)
{
	struct timespec ts = { .tv_sec = t / 1000000000ull, .tv_nsec = t % 1000000000ull };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int dial(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

struct answer {
	int status;
	int done;
};

static void on_event(void *ctx, struct http_framer *f, __u32 ev)
{
	struct answer *a = ctx;

	if (ev & HTTP_EV_START)
		a->status = f->status;
	if (ev & HTTP_EV_END)
		a->done = 1;
}

/* One request and its whole answer on fd; the status, or -1. */
static int exchange(int fd, unsigned long n)
{
	struct http_framer f;
	struct answer a = { 0 };
	char buf[4096];
	int len = snprintf(buf, sizeof(buf), "GET /r/%lu HTTP/1.1\r\nHost: bench\r\n\r\n", n);

	if (write(fd, buf, len) != len)
		return -1;
	http_framer_init(&f, HTTP_KIND_RESPONSE, 0);
	while (!a.done) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r <= 0)
			return -1;
		http_feed(&f, (const __u8 *)buf, r, on_event, &a);
		if (f.state == HS_LOST)
			return -1;
	}
	return a.status;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	unsigned long long next =
		w->start_ns + (unsigned long long)(w->interval_ns * w->id / conns);
	int fd = dial();

	while (next < w->end_ns) {
		int status;

		sleep_until(next);
		if (fd < 0)
			fd = dial();
		status = fd < 0 ? -1 : exchange(fd, w->sent * conns + w->id);
		w->lat_us[w->sent++] = (now_ns() - next) / 1000;
		if (status >= 200 && status < 500) {
			w->ok++;
		} else {
			w->failed++;
			if (fd >= 0)
				close(fd);
			fd = -1;
		}
		next += (unsigned long long)w->interval_ns;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int cmp_ul(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned long total = 0, ok = 0, failed = 0, k = 0, cap;
	unsigned long long t0, t1;
	unsigned long *all;
	struct worker *w;
	int opt, i;

	while ((opt = getopt(argc, argv, "p:r:d:c:")) != -1) {
		if (opt == 'p')
			port = atoi(optarg);
		else if (opt == 'r')
			rate = atof(optarg);
		else if (opt == 'd')
			seconds = atof(optarg);
		else if (opt == 'c')
			conns = atoi(optarg);
	}
	if (!port || rate <= 0 || seconds <= 0 || conns <= 0) {
		fprintf(stderr, "usage: %s -p PORT -r RATE -d SECONDS [-c CONNS]\n", argv[0]);
		return 2;
	}
	cap = rate * seconds / conns + 16;
	w = calloc(conns, sizeof(*w));
	t0 = now_ns() + 100000000ull;
	for (i = 0; i < conns; i++) {
		w[i].id = i;
		w[i].interval_ns = 1e9 * conns / rate;
		w[i].start_ns = t0;
		w[i].end_ns = t0 + (unsigned long long)(seconds * 1e9);
		w[i].lat_us = calloc(cap, sizeof(unsigned long));
		pthread_create(&w[i].th, NULL, run, &w[i]);
	}
	for (i = 0; i < conns; i++) {
		pthread_join(w[i].th, NULL);
		total += w[i].sent;
	}
	t1 = now_ns();
	all = calloc(total ? total : 1, sizeof(*all));
	for (i = 0; i < conns; i++) {
		memcpy(all + k, w[i].lat_us, w[i].sent * sizeof(*all));
		k += w[i].sent;
		ok += w[i].ok;
		failed += w[i].failed;
		free(w[i].lat_us);
	}
	qsort(all, total, sizeof(*all), cmp_ul);
	printf("{\"rate\":%.0f,\"seconds\":%.1f,\"sent\":%lu,\"ok\":%lu,\"failed\":%lu,"
	       "\"achieved_rps\":%.1f,\"p50_us\":%lu,\"p99_us\":%lu}\n",
	       rate, seconds, total, ok, failed, ok / ((t1 - t0) / 1e9), total ? all[total / 2] : 0,
	       total ? all[total * 99 / 100] : 0);
	free(all);
	free(w);
	return 0;
}
