// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile traffic against traced real services: a Python keep-alive service
 * (tests/peers/chain_service.py, "hA") and a small C server forked from this
 * test. claimd follows only those two processes (--pid), so its kernel
 * counters move only with what a subtest sends, and are checked exactly.
 * Each subtest: the hostile input, then what the service answered; no
 * record for what was not a request, one record with the service's own
 * status for each request line it saw; what could not be parsed counted
 * (parse_errors, parse_truncated, pipeline_overflow, unmatched_responses),
 * never guessed; then well-formed requests on new connections, each
 * answered right and recorded exactly once. claimd must answer
 * 'claimctl status' throughout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "http_parse.h"
#include "services.h"
#include "sockets.h"
#include "test_progs.h"
#include "truth.h"

#define MAX_PORTS     64
#define BURST_CONNS   10000
#define BURST_THREADS 8

struct env {
	struct claimd_h h;
	struct trace_cap t;
	struct svc py; /* "hA": Python, keep-alive */
	pid_t cpid;    /* the C server */
	int cport;     /* its port */
	int next_id;   /* request ids for the Python service */
	size_t mark;   /* trace lines before the current subtest: not looked at */
};

/* ---- the C server: one connection at a time, HTTP/1.0-style ---- */

static void c_server(int lfd)
{
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
					 "Connection: close\r\n\r\nok";
		char buf[4096];
		size_t got = 0;
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			continue;
		while (got < sizeof(buf) - 1) {
			ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);

			if (n <= 0)
				break;
			got += n;
			buf[got] = 0;
			if (strstr(buf, "\r\n\r\n"))
				break;
		}
		buf[got] = 0;
		/*
		 * "/dup": the socket is replaced by /dev/null under the same fd
		 * number (dup2 closes it), and the answer goes there: the client
		 * gets no answer, and claimd must not take those bytes for one.
		 */
		if (strstr(buf, "GET /dup ") && devnull >= 0)
			dup2(devnull, fd);
		if (strstr(buf, "\r\n\r\n"))
			write_all_fd(fd, ok, sizeof(ok) - 1);
		close(fd);
	}
}

/* ---- clients ---- */

static int local_port(int fd)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len))
		return -1;
	return ntohs(sa.sin_port);
}

