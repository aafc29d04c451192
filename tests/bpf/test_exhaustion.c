// SPDX-License-Identifier: GPL-2.0
/*
 * Exhaustion: claimd with tiny maps (--conns 64, --threads 64, --classes 16)
 * and, separately, a tiny ring buffer (--ringbuf-size 4096), following only
 * servers forked from this test (--pid). Under pressure the oldest state goes
 * first (LRU connection and thread tables) or what does not fit is refused
 * (edge classes); either way it is counted and exported in 'claimctl status'
 * ("maps", "kernel") and /metrics, and once the pressure is gone every
 * request is recorded exactly again:
 * - connections: 200 held open through a 64-entry table; the oldest are
 *   each enters the table at its first bytes, the least recently used
 *   leaves for it (as the kernel's LRU approximates it), counted;
 * - a request whose connection is evicted before its answer: abandoned and
 *   counted, and its thread not taken for a multiplexing one;
 * - threads: 100 requests served at once by 100 threads; contexts evicted,
 *   their requests recorded without egress log and counted;
 * - edge classes: 24 fail-close edges into 16 slots; 8 refused (their
 *   verdicts fall back to rule 4), then written once a caller exits;
 * - ring buffer: a flood of requests; every request is a record read or a
 *   drop counted, and records flow again when the flood stops;
 * - ring buffer, an exit's record lost: claimd held while processes
 *   listening and exiting fill the ring, a service killed then: claimd,
 *   seeing records dropped, finds it gone and forgets it as its record
 *   would have had it (records.lost_exits), its counters with it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "sockets.h"
#include "test_progs.h"
#include "truth.h"

#define HELD	    200 /* connections held open against --conns 64 */
#define AT_ONCE	    100 /* requests served at once against --threads 64 */
#define N_CALLEES   24	/* fail-close edges against --classes 16 */
#define P1_CALLEES  16
#define MID_CONNS   500 /* opened while a request waits for its answer */
#define MID_PARKED  32	/* kept open first, holding the slots of the fds after them */
#define FLOOD_CONNS 4
#define FLOOD_REQS  2000 /* per connection */
#define FILL_PROCS  200	 /* processes whose listeners and exits fill the ring */

static const char ok_resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/* ---- servers, each a process forked from this test ---- */

/* Keep-alive, one thread, poll(): answers every complete request head. */
static void loop_server(int lfd)
{
	static char bufs[1024][512];
	static size_t lens[1024];
	struct pollfd p[1024];
	int n = 1, i;

	signal(SIGPIPE, SIG_IGN);
	p[0].fd = lfd;
	p[0].events = POLLIN;
	for (;;) {
		if (poll(p, n, -1) <= 0)
			continue;
		if ((p[0].revents & POLLIN) && n < 1024) {
			int fd = accept(lfd, NULL, NULL);

			if (fd >= 0) {
				p[n].fd = fd;
				p[n].events = POLLIN;
				p[n].revents = 0;
				lens[n++] = 0;
			}
		}
		for (i = 1; i < n; i++) {
			char *end;
			ssize_t r;

			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(p[i].fd, bufs[i] + lens[i], sizeof(bufs[i]) - 1 - lens[i]);
			if (r <= 0) {
				close(p[i].fd);
				p[i] = p[n - 1];
				lens[i] = lens[n - 1];
				memcpy(bufs[i], bufs[n - 1], lens[i]);
				n--;
				i--;
				continue;
			}
			lens[i] += r;
			bufs[i][lens[i]] = 0;
			while ((end = strstr(bufs[i], "\r\n\r\n"))) {
				size_t used = end + 4 - bufs[i];

				write_all_fd(p[i].fd, ok_resp, sizeof(ok_resp) - 1);
				memmove(bufs[i], bufs[i] + used, lens[i] - used + 1);
				lens[i] -= used;
			}
		}
	}
}

/* A thread per connection; the first AT_ONCE all read their request before
 * any of them answers. */
struct ts {
	int fd;
	bool wait;
};

static pthread_barrier_t at_once;

static void *ts_conn(void *arg)
{
	struct ts *t = arg;
	char buf[512];

	sock_recv_until(t->fd, buf, sizeof(buf), "\r\n\r\n", sizeof(buf));
	if (t->wait)
		pthread_barrier_wait(&at_once);
	write_all_fd(t->fd, ok_resp, sizeof(ok_resp) - 1);
	close(t->fd);
	free(t);
	return NULL;
}

static void thread_server(int lfd)
{
	int n = 0;

	signal(SIGPIPE, SIG_IGN);
	pthread_barrier_init(&at_once, NULL, AT_ONCE);
	for (;;) {
		struct ts *t = malloc(sizeof(*t));
		pthread_t th;

		if (!t)
			continue;
		t->fd = accept(lfd, NULL, NULL);
		t->wait = n++ < AT_ONCE;
		if (t->fd < 0 || pthread_create(&th, NULL, ts_conn, t)) {
			free(t);
			continue;
		}
		pthread_detach(th);
	}
}

/*
 * One worker thread serves connections in the order they were accepted (by
 * the main thread, which peeks at each first, as a router would). After
 * reading a request for "/slow" it waits a second before answering:
 * meanwhile new connections, in use, push that one out of claimd's table.
 * "/fail" is answered 500. "/park" is answered and its connection kept
 * open, never closed: parked connections hold the slots their fds point
 * at (a connection's entry in its slot never leaves for another), so that
 * the next ones' entries are in the table.
 */
static int hold_pipe[2];

