// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP/1.x framing on real loopback sockets, observed by a real claimd:
 * messages split across reads and writes down to single bytes, pipelined
 * requests answered in one write (with bodies that look like status lines),
 * and every kind of transport failure (refused, blocking or not; reset;
 * closed before a response; the caller giving up). Server and client are
 * threads of this test process, so its pid filters the trace. The servers
 * call nobody: every failure of theirs is claimed.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "sockets.h"
#include "test_progs.h"
#include "truth.h"

struct env {
	struct claimd_h h;
	struct trace_cap t;
};

static bool env_up(struct env *e)
{
	memset(e, 0, sizeof(*e));
	if (!test__need_root())
		return false;
	if (!ASSERT_OK(claimd_start(&e->h, NULL), "claimd start") ||
	    !ASSERT_OK(trace_start(&e->t, &e->h), "trace"))
		return false;
	/* This process serves: claimd reads its program at its first listener, before it serves. */
	{
		int port, fd = sock_listen(&port);

		if (!ASSERT_GE(fd, 0, "a first listener"))
			return false;
		close(fd);
	}
	return ASSERT_TRUE(claimd_programs_read(&e->h), "this process's program read");
}

static void env_down(struct env *e)
{
	if (test__failed_now())
		claimd_print_log(&e->h);
	trace_stop(&e->t);
	claimd_stop(&e->h);
	tmpdir_remove(e->h.dir);
}

/* Lines of this process about one port: ingresses served there, calls to it. */
struct port_match {
	int port;
	const char *type;
};

static bool ends_with_port(const char *addr, int port)
{
	char suffix[16];
	size_t n, l = strlen(addr);

	n = snprintf(suffix, sizeof(suffix), ":%d", port);
	return l >= n && !strcmp(addr + l - n, suffix);
}

static bool match_port(struct json_object *o, void *arg)
{
	struct port_match *m = arg;

	if (j_int(o, "pid") != getpid() || strcmp(j_str(o, "type"), m->type))
		return false;
	if (!strcmp(m->type, "ingress"))
		return ends_with_port(j_str(o, "addr"), m->port);
	return ends_with_port(j_str(j_get(o, "egress"), "addr"), m->port);
}

/* Waits for n lines of the type about port; returns them (array, caller puts). */
static struct json_object *lines_for(struct env *e, const char *type, int port, int n)
{
	struct port_match m = { port, type };
	struct json_object *all, *out = json_object_new_array();
	size_t i;

	trace_wait(&e->t, match_port, &m, n, 10000);
	all = trace_read(&e->t);
	for (i = 0; i < json_object_array_length(all); i++) {
		struct json_object *o = json_object_array_get_idx(all, i);

		if (match_port(o, &m))
			json_object_array_add(out, json_object_get(o));
	}
	json_object_put(all);
	return out;
}

/* The servers here (threads of this process) call nobody: each failure of
 * theirs is their own, claimed with no cause. */
static void check_own_failures(struct json_object *in, int failures, const char *what)
{
	const struct truth_svc own = { .pid = getpid(), .verdict = "claimed", .cause = "" };
	struct truth_tally t = { 0 };

	truth__tally_services(&t, in, &own, 1);
	truth__expect(&t, what, failures, 0);
}

/* ---- partial reads and writes ---- */

struct split_server {
	int lfd;
	int ok;
};

static const char split_req1[] = "GET /split HTTP/1.1\r\nHost: x\r\n\r\n";
static const char split_resp1[] =
	"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nfail";