/* Reads until EOF or an error; returns the bytes read (NUL-terminated). */
static size_t read_to_eof(int fd, char *buf, size_t len, size_t chunk)
{
	size_t got = 0;

	while (got < len - 1) {
		size_t want = chunk < len - 1 - got ? chunk : len - 1 - got;
		ssize_t n = read(fd, buf + got, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	buf[got] = 0;
	return got;
}

static int status_of(const char *resp)
{
	return !strncmp(resp, "HTTP/1.", 7) && strlen(resp) > 12 ? atoi(resp + 9) : -1;
}

/* Sends data on a new connection, half-closes, reads the answer to EOF.
 * Returns the client port; the answer in resp. */
static int exchange(int port, const char *data, size_t len, char *resp, size_t rlen)
{
	int fd = sock_connect(port), cport;

	resp[0] = 0;
	if (fd < 0)
		return -1;
	cport = local_port(fd);
	if (len && send(fd, data, len, MSG_NOSIGNAL) < 0)
		printf("send: %s\n", strerror(errno));
	shutdown(fd, SHUT_WR);
	read_to_eof(fd, resp, rlen, 65536);
	close(fd);
	return cport;
}

/* ---- what claimd saw ---- */

struct port_set {
	pid_t pid;
	int ports[MAX_PORTS];
	int n;
};

static bool peer_in(struct json_object *o, void *arg)
{
	const struct port_set *s = arg;
	const char *peer = j_str(o, "peer"), *colon = strrchr(peer, ':');
	int i;

	if (strcmp(j_str(o, "type"), "ingress") || j_int(o, "pid") != s->pid || !colon)
		return false;
	for (i = 0; i < s->n; i++)
		if (atoi(colon + 1) == s->ports[i])
			return true;
	return false;
}

/* Trace lines since the subtest began that match (caller puts). */
static struct json_object *matching(struct env *e, trace_match_fn match, void *ctx)
{
	struct json_object *all = trace_read(&e->t), *out = json_object_new_array();
	size_t i;

	for (i = e->mark; i < json_object_array_length(all); i++) {
		struct json_object *o = json_object_array_get_idx(all, i);

		if (match(o, ctx))
			json_object_array_add(out, json_object_get(o));
	}
	json_object_put(all);
	return out;
}

/* The matching lines, after waiting for n of them and a little more for any
 * extra (records are drained every 20 ms). Caller puts. */
static struct json_object *records(struct env *e, trace_match_fn match, void *ctx, int n)
{
	long long end = now_ms() + 10000;
	struct json_object *out;

	for (;;) {
		out = matching(e, match, ctx);
		if ((int)json_object_array_length(out) >= n || now_ms() >= end)
			break;
		json_object_put(out);
		sleep_ms(100);
	}
	json_object_put(out);
	sleep_ms(200);
	return matching(e, match, ctx);
}

/* From now on, only new trace lines count. */
static void mark(struct env *e)
{
	struct json_object *all = trace_read(&e->t);

	e->mark = json_object_array_length(all);
	json_object_put(all);
}

static int count_status(struct json_object *recs, int status)
{
	size_t i;
	int n = 0;

	for (i = 0; i < json_object_array_length(recs); i++)
		n += j_int(json_object_array_get_idx(recs, i), "status") == status;
	return n;
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

/* claimd's status; NULL if it does not answer. */
static struct json_object *status(struct env *e)
{
	const char *args[] = { "status", NULL };

	return claimctl_json(&e->h, args);
}

struct counters {
	long long v[8];
};

static const char *const counter_names[8] = {
	"parse_errors",	   "parse_truncated", "pipeline_overflow", "unmatched_responses",
	"tls_connections", "ingresses",	      "parse_resyncs",	   "connections_closed",
};

enum {
	C_ERR,
	C_TRUNC,
	C_PIPE,
	C_UNMATCHED,
	C_TLS,
	C_INGRESS,
	C_RESYNC,
	C_CLOSED,
};

/* claimd's kernel counters now; false if claimd did not answer. */
static bool counters(struct env *e, struct counters *c)
{
	struct json_object *st = status(e), *k = j_get(st, "kernel");
	int i;

	for (i = 0; i < 8; i++)
		c->v[i] = j_int(k, counter_names[i]);
	json_object_put(st);
	return ASSERT_OK_PTR(k, "claimd answers claimctl status");
}

static void print_delta(const char *what, const struct counters *a, const struct counters *b)
{
	int i;

	printf("%s: kernel counters moved:", what);
	for (i = 0; i < 8; i++)
		if (b->v[i] != a->v[i])
			printf(" %s +%lld", counter_names[i], b->v[i] - a->v[i]);
	printf("\n");
}

/* n well-formed GETs to the Python service on new connections: each answered
 * 200 with the service's body, and recorded exactly once, with that status. */
static void well_formed(struct env *e, int n, const char *what)
{
	struct port_set s = { .pid = e->py.pid };
	struct json_object *recs;
	char req[128], resp[4096], name[96];
	int i, ok = 0;

	for (i = 0; i < n && s.n < MAX_PORTS; i++) {
		int len = snprintf(req, sizeof(req),
				   "GET /r/%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
				   e->next_id++);

		s.ports[s.n++] = exchange(e->py.port, req, len, resp, sizeof(resp));
		ok += status_of(resp) == 200 && strstr(resp, "\r\n\r\nHTTP/1.1 200 OK\r\nok\n");
	}
	snprintf(name, sizeof(name), "%s: service answers well-formed requests right", what);
	ASSERT_EQ(ok, n, name);
	recs = records(e, peer_in, &s, n);
	snprintf(name, sizeof(name), "%s: each well-formed request recorded once", what);
	ASSERT_EQ(json_object_array_length(recs), n, name);
	snprintf(name, sizeof(name), "%s: with its status", what);
	ASSERT_EQ(count_status(recs, 200), n, name);
	json_object_put(recs);
}

/* ---- subtests ---- */

static __u32 xorshift(__u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void junk(struct env *e)
{
	static const unsigned char tls_hello[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01,
						   0x00, 0x01, 0xfc, 0x03, 0x03 };
	struct port_set s = { .pid = e->py.pid };
	struct counters a, b;
	struct json_object *recs;
	char data[4096], resp[4096];
	__u32 seed = 2024;
	int i, j;

	if (!counters(e, &a))
		return;
	/* Random bytes (the first not a capital letter, so no method starts). */
	for (i = 0; i < 3; i++) {
		for (j = 0; j < (int)sizeof(data); j++)
			data[j] = xorshift(&seed);
		data[0] = '\x01';
		s.ports[s.n++] = exchange(e->py.port, data, sizeof(data), resp, sizeof(resp));
		/* Python answers HTTP/0.9-style: a bare HTML error page, no status line. */
		ASSERT_TRUE(strstr(resp, "Error code: 400") != NULL, "service says 400");
	}
	/* Bytes that look like a TLS handshake: the connection is taken for TLS. */
	memset(data, 0, sizeof(data));
	memcpy(data, tls_hello, sizeof(tls_hello));
	s.ports[s.n++] = exchange(e->py.port, data, 256, resp, sizeof(resp));
	recs = records(e, peer_in, &s, 0);
	ASSERT_EQ(json_object_array_length(recs), 0, "no record for junk");
	json_object_put(recs);
	if (!counters(e, &b))
		return;
	print_delta("junk", &a, &b);
	/* Per random connection: the request stream (not HTTP) and the answer
	 * (an HTML page without a status line) are each one parse error. */
	ASSERT_EQ(b.v[C_ERR] - a.v[C_ERR], 6, "parse errors: 2 per junk connection");
	ASSERT_EQ(b.v[C_TLS] - a.v[C_TLS], 1, "TLS-looking bytes: a TLS connection");
	ASSERT_EQ(b.v[C_INGRESS] - a.v[C_INGRESS], 0, "no ingress started");
	ASSERT_EQ(b.v[C_UNMATCHED] - a.v[C_UNMATCHED], 0, "no answer guessed");
	well_formed(e, 3, "after junk");
}

static void truncated(struct env *e)
{
	static const char line[] = "GET /r/7001 HTT";
	static const char header[] = "GET /r/7002 HTTP/1.1\r\nHost: x\r\nX-Cut: abc";
	struct port_set s1 = { .pid = e->py.pid, .n = 1 }, s2 = s1;
	struct json_object *recs;
	struct counters a, b;
	char resp[4096];

	if (!counters(e, &a))
		return;
	s1.ports[0] = exchange(e->py.port, line, sizeof(line) - 1, resp, sizeof(resp));
	ASSERT_TRUE(strstr(resp, "Error code: 400") != NULL, "cut request line: 400");
	s2.ports[0] = exchange(e->py.port, header, sizeof(header) - 1, resp, sizeof(resp));
	/* Python takes the end of the stream for the end of the head, and answers. */
	ASSERT_EQ(status_of(resp), 200, "cut header line: the service answers 200");
	recs = records(e, peer_in, &s1, 0);
	ASSERT_EQ(json_object_array_length(recs), 0, "cut request line: no record");
	json_object_put(recs);
	recs = records(e, peer_in, &s2, 1);
	if (ASSERT_EQ(json_object_array_length(recs), 1, "cut header line: one record"))
		ASSERT_EQ(j_int(json_object_array_get_idx(recs, 0), "status"), 200,
			  "with the status the service gave");
	json_object_put(recs);
	if (!counters(e, &b))
		return;
	print_delta("truncated", &a, &b);
	/* The 400 page without a status line is the only thing not HTTP. */
	ASSERT_EQ(b.v[C_ERR] - a.v[C_ERR], 1, "parse errors");
	ASSERT_EQ(b.v[C_INGRESS] - a.v[C_INGRESS], 1, "ingresses");
	well_formed(e, 3, "after truncated lines");
}

/* Sends len bytes (of a pattern after the prefix) without waiting for the
 * answer to finish, then reads the answer. Returns the client port. */
static int big_exchange(int port, const char *prefix, char fill, size_t len, const char *suffix,
			char *resp, size_t rlen)
{
	size_t plen = strlen(prefix), slen = suffix ? strlen(suffix) : 0;
	char *buf = malloc(plen + len + slen);
	int fd = sock_connect(port), cport = -1;
	size_t off = 0;

	resp[0] = 0;
	if (!buf || fd < 0)
		goto out;
	cport = local_port(fd);
	memcpy(buf, prefix, plen);
	memset(buf + plen, fill, len);
	memcpy(buf + plen + len, suffix ? suffix : "", slen);
	len += plen + slen;
	/* The service may answer and close before it has read everything. */
	while (off < len) {
		ssize_t n =
			send(fd, buf + off, len - off > 65536 ? 65536 : len - off, MSG_NOSIGNAL);

		if (n <= 0)
			break;
		off += n;
	}
	shutdown(fd, SHUT_WR);
	read_to_eof(fd, resp, rlen, 65536);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return cport;
}

static void long_lines(struct env *e)
{
	struct port_set s1 = { .pid = e->py.pid, .n = 1 }, s2 = s1;
	struct json_object *recs;
	struct counters a, b, c;
	char resp[4096], *head;
	size_t i, off;

	if (!counters(e, &a))
		return;
	/* A header line that never ends: 200 KB and no newline. */
	s1.ports[0] = big_exchange(e->py.port, "GET /r/7003 HTTP/1.1\r\nX-Endless: ", 'a', 200000,
				   NULL, resp, sizeof(resp));
	ASSERT_EQ(status_of(resp), 431, "endless line: the service answers 431");
	recs = records(e, peer_in, &s1, 1);
	if (ASSERT_EQ(json_object_array_length(recs), 1, "endless line: one record"))
		ASSERT_EQ(j_int(json_object_array_get_idx(recs, 0), "status"), 431,
			  "with the service's status");
	json_object_put(recs);
	if (!counters(e, &b))
		return;
	print_delta("endless header line", &a, &b);
	/* The head passed HTTP_MAX_HEAD (or the per-syscall budget): one lost stream. */
	ASSERT_EQ(b.v[C_ERR] + b.v[C_TRUNC] - a.v[C_ERR] - a.v[C_TRUNC], 1,
		  "endless line: the lost stream counted once");

	/* A 1 MiB head: 16 header lines of 64000 bytes, which Python accepts. */
	head = malloc(1 << 21);
	if (!ASSERT_OK_PTR(head, "malloc"))
		return;
	off = snprintf(head, 64, "GET /r/7004 HTTP/1.1\r\nConnection: close\r\n");
	for (i = 0; i < 16; i++) {
		off += sprintf(head + off, "X-Big-%zu: ", i);
		memset(head + off, 'b', 64000);
		off += 64000;
		off += sprintf(head + off, "\r\n");
	}
	off += sprintf(head + off, "\r\n");
	printf("big head: %zu bytes\n", off);
	s2.ports[0] = big_exchange(e->py.port, head, 'x', 0, NULL, resp, sizeof(resp));
	free(head);
	ASSERT_EQ(status_of(resp), 200, "1 MiB head: the service answers 200");
	recs = records(e, peer_in, &s2, 1);
	if (ASSERT_EQ(json_object_array_length(recs), 1, "1 MiB head: one record"))
		ASSERT_EQ(j_int(json_object_array_get_idx(recs, 0), "status"), 200,
			  "with the service's status");
	json_object_put(recs);
	if (!counters(e, &c))
		return;
	print_delta("1 MiB head", &b, &c);
	ASSERT_EQ(c.v[C_ERR] + c.v[C_TRUNC] - b.v[C_ERR] - b.v[C_TRUNC], 1,
		  "1 MiB head: the lost stream counted once");
	ASSERT_EQ(c.v[C_INGRESS] - a.v[C_INGRESS], 2, "ingresses");
	well_formed(e, 3, "after long lines");
}

struct answers {
	int responses, ok;
};

static void count_answer(void *ctx, struct http_framer *f, __u32 ev)
{
	struct answers *a = ctx;

	if ((ev & HTTP_EV_START) && f->status == 200)
		a->ok++;
	if (ev & HTTP_EV_END)
		a->responses++;
}

/* n requests in one write on one keep-alive connection; returns answers read
 * (framed by the project's own parser) and the client port. */
static int pipelined(struct env *e, int n, struct answers *ans)
{
	struct http_framer f;
	char *reqs = malloc(n * 64 + 1), buf[65536];
	int fd = sock_connect(e->py.port), cport = -1, i;
	size_t len = 0;

	memset(ans, 0, sizeof(*ans));
	if (!reqs || fd < 0)
		goto out;
	cport = local_port(fd);
	for (i = 0; i < n; i++)
		len += sprintf(reqs + len, "GET /r/%d HTTP/1.1\r\nHost: x\r\n\r\n", e->next_id++);
	if (write_all_fd(fd, reqs, len))
		goto out;
	http_framer_init(&f, HTTP_KIND_RESPONSE, 0);
	while (ans->responses < n) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r <= 0)
			break;
		http_feed(&f, (const __u8 *)buf, r, count_answer, ans);
	}
out:
	if (fd >= 0)
		close(fd);
	free(reqs);
	return cport;
}

static void pipelining(struct env *e)
{
	struct port_set s = { .pid = e->py.pid, .n = 1 };
	struct json_object *recs;
	struct answers ans;
	struct counters a, b, c;
	int n_rec, detailed = 0;
	size_t i;

	if (!counters(e, &a))
		return;
	/* As many as a connection keeps (CLAIMD_FIFO_MAX): all recorded in full. */
	s.ports[0] = pipelined(e, 8, &ans);
	ASSERT_EQ(ans.ok, 8, "burst of 8: eight 200 answers");
	recs = records(e, peer_in, &s, 8);
	ASSERT_EQ(json_object_array_length(recs), 8, "burst of 8: eight records");
	ASSERT_EQ(count_status(recs, 200), 8, "burst of 8: their status");
	json_object_put(recs);
	if (!counters(e, &b))
		return;
	print_delta("8 pipelined", &a, &b);
	ASSERT_EQ(b.v[C_PIPE] - a.v[C_PIPE], 0, "burst of 8: no overflow");
	ASSERT_EQ(b.v[C_UNMATCHED] - a.v[C_UNMATCHED], 0, "burst of 8: all matched");

	/* 100 in one write: more than the FIFO holds, within one read's parse budget. */
	s.ports[0] = pipelined(e, 100, &ans);
	ASSERT_EQ(ans.ok, 100, "burst of 100: a hundred 200 answers");
	recs = records(e, peer_in, &s, 100);
	n_rec = json_object_array_length(recs);
	for (i = 0; i < (size_t)n_rec; i++)
		detailed += !has_flag(json_object_array_get_idx(recs, i), "no-egress-log");
	if (!counters(e, &c))
		return;
	print_delta("100 pipelined", &b, &c);
	printf("burst of 100: %d recorded (%d in full, %d beyond the FIFO without egress log), "
	       "%lld answers unmatched\n",
	       n_rec, detailed, n_rec - detailed, c.v[C_UNMATCHED] - b.v[C_UNMATCHED]);
	ASSERT_EQ(count_status(recs, 200), n_rec, "burst of 100: recorded with their status");
	/* Every answer is a record or counted unmatched: nothing silently lost. */
	ASSERT_EQ(n_rec + (c.v[C_UNMATCHED] - b.v[C_UNMATCHED]), 100,
		  "burst of 100: records + unmatched answers = 100");
	/* Ingresses begun with their context: the ones in the FIFO. */
	ASSERT_EQ(c.v[C_INGRESS] - b.v[C_INGRESS], detailed, "ingresses");
	ASSERT_EQ(detailed, n_rec < 8 ? n_rec : 8, "the first 8 in full");
	ASSERT_EQ(c.v[C_PIPE] - b.v[C_PIPE], n_rec > 8 ? n_rec - 8 : 0,
		  "requests beyond the FIFO counted");
	/* Requests the parser did not reach were counted as truncation, not guessed. */
	ASSERT_EQ(c.v[C_TRUNC] - b.v[C_TRUNC], n_rec < 100 ? 1 : 0, "truncation counted");
	json_object_put(recs);
	well_formed(e, 3, "after pipelining");
}

struct slow_client {
	int port, id;
	int cport;
	int status;
	pthread_t th;
};

static void *slow_client_main(void *arg)
{
	struct slow_client *c = arg;
	char req[128], resp[4096];
	int fd = sock_connect(c->port), len, i;

	c->status = -1;
	if (fd < 0)
		return NULL;
	c->cport = local_port(fd);
	len = snprintf(req, sizeof(req),
		       "GET /r/%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", c->id);
	for (i = 0; i < len; i++) {
		if (write_all_fd(fd, req + i, 1))
			break;
		sleep_ms(2);
	}
	read_to_eof(fd, resp, sizeof(resp), 1); /* and the answer one byte per read */
	c->status = status_of(resp);
	close(fd);
	return NULL;
}

static void slow_clients(struct env *e)
{
	struct slow_client cl[4];
	struct port_set s = { .pid = e->py.pid, .n = 4 };
	struct json_object *recs;
	int i, ok = 0;

	for (i = 0; i < 4; i++) {
		cl[i] = (struct slow_client){ .port = e->py.port, .id = e->next_id++ };
		pthread_create(&cl[i].th, NULL, slow_client_main, &cl[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(cl[i].th, NULL);
		ok += cl[i].status == 200;
		s.ports[i] = cl[i].cport;
	}
	ASSERT_EQ(ok, 4, "four byte-at-a-time clients answered 200");
	recs = records(e, peer_in, &s, 4);
	ASSERT_EQ(json_object_array_length(recs), 4, "four records");
	ASSERT_EQ(count_status(recs, 200), 4, "with their status");
	json_object_put(recs);
	well_formed(e, 2, "after slow clients");
}

static void half_closed(struct env *e)
{
	struct port_set s = { .pid = e->py.pid };
	struct json_object *recs;
	char req[128], resp[4096];
	int i, ok = 0;

	/* Keep-alive requests: the service sees the end of the stream after answering. */
	for (i = 0; i < 20; i++) {
		int len = snprintf(req, sizeof(req), "GET /r/%d HTTP/1.1\r\nHost: x\r\n\r\n",
				   e->next_id++);

		s.ports[s.n++] = exchange(e->py.port, req, len, resp, sizeof(resp));
		ok += status_of(resp) == 200;
	}
	ASSERT_EQ(ok, 20, "20 half-closed clients answered 200");
	recs = records(e, peer_in, &s, 20);
	ASSERT_EQ(json_object_array_length(recs), 20, "20 records");
	ASSERT_EQ(count_status(recs, 200), 20, "with their status");
	json_object_put(recs);
}

struct burst {
	int port, n, ok;
	pthread_t th;
};

static void *burst_main(void *arg)
{
	static const char req[] = "GET /burst HTTP/1.1\r\nHost: x\r\n\r\n";
	struct burst *b = arg;
	char resp[512];
	int i;

	for (i = 0; i < b->n; i++) {
		int fd = sock_connect(b->port);

		if (fd < 0)
			continue;
		if (!write_all_fd(fd, req, sizeof(req) - 1)) {
			read_to_eof(fd, resp, sizeof(resp), sizeof(resp));
			b->ok += status_of(resp) == 200;
		}
		close(fd);
	}
	return NULL;
}

static void short_connections(struct env *e)
{
	struct burst b[BURST_THREADS];
	struct json_object *recs, *st0, *st1 = NULL;
	struct counters a, c;
	long long t0;
	int i, ok = 0, before;

	before = 0; /* records since the mark */
	st0 = status(e);
	if (!counters(e, &a))
		goto out;
	t0 = now_ms();
	for (i = 0; i < BURST_THREADS; i++) {
		b[i] = (struct burst){ .port = e->cport, .n = BURST_CONNS / BURST_THREADS };
		pthread_create(&b[i].th, NULL, burst_main, &b[i]);
	}
	for (i = 0; i < BURST_THREADS; i++) {
		pthread_join(b[i].th, NULL);
		ok += b[i].ok;
	}
	printf("%d short connections in %lld ms\n", BURST_CONNS, now_ms() - t0);
	ASSERT_EQ(ok, BURST_CONNS, "every connection answered 200");
	recs = records(e, trace_is_ingress_of, &e->cpid, before + BURST_CONNS);
	ASSERT_EQ((int)json_object_array_length(recs) - before, BURST_CONNS,
		  "one record per connection");
	ASSERT_EQ(count_status(recs, 200) - before, BURST_CONNS, "with status 200");
	json_object_put(recs);
	st1 = status(e);
	if (!counters(e, &c))
		goto out;
	print_delta("10000 connections", &a, &c);
	ASSERT_EQ(c.v[C_INGRESS] - a.v[C_INGRESS], BURST_CONNS, "ingresses");
	ASSERT_EQ(c.v[C_CLOSED] - a.v[C_CLOSED], BURST_CONNS, "connections closed");
	ASSERT_EQ(c.v[C_ERR] - a.v[C_ERR], 0, "no parse errors");
	ASSERT_EQ(j_int(j_get(st1, "records"), "ingress") - j_int(j_get(st0, "records"), "ingress"),
		  BURST_CONNS, "claimd read them all");
	ASSERT_EQ(j_int(j_get(st1, "kernel"), "ringbuf_drops"),
		  j_int(j_get(st0, "kernel"), "ringbuf_drops"), "no ring buffer drops");
out:
	json_object_put(st0);
	json_object_put(st1);
}

static void fd_reuse(struct env *e)
{
	static const char req[] = "GET /again HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char dup_req[] = "GET /dup HTTP/1.1\r\nHost: x\r\n\r\n";
	struct port_set s = { .pid = e->cpid }, sd = { .pid = e->cpid };
	struct json_object *recs;
	char resp[512];
	int i, fd, first_fd = -1, same_fd = 0, ok = 0, gone = 0;
	size_t k;

	/* Each connection closed and the next one opened at once: the same fd
	 * numbers, on both sides. Every other client leaves before the answer. */
	for (i = 0; i < 40; i++) {
		fd = sock_connect(e->cport);
		if (fd < 0)
			continue;
		if (first_fd < 0)
			first_fd = fd;
		same_fd += fd == first_fd;
		s.ports[s.n++] = local_port(fd);
		write_all_fd(fd, req, sizeof(req) - 1);
		if (i % 2) {
			read_to_eof(fd, resp, sizeof(resp), sizeof(resp));
			ok += status_of(resp) == 200;
		}
		close(fd);
	}
	printf("fd reuse: %d of 40 client connections on fd %d\n", same_fd, first_fd);
	ASSERT_EQ(same_fd, 40, "the client fd is reused every time");
	ASSERT_EQ(ok, 20, "the clients that waited got 200");
	recs = records(e, peer_in, &s, 40);
	ASSERT_EQ(json_object_array_length(recs), 40, "one record per connection");
	/* The service answered every one, whether or not its client was still there. */
	ASSERT_EQ(count_status(recs, 200), 40, "each with the status the service wrote");
	json_object_put(recs);

	/* The service replaces the socket with /dev/null under its fd (dup2) and
	 * writes its answer there: no answer reached anybody. */
	for (i = 0; i < 3; i++) {
		sd.ports[sd.n++] =
			exchange(e->cport, dup_req, sizeof(dup_req) - 1, resp, sizeof(resp));
		gone += resp[0] == 0;
	}
	ASSERT_EQ(gone, 3, "dup2: the clients got no answer");
	recs = records(e, peer_in, &sd, 3);
	ASSERT_EQ(json_object_array_length(recs), 3, "dup2: one record per request");
	for (k = 0; k < json_object_array_length(recs); k++) {
		struct json_object *o = json_object_array_get_idx(recs, k);

		ASSERT_EQ(j_int(o, "status"), 0,
			  "dup2: no answer, not the bytes sent to /dev/null");
		ASSERT_TRUE(has_flag(o, "closed-before-response"), "dup2: closed before response");
	}
	{
		/* The server calls nobody: not answering is its own failure. */
		const struct truth_svc own = { .pid = e->cpid, .verdict = "claimed", .cause = "" };
		struct truth_tally t = { 0 };

		truth__tally_services(&t, recs, &own, 1);
		truth__expect(&t, "dup2", 3, 0);
	}
	json_object_put(recs);
	/* The C server's fds were reused all along: its next exchanges are clean. */
	s.n = 0;
	for (i = 0; i < 5; i++)
		s.ports[s.n++] = exchange(e->cport, req, sizeof(req) - 1, resp, sizeof(resp));
	recs = records(e, peer_in, &s, 5);
	ASSERT_EQ(count_status(recs, 200), 5, "after dup2: five clean records");
	ASSERT_EQ(json_object_array_length(recs), 5, "and nothing else");
	json_object_put(recs);
}

void test_hostile(void)
{
	struct svc_spec spec = { .name = "hA", .keepalive = true };
	struct env e = { .next_id = 100 };
	char pid1[16], pid2[16];
	const char *extra[] = { "--pid", pid1, "--pid", pid2, "--metrics", "none", NULL };
	struct json_object *st = NULL;
	int lfd = -1;

	if (!test__need_root())
		return;
	if (!ASSERT_OK(tmpdir_make(e.h.dir, sizeof(e.h.dir)), "tmpdir"))
		return;
	if (!ASSERT_OK(svc_start(&e.py, &spec, e.h.dir), "service hA"))
		goto out;
	lfd = sock_listen(&e.cport);
	if (!ASSERT_GE(lfd, 0, "listen"))
		goto out;
	listen(lfd, 4096);
	e.cpid = fork();
	if (e.cpid == 0) {
		c_server(lfd);
		_exit(0);
	}
	close(lfd);
	snprintf(pid1, sizeof(pid1), "%d", e.py.pid);
	snprintf(pid2, sizeof(pid2), "%d", e.cpid);
	if (!ASSERT_OK(claimd_start(&e.h, extra), "claimd start") ||
	    !ASSERT_OK(trace_start(&e.t, &e.h), "trace"))
		goto out;
	well_formed(&e, 3, "before");
	mark(&e);
	if (test__start_subtest("binary_junk"))
		junk(&e);
	mark(&e);
	if (test__start_subtest("truncated_lines"))
		truncated(&e);
	mark(&e);
	if (test__start_subtest("endless_and_1mib_header"))
		long_lines(&e);
	mark(&e);
	if (test__start_subtest("pipelined_bursts"))
		pipelining(&e);
	mark(&e);
	if (test__start_subtest("slow_byte_at_a_time"))
		slow_clients(&e);
	mark(&e);
	if (test__start_subtest("half_closed"))
		half_closed(&e);
	mark(&e);
	if (test__start_subtest("10000_short_connections"))
		short_connections(&e);
	mark(&e);
	if (test__start_subtest("fd_reuse_and_dup2"))
		fd_reuse(&e);
	mark(&e);
	if (test__start_subtest("claimd_still_up")) {
		st = status(&e);
		ASSERT_OK_PTR(st, "claimd answers claimctl status");
		ASSERT_EQ(j_int(j_get(st, "records"), "invalid"), 0, "no malformed records");
		ASSERT_EQ(kill(e.h.pid, 0), 0, "claimd is running");
		ASSERT_EQ(kill(e.py.pid, 0), 0, "the service is running");
		well_formed(&e, 3, "at the end");
	}
out:
	if (test__failed_now())
		claimd_print_log(&e.h);
	json_object_put(st);
	trace_stop(&e.t);
	claimd_stop(&e.h);
	if (e.cpid > 0)
		proc_stop(e.cpid, 1000);
	svc_stop(&e.py);
	tmpdir_remove(e.h.dir);
}