static void *hold_worker(void *arg)
{
	int fd;

	(void)arg;
	while (read(hold_pipe[0], &fd, sizeof(fd)) == sizeof(fd)) {
		static const char fail[] = "HTTP/1.1 500 Internal Server Error\r\n"
					   "Content-Length: 0\r\nConnection: close\r\n\r\n";
		char buf[512];

		sock_recv_until(fd, buf, sizeof(buf), "\r\n\r\n", sizeof(buf));
		if (strstr(buf, "GET /slow "))
			sleep_ms(1000);
		if (strstr(buf, "GET /fail "))
			write_all_fd(fd, fail, sizeof(fail) - 1);
		else
			write_all_fd(fd, ok_resp, sizeof(ok_resp) - 1);
		if (!strstr(buf, "GET /park "))
			close(fd);
	}
	return NULL;
}

static void hold_server(int lfd)
{
	pthread_t th;

	signal(SIGPIPE, SIG_IGN);
	if (pipe(hold_pipe) || pthread_create(&th, NULL, hold_worker, NULL))
		_exit(1);
	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		char c;

		if (fd < 0)
			continue;
		/* A look at what came (a router would): the connection is in use. */
		recv(fd, &c, 1, MSG_PEEK);
		if (write(hold_pipe[1], &fd, sizeof(fd)) != sizeof(fd))
			close(fd);
	}
}

/* "GET /<port>": calls 127.0.0.1:<port> and answers 502 when that failed. */
static void caller_server(int lfd)
{
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		static const char bad[] = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n"
					  "Connection: close\r\n\r\n";
		static const char good[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
					   "Connection: close\r\n\r\n";
		char buf[512], resp[512];
		int fd = accept(lfd, NULL, NULL), dfd, status = 0;

		if (fd < 0)
			continue;
		sock_recv_until(fd, buf, sizeof(buf), "\r\n\r\n", sizeof(buf));
		dfd = sock_connect(atoi(buf + 5));
		if (dfd >= 0) {
			sock_send(dfd, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
			if (sock_recv_until(dfd, resp, sizeof(resp), "\r\n\r\n", sizeof(resp)) > 12)
				status = atoi(resp + 9);
			close(dfd);
		}
		if (status == 0 || status >= 500)
			write_all_fd(fd, bad, sizeof(bad) - 1);
		else
			write_all_fd(fd, good, sizeof(good) - 1);
		close(fd);
	}
}

/* Answers 503 on every one of its listeners. */
static void callee_server(const int *lfds, int n)
{
	static const char fail[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
				   "Connection: close\r\n\r\n";
	struct pollfd p[N_CALLEES];
	int i;

	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = lfds[i], .events = POLLIN };
	for (;;) {
		if (poll(p, n, -1) <= 0)
			continue;
		for (i = 0; i < n; i++) {
			char buf[512];
			int fd;

			if (!(p[i].revents & POLLIN))
				continue;
			fd = accept(p[i].fd, NULL, NULL);
			if (fd < 0)
				continue;
			sock_recv_until(fd, buf, sizeof(buf), "\r\n\r\n", sizeof(buf));
			write_all_fd(fd, fail, sizeof(fail) - 1);
			close(fd);
		}
	}
}

/* Forks a server on a new listening port; returns its pid, the port in *port. */
static pid_t fork_server(void (*fn)(int), int *port)
{
	int lfd = sock_listen(port);
	pid_t pid;

	if (lfd < 0)
		return -1;
	listen(lfd, 1024);
	pid = fork();
	if (pid == 0) {
		fn(lfd);
		_exit(0);
	}
	close(lfd);
	return pid;
}

/* ---- looking at claimd ---- */

/* claimd's status, its map counts fresh (they are at most half a second old). */
static struct json_object *status(const struct claimd_h *h)
{
	const char *args[] = { "status", NULL };

	sleep_ms(600);
	return claimctl_json(h, args);
}

static long long map_field(struct json_object *st, const char *map, const char *field)
{
	return j_int(j_get(j_get(st, "maps"), map), field);
}

static long long kernel(struct json_object *st, const char *counter)
{
	return j_int(j_get(st, "kernel"), counter);
}

/* The value of a sample of /metrics, or -1 when it is not there. */
static double metric(int port, const char *series)
{
	static char buf[1 << 20];
	static const char req[] = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n";
	int fd = sock_connect(port);
	size_t n = strlen(series);
	const char *p;

	buf[0] = 0;
	if (fd < 0)
		return -1;
	if (!sock_send(fd, req))
		sock_recv_until(fd, buf, sizeof(buf), NULL, 65536);
	close(fd);
	for (p = buf; (p = strstr(p, series)); p += n)
		if ((p == buf || p[-1] == '\n') && p[n] == ' ')
			return atof(p + n + 1);
	return -1;
}

/* Polls /metrics until the series shows want (it is refreshed every second). */
static double metric_wait(int port, const char *series, double want)
{
	long long end = now_ms() + 5000;
	double v;

	while ((v = metric(port, series)) != want && now_ms() < end)
		sleep_ms(200);
	return v;
}

/* Ingress lines of pid: at least n of them, waited for; caller puts. */
static struct json_object *ingresses(const struct trace_cap *t, pid_t pid, int n)
{
	struct json_object *all, *out = json_object_new_array();
	size_t i;

	trace_wait(t, trace_is_ingress_of, &pid, n, 10000);
	sleep_ms(200);
	all = trace_read(t);
	for (i = 0; i < json_object_array_length(all); i++)
		if (trace_is_ingress_of(json_object_array_get_idx(all, i), &pid))
			json_object_array_add(out,
					      json_object_get(json_object_array_get_idx(all, i)));
	json_object_put(all);
	return out;
}

static bool has_flag(struct json_object *rec, const char *flag)
{
	struct json_object *flags = j_get(rec, "flags");
	size_t i;

	for (i = 0; flags && i < json_object_array_length(flags); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(flags, i)), flag))
			return true;
	return false;
}

static int local_port(int fd)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	return getsockname(fd, (struct sockaddr *)&sa, &len) ? -1 : ntohs(sa.sin_port);
}