static const char split_req2[] = "DELETE /byte HTTP/1.1\r\nHost: x\r\n\r\n";
static const char split_resp2[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

static int send_bytewise(int fd, const char *s)
{
	for (; *s; s++)
		if (write_all_fd(fd, s, 1))
			return -1;
	return 0;
}

static void *split_server_main(void *arg)
{
	struct split_server *s = arg;
	static const size_t pieces[] = { 3, 5, 7 }; /* "HTT" "P/1.1" " 503 Se" ... */
	char buf[512];
	int fd = accept(s->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	/* Three bytes per read: the request line arrives in seven pieces. */
	if (sock_recv_until(fd, buf, sizeof(buf), "\r\n\r\n", 3) <= 0)
		goto out;
	if (sock_send_pieces(fd, split_resp1, pieces, 3, 30))
		goto out;
	if (sock_recv_until(fd, buf, sizeof(buf), "\r\n\r\n", 1) <= 0)
		goto out;
	if (send_bytewise(fd, split_resp2))
		goto out;
	sock_recv_until(fd, buf, sizeof(buf), NULL, 64); /* until the client closes */
	s->ok = 1;
out:
	close(fd);
	return NULL;
}

static void check_one(struct json_object *o, const char *method, int status, const char *what)
{
	char name[96];

	snprintf(name, sizeof(name), "%s: method", what);
	ASSERT_STREQ(j_str(o, "method"), method, name);
	snprintf(name, sizeof(name), "%s: status", what);
	ASSERT_EQ(j_int(o, "status"), status, name);
}

void test_partial_reads(void)
{
	static const size_t pieces[] = { 2, 9, 6 }; /* "GE" "T /split " "HTTP/1" ... */
	struct split_server s = { 0 };
	struct json_object *in = NULL, *out = NULL;
	struct env e;
	pthread_t th;
	char buf[512];
	int port, fd = -1;

	if (!env_up(&e))
		goto done;
	s.lfd = sock_listen(&port);
	if (!ASSERT_GE(s.lfd, 0, "listen"))
		goto done;
	pthread_create(&th, NULL, split_server_main, &s);
	fd = sock_connect(port);
	if (ASSERT_GE(fd, 0, "connect")) {
		sock_send_pieces(fd, split_req1, pieces, 3, 30);
		sock_recv_until(fd, buf, sizeof(buf), "fail", 1); /* byte by byte */
		send_bytewise(fd, split_req2);
		sock_recv_until(fd, buf, sizeof(buf), "\r\n\r\n", 1);
		close(fd);
	}
	pthread_join(th, NULL);
	close(s.lfd);
	ASSERT_TRUE(s.ok, "exchange completed");

	in = lines_for(&e, "ingress", port, 2);
	out = lines_for(&e, "egress", port, 2);
	if (ASSERT_EQ(json_object_array_length(in), 2, "ingresses")) {
		struct json_object *first = json_object_array_get_idx(in, 0);

		check_one(first, "GET", 503, "split lines");
		check_one(json_object_array_get_idx(in, 1), "DELETE", 404, "byte by byte");
		/* The ingress starts at its first byte: two 30 ms pauses inside the
		 * request, two more before the status line is complete. */
		ASSERT_GE(json_object_get_double(j_get(first, "duration_ms")), 100.0,
			  "duration from the first byte");
	}
	check_own_failures(in, 1, "partial reads");
	if (ASSERT_EQ(json_object_array_length(out), 2, "calls")) {
		check_one(j_get(json_object_array_get_idx(out, 0), "egress"), "GET", 503,
			  "call, split");
		check_one(j_get(json_object_array_get_idx(out, 1), "egress"), "DELETE", 404,
			  "call, byte by byte");
	}
done:
	json_object_put(in);
	json_object_put(out);
	env_down(&e);
}

/* ---- pipelining ---- */

/* The POST's body is a status line; so is the first response's body. */
static const char pipe_reqs[] = "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n"
				"POST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n"
				"HTTP/1.1 200 OK\r\n"
				"GET /3 HTTP/1.1\r\nHost: x\r\n\r\n";
static const char pipe_resps[] = "HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n"
				 "HTTP/1.1 500 No\r\n"
				 "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
				 "HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\n\r\n"
				 "11\r\nHTTP/1.1 200 OK\r\n\r\n0\r\n\r\n";

static void *pipe_server_main(void *arg)
{
	struct split_server *s = arg;
	char buf[1024];
	size_t got = 0;
	int fd = accept(s->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	/* All three requests, however they arrive, then all answers in one write. */
	while (got < sizeof(pipe_reqs) - 1) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);

		if (n <= 0)
			goto out;
		got += n;
	}
	if (!write_all_fd(fd, pipe_resps, sizeof(pipe_resps) - 1))
		s->ok = 1;
	sock_recv_until(fd, buf, sizeof(buf), NULL, 64);
out:
	close(fd);
	return NULL;
}

void test_pipelining(void)
{
	static const char *const methods[] = { "GET", "POST", "GET" };
	static const int statuses[] = { 200, 404, 503 };
	struct split_server s = { 0 };
	struct json_object *in = NULL, *out = NULL;
	struct env e;
	pthread_t th;
	char buf[1024];
	int port, fd, i;

	if (!env_up(&e))
		goto done;
	s.lfd = sock_listen(&port);
	if (!ASSERT_GE(s.lfd, 0, "listen"))
		goto done;
	pthread_create(&th, NULL, pipe_server_main, &s);
	fd = sock_connect(port);
	if (ASSERT_GE(fd, 0, "connect")) {
		ASSERT_OK(write_all_fd(fd, pipe_reqs, sizeof(pipe_reqs) - 1), "one write");
		sock_recv_until(fd, buf, sizeof(buf), "0\r\n\r\n", 4096);
		close(fd);
	}
	pthread_join(th, NULL);
	close(s.lfd);
	ASSERT_TRUE(s.ok, "server answered");

	in = lines_for(&e, "ingress", port, 3);
	out = lines_for(&e, "egress", port, 3);
	if (ASSERT_EQ(json_object_array_length(in), 3, "ingresses, in order"))
		for (i = 0; i < 3; i++)
			check_one(json_object_array_get_idx(in, i), methods[i], statuses[i],
				  "pipelined ingress");
	check_own_failures(in, 1, "pipelining");
	if (ASSERT_EQ(json_object_array_length(out), 3, "calls, in order"))
		for (i = 0; i < 3; i++)
			check_one(j_get(json_object_array_get_idx(out, i), "egress"), methods[i],
				  statuses[i], "pipelined call");
done:
	json_object_put(in);
	json_object_put(out);
	env_down(&e);
}

/* ---- transport failures ---- */

enum server_end { END_RESET, END_CLOSE, END_LATE_ANSWER };

struct fail_server {
	int lfd;
	enum server_end how;
	int client_gone; /* END_LATE_ANSWER: set when the client has closed */
};

static void *fail_server_main(void *arg)
{
	struct fail_server *s = arg;
	char buf[512];
	int fd = accept(s->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	sock_recv_until(fd, buf, sizeof(buf), "\r\n\r\n", 512);
	switch (s->how) {
	case END_RESET:
		sock_reset(fd);
		return NULL;
	case END_CLOSE:
		break;
	case END_LATE_ANSWER:
		while (!__atomic_load_n(&s->client_gone, __ATOMIC_ACQUIRE))
			sleep_ms(5);
		sleep_ms(50);
		sock_send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
		break;
	}
	close(fd);
	return NULL;
}

/* One exchange that fails the given way; returns the server's port. */
static int failing_exchange(enum server_end how)
{
	struct fail_server s = { .how = how };
	pthread_t th;
	char buf[512];
	int port, fd;

	s.lfd = sock_listen(&port);
	if (s.lfd < 0)
		return -1;
	pthread_create(&th, NULL, fail_server_main, &s);
	fd = sock_connect(port);
	if (fd >= 0) {
		sock_send(fd, "GET /doomed HTTP/1.1\r\nHost: x\r\n\r\n");
		if (how == END_LATE_ANSWER) {
			sleep_ms(50);
			close(fd); /* the caller gives up */
			__atomic_store_n(&s.client_gone, 1, __ATOMIC_RELEASE);
		} else {
			sock_recv_until(fd, buf, sizeof(buf), "\r\n\r\n", 512);
			close(fd);
		}
	}
	pthread_join(th, NULL);
	close(s.lfd);
	return port;
}

static void check_failed_call(struct json_object *calls, bool connect_failed, const char *what)
{
	struct json_object *eg;
	char name[96];

	snprintf(name, sizeof(name), "%s: one call", what);
	if (!ASSERT_EQ(json_object_array_length(calls), 1, name))
		return;
	eg = j_get(json_object_array_get_idx(calls, 0), "egress");
	snprintf(name, sizeof(name), "%s: status 0", what);
	ASSERT_EQ(j_int(eg, "status"), 0, name);
	snprintf(name, sizeof(name), "%s: failed", what);
	ASSERT_TRUE(j_bool(eg, "failed") && j_bool(eg, "transport_failure"), name);
	snprintf(name, sizeof(name), "%s: connect failure", what);
	ASSERT_EQ(j_bool(eg, "connect_failed"), connect_failed, name);
}

static void check_failed_ingress(struct json_object *in, const char *what)
{
	struct json_object *o, *flags;
	char name[96];

	snprintf(name, sizeof(name), "%s: one ingress", what);
	if (!ASSERT_EQ(json_object_array_length(in), 1, name))
		return;
	o = json_object_array_get_idx(in, 0);
	flags = j_get(o, "flags");
	snprintf(name, sizeof(name), "%s: ingress status 0", what);
	ASSERT_EQ(j_int(o, "status"), 0, name);
	snprintf(name, sizeof(name), "%s: flagged closed", what);
	ASSERT_TRUE(flags && json_object_array_length(flags) == 1 &&
			    !strcmp(json_object_get_string(json_object_array_get_idx(flags, 0)),
				    "closed-before-response"),
		    name);
}

static int refused_nonblocking(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct pollfd p;
	int fd, err = 0;
	socklen_t len = sizeof(err);

	sa.sin_addr.s_addr = htonl(0x7f000001);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	p.fd = fd;
	p.events = POLLOUT;
	poll(&p, 1, 5000);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
	close(fd);
	return err;
}

void test_transport_failures(void)
{
	struct json_object *in, *out;
	struct env e;
	int port;

	if (!env_up(&e))
		goto done;
	if (test__start_subtest("refused")) {
		port = sock_free_port();
		ASSERT_LT(sock_connect(port), 0, "connect refused");
		out = lines_for(&e, "egress", port, 1);
		check_failed_call(out, true, "refused");
		json_object_put(out);
	}
	if (test__start_subtest("refused_nonblocking")) {
		port = sock_free_port();
		ASSERT_EQ(refused_nonblocking(port), ECONNREFUSED, "SO_ERROR");
		out = lines_for(&e, "egress", port, 1);
		check_failed_call(out, true, "refused, non-blocking");
		json_object_put(out);
	}
	if (test__start_subtest("reset")) {
		port = failing_exchange(END_RESET);
		out = lines_for(&e, "egress", port, 1);
		in = lines_for(&e, "ingress", port, 1);
		check_failed_call(out, false, "reset");
		check_failed_ingress(in, "reset");
		check_own_failures(in, 1, "reset");
		json_object_put(out);
		json_object_put(in);
	}
	if (test__start_subtest("closed_before_response")) {
		port = failing_exchange(END_CLOSE);
		out = lines_for(&e, "egress", port, 1);
		in = lines_for(&e, "ingress", port, 1);
		check_failed_call(out, false, "closed");
		check_failed_ingress(in, "closed");
		check_own_failures(in, 1, "closed");
		json_object_put(out);
		json_object_put(in);
	}
	if (test__start_subtest("caller_gives_up")) {
		port = failing_exchange(END_LATE_ANSWER);
		out = lines_for(&e, "egress", port, 1);
		in = lines_for(&e, "ingress", port, 1);
		check_failed_call(out, false, "gave up");
		/* The service did answer, after its client had left. */
		if (ASSERT_EQ(json_object_array_length(in), 1, "late answer: one ingress"))
			ASSERT_EQ(j_int(json_object_array_get_idx(in, 0), "status"), 200,
				  "late answer: its status");
		check_own_failures(in, 0, "gave up");
		json_object_put(out);
		json_object_put(in);
	}
done:
	env_down(&e);
}