static int peer_port(struct json_object *rec)
{
	const char *colon = strrchr(j_str(rec, "peer"), ':');

	return colon ? atoi(colon + 1) : -1;
}

/* One request on a connection that stays open; the status. */
static int request(int fd)
{
	static const char req[] = "GET /x HTTP/1.1\r\nHost: x\r\n\r\n";
	char buf[512];

	if (sock_send(fd, req) || sock_recv_until(fd, buf, sizeof(buf), "ok", sizeof(buf)) <= 12)
		return -1;
	return atoi(buf + 9);
}

/* n requests, each on a connection of its own; how many were answered 200. */
static int fresh_requests(int port, int n)
{
	int i, ok = 0;

	for (i = 0; i < n; i++) {
		int fd = sock_connect(port);

		if (fd < 0)
			continue;
		ok += request(fd) == 200;
		close(fd);
	}
	return ok;
}

/* ---- the connection table ---- */

static void conns_full(const struct claimd_h *h, const struct trace_cap *t, pid_t pid, int port,
		       int mport)
{
	static int fds[HELD], cports[HELD];
	struct json_object *st = NULL, *recs = NULL;
	int i, ok = 0, recorded = 0, newest = 0, before, quarter[4] = { 0 };
	long long evicted, entries;
	size_t k;

	recs = ingresses(t, pid, 0);
	before = json_object_array_length(recs);
	json_object_put(recs);
	recs = NULL;
	for (i = 0; i < HELD; i++) {
		fds[i] = sock_connect(port);
		cports[i] = fds[i] >= 0 ? local_port(fds[i]) : -1;
		sleep_ms(1); /* accepted in this order */
	}
	sleep_ms(200);
	/* One request on each, oldest connection first. */
	for (i = 0; i < HELD; i++)
		ok += fds[i] >= 0 && request(fds[i]) == 200;
	ASSERT_EQ(ok, HELD, "the service answered every request");
	st = status(h);
	entries = map_field(st, "conns", "entries");
	evicted = map_field(st, "conns", "evicted");
	recs = ingresses(t, pid, 1);
	for (i = 0; i < HELD; i++) {
		for (k = before; k < json_object_array_length(recs); k++) {
			if (peer_port(json_object_array_get_idx(recs, k)) != cports[i])
				continue;
			recorded++;
			newest += i >= HELD - 64;
			quarter[i * 4 / HELD]++;
			break;
		}
	}
	printf("conns: %d held open, table %lld of %lld, %lld evicted; requests recorded on %d "
	       "(%d of them among the newest 64; by age, oldest quarter first: %d %d %d %d)\n",
	       HELD, entries, map_field(st, "conns", "max_entries"), evicted, recorded, newest,
	       quarter[0], quarter[1], quarter[2], quarter[3]);
	ASSERT_LE(entries, 64, "the table holds at most --conns");
	/*
	 * A connection enters the table at its first bytes, and the least
	 * recently used one leaves for it: 200 connections whose requests take
	 * turns are all followed through 64 entries, and each one evicted is
	 * counted (once: none of them moved bytes again).
	 */
	ASSERT_EQ(recorded, HELD, "every request recorded");
	ASSERT_GE(evicted, HELD - 64, "evictions counted");
	ASSERT_LE(evicted + entries, HELD, "one entry made per connection");
	ASSERT_EQ(kernel(st, "conn_table_full"), 0, "never refused: evicted");
	ASSERT_EQ(kernel(st, "multiplexed"), 0, "no request taken for multiplexed");
	if (mport > 0) {
		char series[64];

		snprintf(series, sizeof(series), "claimd_map_evictions_total{map=\"conns\"}");
		ASSERT_EQ((long long)metric_wait(mport, series, evicted), evicted,
			  "/metrics: claimd_map_evictions_total{map=\"conns\"}");
	}
	for (i = 0; i < HELD; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	json_object_put(recs);
	json_object_put(st);

	/* The pressure gone, every request is followed again. */
	sleep_ms(300);
	recs = ingresses(t, pid, 0);
	before = json_object_array_length(recs);
	json_object_put(recs);
	ASSERT_EQ(fresh_requests(port, 20), 20, "after: 20 answered");
	recs = ingresses(t, pid, before + 20);
	ASSERT_EQ((int)json_object_array_length(recs) - before, 20, "after: 20 recorded");
	json_object_put(recs);
}

/*
 * A request whose connection is evicted before its answer: the thread that
 * served it goes on to other connections. That request is abandoned (and
 * counted); the thread is not taken for one juggling two requests, which
 * would make every later verdict of its process "unknown (multiplexed)".
 */
struct mid_try {
	bool evicted; /* the slow request's connection left the table before its answer */
	int failed, mux;
	struct truth_tally verdicts; /* of the 500s recorded: the service's own */
	long long abandoned, multiplexed;
};

static void mid_try(const struct claimd_h *h, const struct trace_cap *t, pid_t pid, int port,
		    struct mid_try *r)
{
	static int fds[MID_CONNS];
	const struct truth_svc own = { .pid = pid, .verdict = "claimed", .cause = "" };
	struct json_object *st0 = status(h), *st = NULL, *all;
	int slow = sock_connect(port), i;
	size_t from, k;
	char buf[512];

	memset(r, 0, sizeof(*r));
	r->evicted = true;
	all = trace_read(t);
	from = json_object_array_length(all);
	json_object_put(all);
	if (!ASSERT_GE(slow, 0, "connect"))
		goto out;
	sock_send(slow, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
	sleep_ms(200); /* its request is read, and its answer waits */
	for (i = 0; i < MID_CONNS; i++) {
		fds[i] = sock_connect(port);
		if (fds[i] >= 0)
			sock_send(fds[i], "GET /fail HTTP/1.1\r\nHost: x\r\n\r\n");
	}
	ASSERT_GT(sock_recv_until(slow, buf, sizeof(buf), "ok", sizeof(buf)), 12, "slow answered");
	close(slow);
	for (i = 0; i < MID_CONNS; i++) {
		if (fds[i] < 0)
			continue;
		if (sock_recv_until(fds[i], buf, sizeof(buf), "\r\n\r\n", sizeof(buf)) > 12)
			r->failed += atoi(buf + 9) == 500;
		close(fds[i]);
	}
	sleep_ms(300);
	all = trace_read(t);
	for (k = from; k < json_object_array_length(all); k++) {
		struct json_object *o = json_object_array_get_idx(all, k);

		if (!trace_is_ingress_of(o, &pid))
			continue;
		if (j_int(o, "status") == 200)
			r->evicted = false; /* its answer was seen */
		if (j_int(o, "status") != 500)
			continue;
		r->mux += has_flag(o, "multiplexed") || !strcmp(j_str(o, "rule"), "multiplexed");
	}
	json_object_array_del_idx(all, 0, from);
	truth__tally_services(&r->verdicts, all, &own, 1);
	json_object_put(all);
	st = status(h);
	r->abandoned = kernel(st, "requests_abandoned") - kernel(st0, "requests_abandoned");
	r->multiplexed = kernel(st, "multiplexed") - kernel(st0, "multiplexed");
	printf("evicted mid-request (%s): %lld abandoned, %lld multiplexed; of the failures "
	       "recorded, %d claimed, %d taken for multiplexed\n",
	       r->evicted ? "it was evicted" : "it stayed in the table", r->abandoned,
	       r->multiplexed, r->verdicts.right, r->mux);
out:
	json_object_put(st0);
	json_object_put(st);
}

/*
 * A request whose connection is evicted before its answer: the thread that
 * served it goes on to other connections. That request is abandoned (and
 * counted); the thread is not taken for one juggling two requests, which
 * would make every later verdict of its process "unknown (multiplexed)".
 * The kernel's LRU decides what goes: tried until the slow one went.
 */
static void conns_evicted_mid_request(const struct claimd_h *h, const struct trace_cap *t,
				      pid_t pid, int port)
{
	static const char park[] = "GET /park HTTP/1.1\r\nHost: x\r\n\r\n";
	int parked[MID_PARKED];
	struct json_object *st;
	struct mid_try r;
	int i, evicted = 0, n = 0;
	long long taken;
	char buf[512];

	st = status(h);
	taken = kernel(st, "connection_slots_taken");
	json_object_put(st);

	/*
	 * Every slot the service's next fds point at held first (of --conns 64,
	 * 32 are slots, taken by fds in a row): the slow connection's entry is
	 * in the table, where the least recently used goes.
	 */
	for (i = 0; i < MID_PARKED; i++) {
		parked[i] = sock_connect(port);
		if (parked[i] >= 0 && !sock_send(parked[i], park) &&
		    sock_recv_until(parked[i], buf, sizeof(buf), "ok", sizeof(buf)) > 12)
			n++;
	}
	ASSERT_EQ(n, MID_PARKED, "parked connections answered");
	st = status(h);
	taken = kernel(st, "connection_slots_taken") - taken;
	printf("%d connections parked: %lld of them took a slot\n", n, taken);
	ASSERT_GT(taken, 0, "parked connections hold slots");
	json_object_put(st);
	for (i = 0; i < 4 && !evicted; i++) {
		mid_try(h, t, pid, port, &r);
		evicted += r.evicted;
		ASSERT_EQ(r.failed, MID_CONNS, "the service answered 500 to each");
		ASSERT_EQ(r.abandoned, r.evicted ? 1 : 0, "an evicted request: abandoned, counted");
		ASSERT_EQ(r.multiplexed, 0, "no multiplexing");
		ASSERT_EQ(r.mux, 0, "no verdict spoilt as multiplexed");
		truth__expect(&r.verdicts, "evicted mid-request", -1, -1);
		ASSERT_GT(r.verdicts.right, 0,
			  "the failures followed are claimed (the service's own)");
	}
	ASSERT_GT(evicted, 0, "the slow request's connection was evicted");
	for (i = 0; i < MID_PARKED; i++)
		if (parked[i] >= 0)
			close(parked[i]);
}

/* ---- the thread table ---- */

static void threads_full(const struct claimd_h *h, const struct trace_cap *t, pid_t pid, int port,
			 int mport)
{
	static int fds[AT_ONCE];
	struct json_object *st0 = status(h), *st = NULL, *recs;
	int i, ok = 0, bare = 0, mux = 0, before;
	long long lost, evicted;
	char buf[512];
	size_t k;

	recs = ingresses(t, pid, 0);
	before = json_object_array_length(recs);
	json_object_put(recs);
	for (i = 0; i < AT_ONCE; i++) {
		fds[i] = sock_connect(port);
		if (fds[i] >= 0)
			sock_send(fds[i], "GET /t HTTP/1.1\r\nHost: x\r\n\r\n");
	}
	for (i = 0; i < AT_ONCE; i++) {
		if (fds[i] < 0)
			continue;
		if (sock_recv_until(fds[i], buf, sizeof(buf), "ok", sizeof(buf)) > 12)
			ok += atoi(buf + 9) == 200;
		close(fds[i]);
	}
	ASSERT_EQ(ok, AT_ONCE, "100 requests served at once, all answered");
	recs = ingresses(t, pid, before + AT_ONCE);
	for (k = before; k < json_object_array_length(recs); k++) {
		bare += has_flag(json_object_array_get_idx(recs, k), "no-egress-log");
		mux += has_flag(json_object_array_get_idx(recs, k), "multiplexed");
	}
	st = status(h);
	lost = kernel(st, "requests_context_lost") - kernel(st0, "requests_context_lost");
	evicted = map_field(st, "threads", "evicted");
	printf("threads: %d at once, table %lld of %lld, %lld contexts evicted; %d recorded, %d "
	       "without egress log (counted: %lld)\n",
	       AT_ONCE, map_field(st, "threads", "entries"),
	       map_field(st, "threads", "max_entries"), evicted,
	       (int)json_object_array_length(recs) - before, bare, lost);
	ASSERT_EQ((int)json_object_array_length(recs) - before, AT_ONCE, "every request recorded");
	ASSERT_GE(bare, AT_ONCE - 64, "those whose context was evicted: without egress log");
	ASSERT_EQ(lost, bare, "and each counted (requests_context_lost)");
	ASSERT_GE(evicted, AT_ONCE - 64, "context evictions counted");
	ASSERT_EQ(mux, 0, "none taken for multiplexed");
	ASSERT_EQ(kernel(st, "multiplexed") - kernel(st0, "multiplexed"), 0, "no multiplexing");
	if (mport > 0)
		ASSERT_EQ((long long)metric_wait(mport, "claimd_kernel_requests_context_lost_total",
						 kernel(st, "requests_context_lost")),
			  kernel(st, "requests_context_lost"),
			  "/metrics: claimd_kernel_requests_context_lost_total");
	json_object_put(recs);
	json_object_put(st0);
	json_object_put(st);

	/* One at a time again: every request keeps its context. */
	recs = ingresses(t, pid, 0);
	before = json_object_array_length(recs);
	json_object_put(recs);
	ASSERT_EQ(fresh_requests(port, 10), 10, "after: 10 answered");
	recs = ingresses(t, pid, before + 10);
	bare = 0;
	for (k = before; k < json_object_array_length(recs); k++)
		bare += has_flag(json_object_array_get_idx(recs, k), "no-egress-log");
	ASSERT_EQ((int)json_object_array_length(recs) - before, 10, "after: 10 recorded");
	ASSERT_EQ(bare, 0, "after: all with their context");
	json_object_put(recs);
}

/* ---- the edge class table ---- */

struct verdicts {
	int in_kernel, refused; /* failed ingresses by rule: fail-close-edge, unknown-edge */
};

static void count_rules(const struct trace_cap *t, pid_t pid, size_t from, struct verdicts *v)
{
	struct json_object *all = trace_read(t);
	size_t i;

	memset(v, 0, sizeof(*v));
	for (i = from; i < json_object_array_length(all); i++) {
		struct json_object *o = json_object_array_get_idx(all, i);

		if (!trace_is_ingress_of(o, &pid))
			continue;
		v->in_kernel += !strcmp(j_str(o, "rule"), "fail-close-edge");
		v->refused += !strcmp(j_str(o, "rule"), "unknown-edge");
	}
	json_object_put(all);
}

/* Waits until the edge class map shows entries and refused. */
static struct json_object *classes_wait(const struct claimd_h *h, int entries, int refused)
{
	long long end = now_ms() + 8000;
	struct json_object *st;

	for (;;) {
		st = status(h);
		if ((map_field(st, "edge_class", "entries") == entries &&
		     map_field(st, "edge_class", "refused") == refused) ||
		    now_ms() >= end)
			return st;
		json_object_put(st);
		sleep_ms(250);
	}
}

static int call_via(int caller_port, int callee_port)
{
	char req[64], buf[512];
	int fd = sock_connect(caller_port), status = -1;

	if (fd < 0)
		return -1;
	snprintf(req, sizeof(req), "GET /%d HTTP/1.1\r\nHost: x\r\n\r\n", callee_port);
	if (!sock_send(fd, req) && sock_recv_until(fd, buf, sizeof(buf), "\r\n\r\n", 512) > 12)
		status = atoi(buf + 9);
	close(fd);
	return status;
}

static void classes_full(const struct claimd_h *h, const struct trace_cap *t, pid_t *p1,
			 int p1_port, pid_t p2, int p2_port, const int *callee_ports, int mport)
{
	struct json_object *st, *edges, *lines;
	const char *args[] = { "edges", NULL };
	/* Every failure is the callee's, passed up: unclaimed, whichever rule. */
	const struct truth_svc passed_up[2] = {
		{ .pid = *p1, .verdict = "unclaimed", .cause = NULL },
		{ .pid = p2, .verdict = "unclaimed", .cause = NULL },
	};
	struct truth_tally tally = { 0 };
	struct verdicts v;
	int i, failed = 0, in_kernel = 0, p2_in = 0;
	size_t from, k;
	char p2_name[32];

	/* Every call fails: 24 edges, each fail-close after one failure. */
	for (i = 0; i < N_CALLEES; i++)
		failed += call_via(i < P1_CALLEES ? p1_port : p2_port, callee_ports[i]) == 502;
	ASSERT_EQ(failed, N_CALLEES, "callers answer 502");
	st = classes_wait(h, 16, N_CALLEES - 16);
	printf("edge classes: %lld of %lld in the kernel, %lld refused (%lld refusals)\n",
	       map_field(st, "edge_class", "entries"), map_field(st, "edge_class", "max_entries"),
	       map_field(st, "edge_class", "refused"),
	       map_field(st, "edge_class", "refused_total"));
	ASSERT_EQ(map_field(st, "edge_class", "entries"), 16, "the map is full");
	ASSERT_EQ(map_field(st, "edge_class", "refused"), N_CALLEES - 16, "8 refused");
	ASSERT_EQ(map_field(st, "edge_class", "refused_total"), N_CALLEES - 16, "8 refusals");
	json_object_put(st);
	edges = claimctl_json(h, args);
	snprintf(p2_name, sizeof(p2_name), ":%d", p2_port);
	for (k = 0; edges && k < json_object_array_length(edges); k++) {
		struct json_object *e = json_object_array_get_idx(edges, k);

		if (!strcmp(j_str(e, "class"), "fail-close") && j_bool(e, "in_kernel"))
			in_kernel++;
	}
	json_object_put(edges);
	ASSERT_EQ(in_kernel, 16, "edges claimctl shows in the kernel");
	if (mport > 0) {
		ASSERT_EQ(metric_wait(mport, "claimd_map_refused{map=\"edge_class\"}", 8), 8,
			  "/metrics: claimd_map_refused{map=\"edge_class\"}");
		ASSERT_EQ(metric_wait(mport, "claimd_map_refusals_total{map=\"edge_class\"}", 8), 8,
			  "/metrics: claimd_map_refusals_total");
	}
	/* P2's calls again: an edge whose class is in the kernel decides by it
	 * (rule 2), a refused one falls back to rule 4 (unknown edge). */
	from = trace_mark(t);
	for (i = P1_CALLEES; i < N_CALLEES; i++)
		call_via(p2_port, callee_ports[i]);
	sleep_ms(500);
	count_rules(t, p2, from, &v);
	printf("P2 while full: %d by a class in the kernel, %d refused (unknown edge)\n",
	       v.in_kernel, v.refused);
	ASSERT_EQ(v.in_kernel + v.refused, N_CALLEES - P1_CALLEES, "P2's failures");
	p2_in = v.in_kernel;

	/* P1 exits: its edges leave the kernel, and P2's refused ones get in. */
	proc_stop(*p1, 1000);
	*p1 = 0;
	st = classes_wait(h, N_CALLEES - P1_CALLEES, 0);
	ASSERT_EQ(map_field(st, "edge_class", "refused"), 0, "after: none refused");
	ASSERT_EQ(map_field(st, "edge_class", "entries"), N_CALLEES - P1_CALLEES,
		  "after: P2's edges in the kernel");
	json_object_put(st);
	from = trace_mark(t);
	for (i = P1_CALLEES; i < N_CALLEES; i++)
		call_via(p2_port, callee_ports[i]);
	sleep_ms(500);
	count_rules(t, p2, from, &v);
	printf("P2 after: %d by a class in the kernel (was %d), %d unknown edge\n", v.in_kernel,
	       p2_in, v.refused);
	ASSERT_EQ(v.in_kernel, N_CALLEES - P1_CALLEES, "after: every verdict by its class");
	ASSERT_EQ(v.refused, 0, "after: no unknown edge");
	lines = trace_read(t);
	truth__tally_services(&tally, lines, passed_up, 2);
	json_object_put(lines);
	/* The 24 first calls, then P2's 8 twice. */
	truth__expect(&tally, "edge classes", N_CALLEES + 2 * (N_CALLEES - P1_CALLEES), 0);
}

/*
 * More edges than the kernel's counters hold (--edges 16): the calls it has
 * no room for come to claimd as records and are counted there, so every
 * edge's counts stay exact.
 */
static void edge_counts_full(const struct claimd_h *h, const struct trace_cap *t, pid_t p2,
			     int p2_port, const int *callee_ports)
{
	const char *args[] = { "edges", NULL };
	const struct truth_svc passed_up = { .pid = p2, .verdict = "unclaimed", .cause = NULL };
	struct truth_tally tally = { 0 };
	struct json_object *st0 = status(h), *st1, *edges, *lines;
	long long calls = 0, callee_failures = 0, both = 0, full;
	int i, failed = 0, n_edges = 0;
	size_t k;
	char p2_name[32];

	for (i = 0; i < N_CALLEES; i++)
		failed += call_via(p2_port, callee_ports[i]) == 502;
	ASSERT_EQ(failed, N_CALLEES, "P2 answers 502");
	st1 = status(h);
	full = kernel(st1, "counts_full") - kernel(st0, "counts_full");
	edges = claimctl_json(h, args);
	snprintf(p2_name, sizeof(p2_name), ":%d", p2_port);
	for (k = 0; edges && k < json_object_array_length(edges); k++) {
		struct json_object *e = json_object_array_get_idx(edges, k);

		if (!strstr(j_str(e, "caller"), p2_name))
			continue;
		n_edges++;
		calls += j_int(e, "calls");
		callee_failures += j_int(e, "callee_failures");
		both += j_int(e, "both_failed");
	}
	json_object_put(edges);
	printf("edge counters: %d edges, %lld calls refused by the kernel's map, counted by "
	       "claimd\n",
	       n_edges, full);
	ASSERT_EQ(full, N_CALLEES - 16, "the kernel's map refused 8");
	ASSERT_EQ(n_edges, N_CALLEES, "every edge");
	ASSERT_EQ(calls, N_CALLEES, "calls, exact");
	ASSERT_EQ(callee_failures, N_CALLEES, "callee failures, exact");
	ASSERT_EQ(both, N_CALLEES, "both failed, exact");
	lines = trace_read(t);
	truth__tally_services(&tally, lines, &passed_up, 1);
	json_object_put(lines);
	truth__expect(&tally, "edge counts", N_CALLEES, 0);
	json_object_put(st0);
	json_object_put(st1);
}

/* ---- the ring buffer ---- */

struct flood {
	int port, ok;
	pthread_t th;
};

static void *flood_main(void *arg)
{
	struct flood *f = arg;
	int fd = sock_connect(f->port), i;

	for (i = 0; fd >= 0 && i < FLOOD_REQS; i++)
		f->ok += request(fd) == 200;
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Requests the followed services counted, all of them (claimctl services). */
static long long services_requests(const struct claimd_h *h)
{
	const char *args[] = { "services", NULL };
	struct json_object *arr = claimctl_json(h, args);
	long long n = 0;
	size_t i;

	for (i = 0; arr && i < json_object_array_length(arr); i++)
		n += j_int(json_object_array_get_idx(arr, i), "requests");
	json_object_put(arr);
	return n;
}

static void ringbuf_full(const struct claimd_h *h, const struct trace_cap *t, pid_t pid, int port,
			 int mport)
{
	long long counted0 = services_requests(h);
	struct flood f[FLOOD_CONNS];
	struct json_object *st0 = status(h), *st1 = NULL, *st2 = NULL, *recs;
	long long drops, read, submitted;
	int i, ok = 0, before;

	for (i = 0; i < FLOOD_CONNS; i++) {
		f[i] = (struct flood){ .port = port };
		pthread_create(&f[i].th, NULL, flood_main, &f[i]);
	}
	for (i = 0; i < FLOOD_CONNS; i++) {
		pthread_join(f[i].th, NULL);
		ok += f[i].ok;
	}
	ASSERT_EQ(ok, FLOOD_CONNS * FLOOD_REQS, "the service answered the flood");
	sleep_ms(500);
	st1 = status(h);
	drops = kernel(st1, "ringbuf_drops") - kernel(st0, "ringbuf_drops");
	submitted = kernel(st1, "records") - kernel(st0, "records");
	read = j_int(j_get(st1, "records"), "ingress") - j_int(j_get(st0, "records"), "ingress");
	printf("ring buffer of %s bytes: %d requests, %lld records read, %lld dropped (counted)\n",
	       "4096", ok, read, drops);
	ASSERT_GT(drops, 0, "drops under the flood");
	ASSERT_EQ(read + drops, (long long)ok, "every request: a record read or a drop counted");
	ASSERT_EQ(read, submitted, "claimd read every record submitted");
	/* Records are for tracing: the counts are kept in the kernel, and lose nothing. */
	ASSERT_EQ(services_requests(h) - counted0, (long long)ok,
		  "every request counted, drops or not");
	if (mport > 0)
		ASSERT_EQ((long long)metric_wait(mport, "claimd_kernel_ringbuf_drops_total",
						 kernel(st1, "ringbuf_drops")),
			  kernel(st1, "ringbuf_drops"),
			  "/metrics: claimd_kernel_ringbuf_drops_total");

	/* The flood over: records flow again, none lost. */
	recs = ingresses(t, pid, 0);
	before = json_object_array_length(recs);
	json_object_put(recs);
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(fresh_requests(port, 1), 1, "after: answered");
		sleep_ms(30);
	}
	recs = ingresses(t, pid, before + 20);
	ASSERT_EQ((int)json_object_array_length(recs) - before, 20, "after: 20 recorded");
	json_object_put(recs);
	st2 = status(h);
	ASSERT_EQ(kernel(st2, "ringbuf_drops"), kernel(st1, "ringbuf_drops"), "after: no drops");
	json_object_put(st0);
	json_object_put(st1);
	json_object_put(st2);
}

/*
 * A process that waits for a byte on fd, then starts FILL_PROCS children
 * one after another, each listening once and exiting: records of their
 * listeners, opened and closed, and of their exits (followed, as children
 * of a process --pid lists).
 */
static pid_t fork_filler(int fd)
{
	pid_t pid = fork();
	int i, port;
	char c;

	if (pid)
		return pid;
	if (read(fd, &c, 1) != 1)
		_exit(1);
	for (i = 0; i < FILL_PROCS; i++) {
		pid_t child = fork();

		if (child == 0) {
			int lfd = sock_listen(&port);

			_exit(lfd < 0);
		}
		if (child > 0)
			waitpid(child, NULL, 0);
	}
	_exit(0);
}

/*
 * claimd held (SIGSTOP) while the filler's processes fill its ring, then
 * the service (pid, on port) killed: its exit's record has no room. When
 * claimd goes on, it finds the records dropped, looks for the processes
 * gone, and forgets the service as its record would have had it.
 */
static void ringbuf_lost_exit(const struct claimd_h *h, pid_t filler, int go_fd, pid_t *pid,
			      int port)
{
	struct json_object *st0 = NULL, *st1 = NULL;
	long long exits;

	ASSERT_EQ(fresh_requests(port, 5), 5, "the service answered");
	ASSERT_TRUE(claimd_status_reaches(h, "records.ingress", 5), "its requests recorded");
	st0 = status(h);
	kill(h->pid, SIGSTOP);
	if (!ASSERT_EQ(write(go_fd, "g", 1), 1, "the filler told") ||
	    !ASSERT_OK(proc_wait(filler, 30000), "the filler's processes done")) {
		kill(h->pid, SIGCONT);
		goto out;
	}
	proc_stop(*pid, 1000);
	*pid = 0;
	kill(h->pid, SIGCONT);
	ASSERT_TRUE(claimd_status_reaches(h, "records.lost_exits", 1),
		    "a process found gone without its record");
	st1 = status(h);
	exits = j_int(j_get(st1, "records"), "exit") - j_int(j_get(st0, "records"), "exit");
	printf("ring buffer held: %lld records dropped, %lld exits' records read of the filler's "
	       "%d; processes found gone without one: %lld; service instances counted %lld -> "
	       "%lld\n",
	       kernel(st1, "ringbuf_drops") - kernel(st0, "ringbuf_drops"), exits, FILL_PROCS + 1,
	       j_int(j_get(st1, "records"), "lost_exits"),
	       j_int(j_get(st0, "counter_reads"), "services"),
	       j_int(j_get(st1, "counter_reads"), "services"));
	/* Of one size, none read meanwhile: once one was dropped, so was each after it. */
	ASSERT_LT(exits, FILL_PROCS + 1, "the ring full before the service was killed");
	ASSERT_LT(j_int(j_get(st1, "counter_reads"), "services"),
		  j_int(j_get(st0, "counter_reads"), "services"),
		  "the service's counters forgotten");
out:
	json_object_put(st0);
	json_object_put(st1);
}

/* A claimd of its own for each kind of pressure; metrics on a free port. */
static bool start(struct claimd_h *h, struct trace_cap *t, const char *const args[], int *mport)
{
	char mport_s[32];
	const char *extra[24] = { "--metrics", mport_s };
	int i;

	memset(h, 0, sizeof(*h));
	memset(t, 0, sizeof(*t));
	*mport = sock_free_port();
	snprintf(mport_s, sizeof(mport_s), "127.0.0.1:%d", *mport);
	for (i = 0; args[i] && i < 20; i++)
		extra[i + 2] = args[i];
	extra[i + 2] = NULL;
	return ASSERT_OK(claimd_start(h, extra), "claimd start") &&
	       ASSERT_OK(trace_start(t, h), "trace");
}

/* ringbuf_lost_exit: a service and a filler, followed by a claimd of their own. */
static void subtest_lost_exit(void)
{
	char fpid[16], spid[16];
	const char *args[] = { "--ringbuf-size", "4096", "--pid", fpid, "--pid", spid, NULL };
	int go[2] = { -1, -1 }, port, mport;
	pid_t filler = 0, svc;
	struct claimd_h h;
	struct trace_cap t;

	svc = fork_server(loop_server, &port);
	if (!ASSERT_GT(svc, 0, "fork") || !ASSERT_OK(pipe(go), "pipe"))
		goto out;
	filler = fork_filler(go[0]);
	if (!ASSERT_GT(filler, 0, "fork"))
		goto out;
	snprintf(fpid, sizeof(fpid), "%d", filler);
	snprintf(spid, sizeof(spid), "%d", svc);
	if (start(&h, &t, args, &mport))
		ringbuf_lost_exit(&h, filler, go[1], &svc, port);
	claimd_traced_stop(&h, &t);
out:
	if (go[1] >= 0)
		close(go[1]); /* a filler still waiting reads the end, and leaves */
	if (go[0] >= 0)
		close(go[0]);
	if (filler > 0)
		proc_wait(filler, 5000);
	if (svc > 0)
		proc_stop(svc, 1000);
}

void test_exhaustion(void)
{
	pid_t loop = 0, thr = 0, p1 = 0, p2 = 0, callees = 0, hold = 0;
	int loop_port, thr_port, p1_port, p2_port, callee_ports[N_CALLEES], lfds[N_CALLEES];
	int hold_port;
	char pids[5][16];
	const char *conns[] = { "--conns", "64", "--pid", pids[0], "--pid", pids[4], NULL };
	const char *threads[] = { "--threads", "64", "--pid", pids[1], NULL };
	const char *classes[] = { "--classes", "16",	"--min-failures", "1",	   "--no-memory",
				  "--pid",     pids[2], "--pid",	  pids[3], NULL };
	const char *ringbuf[] = { "--ringbuf-size", "4096", "--pid", pids[0], NULL };
	const char *counts[] = { "--edges",	"16",	 "--min-failures", "1",
				 "--no-memory", "--pid", pids[3],	   NULL };
	struct claimd_h h;
	struct trace_cap t;
	int i, mport;

	if (!test__need_root())
		return;
	loop = fork_server(loop_server, &loop_port);
	thr = fork_server(thread_server, &thr_port);
	p1 = fork_server(caller_server, &p1_port);
	p2 = fork_server(caller_server, &p2_port);
	hold = fork_server(hold_server, &hold_port);
	for (i = 0; i < N_CALLEES; i++) {
		lfds[i] = sock_listen(&callee_ports[i]);
		if (!ASSERT_GE(lfds[i], 0, "callee listen"))
			goto out;
	}
	callees = fork();
	if (callees == 0) {
		callee_server(lfds, N_CALLEES);
		_exit(0);
	}
	for (i = 0; i < N_CALLEES; i++)
		close(lfds[i]);
	if (!ASSERT_GT(loop, 0, "fork") || !ASSERT_GT(thr, 0, "fork") ||
	    !ASSERT_GT(p1, 0, "fork") || !ASSERT_GT(p2, 0, "fork") ||
	    !ASSERT_GT(callees, 0, "fork") || !ASSERT_GT(hold, 0, "fork"))
		goto out;
	snprintf(pids[0], sizeof(pids[0]), "%d", loop);
	snprintf(pids[1], sizeof(pids[1]), "%d", thr);
	snprintf(pids[2], sizeof(pids[2]), "%d", p1);
	snprintf(pids[3], sizeof(pids[3]), "%d", p2);
	snprintf(pids[4], sizeof(pids[4]), "%d", hold);

	if (test__start_subtest("conns_full")) {
		if (start(&h, &t, conns, &mport)) {
			conns_full(&h, &t, loop, loop_port, mport);
			if (test__start_subtest("conns_evicted_mid_request"))
				conns_evicted_mid_request(&h, &t, hold, hold_port);
		}
		claimd_traced_stop(&h, &t);
	}
	if (test__start_subtest("threads_full")) {
		if (start(&h, &t, threads, &mport))
			threads_full(&h, &t, thr, thr_port, mport);
		claimd_traced_stop(&h, &t);
	}
	if (test__start_subtest("edge_classes_full")) {
		if (start(&h, &t, classes, &mport))
			classes_full(&h, &t, &p1, p1_port, p2, p2_port, callee_ports, mport);
		claimd_traced_stop(&h, &t);
	}
	if (test__start_subtest("edge_counts_full")) {
		if (start(&h, &t, counts, &mport))
			edge_counts_full(&h, &t, p2, p2_port, callee_ports);
		claimd_traced_stop(&h, &t);
	}
	if (test__start_subtest("ringbuf_full")) {
		if (start(&h, &t, ringbuf, &mport))
			ringbuf_full(&h, &t, loop, loop_port, mport);
		claimd_traced_stop(&h, &t);
	}
	if (test__start_subtest("ringbuf_lost_exit"))
		subtest_lost_exit();
out:
	proc_stop(loop, 1000);
	proc_stop(thr, 1000);
	proc_stop(p1, 1000);
	proc_stop(p2, 1000);
	proc_stop(callees, 1000);
	proc_stop(hold, 1000);
}
