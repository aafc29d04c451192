// SPDX-License-Identifier: GPL-2.0
/*
 * End to end, with real processes: three Python ThreadingHTTPServer services
 * A -> B -> C on loopback, C failing a known subset of requests with 503 (B
 * and A answer 502), driven by a client with 8 threads of 200 requests.
 * claimctl trace must report every ingress of each service exactly once,
 * each with exactly its own egress, and the exact statuses: an egress
 * attributed to the wrong ingress shows up as a status that does not follow
 * from its egress, or as an egress outside its ingress's interval.
 * The keep-alive variant opens every connection before claimd starts; the
 * TLS variant speaks HTTPS on every hop (certificates made by the test), and
 * must give the same edges, statuses and verdicts. Every failure's verdict
 * is checked against the truth: claimed at C, unclaimed above, caused one
 * hop down. The chain, its client and claimd run in a cgroup of the test's
 * own, which claimd follows alone (--cgroup): the kernel's counts it checks
 * are theirs, whatever else the host runs.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "harness.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"

#define THREADS	 8
#define FAIL_MOD 7
#define FAIL_REM 3

static const char *const names[3] = { "A", "B", "C" };

struct chain {
	char dir[H_DIR];
	pid_t svc[3];
	int port[3];
	pid_t client;
	char summary[H_PATH];
	bool keepalive;
	bool tls;
	int requests; /* per client thread */
	char cert[H_PATH], key[H_PATH];
};

static int total(const struct chain *c)
{
	return THREADS * c->requests;
}

static int expected_failures(const struct chain *c)
{
	int id, n = 0;

	for (id = 0; id < total(c); id++)
		n += id % FAIL_MOD == FAIL_REM;
	return n;
}

/* A self-signed certificate for 127.0.0.1, for every hop. */
static int make_cert(struct chain *c)
{
	snprintf(c->cert, sizeof(c->cert), "%s/cert.pem", c->dir);
	snprintf(c->key, sizeof(c->key), "%s/key.pem", c->dir);
	return tls_cert_make(c->cert, c->key);
}

static int chain_start(struct chain *c)
{
	char script[H_PATH], ready[H_PATH], log[H_PATH], buf[64], env[32], down[64];
	char fail_mod[8], fail_rem[8], tls[2 * H_PATH + 2];
	int i;

	if (c->tls && make_cert(c))
		return -1;
	snprintf(tls, sizeof(tls), "%s,%s", c->cert, c->key);

	peer_script("chain_service.py", script, sizeof(script));
	snprintf(fail_mod, sizeof(fail_mod), "%d", FAIL_MOD);
	snprintf(fail_rem, sizeof(fail_rem), "%d", FAIL_REM);
	for (i = 2; i >= 0; i--) {
		const char *argv[16] = { "python3", script, "--ready-file", ready };
		const char *envv[] = { env, NULL };
		int n = 4;

		snprintf(ready, sizeof(ready), "%s/ready.%s", c->dir, names[i]);
		snprintf(log, sizeof(log), "%s/svc.%s.log", c->dir, names[i]);
		snprintf(env, sizeof(env), "CLAIMD_SERVICE=%s", names[i]);
		if (i < 2) {
			snprintf(down, sizeof(down), "127.0.0.1:%d", c->port[i + 1]);
			argv[n++] = "--downstream";
			argv[n++] = down;
		} else {
			argv[n++] = "--fail-mod";
			argv[n++] = fail_mod;
			argv[n++] = "--fail-rem";
			argv[n++] = fail_rem;
		}
		if (c->keepalive)
			argv[n++] = "--keepalive";
		if (c->tls) {
			argv[n++] = "--tls";
			argv[n++] = tls;
			if (i < 2) {
				argv[n++] = "--downstream-tls";
				argv[n++] = c->cert;
			}
		}
		argv[n] = NULL;
		c->svc[i] = proc_spawn(argv, envv, log);
		if (!ASSERT_GT(c->svc[i], 0, "spawn service") ||
		    !ASSERT_OK(wait_file(ready, 10000), "service ready") ||
		    !ASSERT_GT(read_file(ready, buf, sizeof(buf)), 0, "read port"))
			return -1;
		c->port[i] = atoi(buf);
	}
	return 0;
}

static void chain_stop(struct chain *c)
{
	int i;

	if (c->client > 0)
		proc_stop(c->client, 1000);
	for (i = 0; i < 3; i++)
		if (c->svc[i] > 0)
			proc_stop(c->svc[i], 2000);
}

static pid_t client_start(struct chain *c, const char *warm, const char *go)
{
	char script[H_PATH], port[16], threads[8], requests[8];
	const char *argv[20] = { "python3",    script,	 "--port", port,       "--threads", threads,
				 "--requests", requests, "--out",  c->summary, NULL };
	int n = 10;

	peer_script("load_client.py", script, sizeof(script));
	snprintf(port, sizeof(port), "%d", c->port[0]);
	snprintf(threads, sizeof(threads), "%d", THREADS);
	snprintf(requests, sizeof(requests), "%d", c->requests);
	snprintf(c->summary, sizeof(c->summary), "%s/client.json", c->dir);
	if (c->tls) {
		argv[n++] = "--tls";
		argv[n++] = c->cert;
	}
	if (c->keepalive) {
		argv[n++] = "--keepalive";
		argv[n++] = "--warm-file";
		argv[n++] = warm;
		argv[n++] = "--go-file";
		argv[n++] = go;
	}
	argv[n] = NULL;
	return proc_spawn(argv, NULL, NULL);
}

struct match_ctx {
	pid_t pid;
	const char *type;
};

static bool match_pid_type(struct json_object *o, void *arg)
{
	struct match_ctx *m = arg;

	return j_int(o, "pid") == m->pid && !strcmp(j_str(o, "type"), m->type);
}

/* Checks one service's ingresses; returns how many failed. */
static int check_service(struct json_object *all, const struct chain *c, int i)
{
	const char *callee = i < 2 ? names[i + 1] : NULL;
	int seen = 0, failed = 0, bad_egress = 0, bad_status = 0, bad_time = 0, flagged = 0;
	size_t k, len = json_object_array_length(all);
	char what[64];

	for (k = 0; k < len; k++) {
		struct json_object *o = json_object_array_get_idx(all, k), *eg, *e;
		long long status;

		if (j_int(o, "pid") != c->svc[i] || strcmp(j_str(o, "type"), "ingress"))
			continue;
		seen++;
		status = j_int(o, "status");
		failed += status >= 500;
		if (json_object_array_length(j_get(o, "flags")))
			flagged++;
		if (strcmp(j_str(o, "service"), names[i]) || strcmp(j_str(o, "method"), "GET"))
			bad_status++;
		eg = j_get(o, "egress");
		if (!callee) {
			bad_egress += json_object_array_length(eg) != 0;
			bad_status += status != 200 && status != 503;
			continue;
		}
		if (json_object_array_length(eg) != 1) {
			bad_egress++;
			continue;
		}
		e = json_object_array_get_idx(eg, 0);
		bad_egress += strcmp(j_str(e, "callee"), callee) != 0;
		/* A service answers 502 exactly when its own call failed. */
		bad_status += (status == 502) != (j_int(e, "status") >= 500) ||
			      (status != 200 && status != 502);
		bad_time += j_int(e, "start_ns") < j_int(o, "start_ns") ||
			    j_int(e, "end_ns") > j_int(o, "end_ns") ||
			    j_int(e, "end_ns") < j_int(e, "start_ns");
	}
	snprintf(what, sizeof(what), "%s: ingresses reported", names[i]);
	ASSERT_EQ(seen, total(c), what);
	snprintf(what, sizeof(what), "%s: failed ingresses", names[i]);
	ASSERT_EQ(failed, expected_failures(c), what);
	snprintf(what, sizeof(what), "%s: ingresses without exactly their egress", names[i]);
	ASSERT_EQ(bad_egress, 0, what);
	snprintf(what, sizeof(what), "%s: statuses not following from the egress", names[i]);
	ASSERT_EQ(bad_status, 0, what);
	snprintf(what, sizeof(what), "%s: egress outside its ingress", names[i]);
	ASSERT_EQ(bad_time, 0, what);
	snprintf(what, sizeof(what), "%s: ingresses flagged", names[i]);
	ASSERT_EQ(flagged, 0, what);
	return failed;
}

static void check_client(struct json_object *all, const struct chain *c)
{
	static char buf[1 << 20];
	struct json_object *summary, *statuses;
	size_t k, len = json_object_array_length(all);
	int roots = 0, roots_failed = 0, client_failed = 0, wrong_callee = 0;

	for (k = 0; k < len; k++) {
		struct json_object *o = json_object_array_get_idx(all, k), *e;

		if (j_int(o, "pid") != c->client || strcmp(j_str(o, "type"), "egress"))
			continue;
		roots++;
		e = j_get(o, "egress");
		roots_failed += j_int(e, "status") >= 500;
		wrong_callee += strcmp(j_str(e, "callee"), "A") != 0;
	}
	ASSERT_EQ(roots, total(c), "client: calls reported");
	ASSERT_EQ(wrong_callee, 0, "client: calls to A");
	if (!ASSERT_GT(read_file(c->summary, buf, sizeof(buf)), 0, "client summary"))
		return;
	summary = json_tokener_parse(buf);
	statuses = j_get(summary, "statuses");
	json_object_object_foreach(statuses, id, st) {
		(void)id;
		client_failed += json_object_get_int(st) != 200;
	}
	ASSERT_EQ(j_int(summary, "sent"), total(c), "client: requests sent");
	ASSERT_EQ(client_failed, expected_failures(c), "client: failures it saw");
	ASSERT_EQ(roots_failed, client_failed, "client: failures claimd saw");
	json_object_put(summary);
}

/* C's failures are its own; B and A pass them up, each caused one hop down. */
static void check_verdicts(struct json_object *all, const struct chain *c)
{
	const struct truth_svc shape = {
		.target = "/r/%d", .ids = total(c), .mod = FAIL_MOD, .rem = FAIL_REM
	};
	struct truth_tally t = { 0 };
	struct truth_svc s[3];

	truth__chain(s, 3, &shape, c->svc, names);
	truth__tally_services(&t, all, s, 3);
	truth__expect(&t, "chain", 3 * expected_failures(c), 0);
}

static void check_kernel_counters(struct claimd_h *h)
{
	const char *args[] = { "status", NULL };
	struct json_object *st = claimctl_json(h, args), *k = j_get(st, "kernel");

	ASSERT_TRUE(k != NULL, "status");
	ASSERT_EQ(j_int(k, "ringbuf_drops"), 0, "ring buffer drops");
	ASSERT_EQ(j_int(k, "parse_errors"), 0, "parse errors");
	ASSERT_EQ(j_int(k, "thread_table_full"), 0, "thread table full");
	json_object_put(st);
}

/* A service and a caller holding a connection to it open, outside the test's cgroup. */
struct outsider {
	struct svc svc;
	pid_t caller;
};

static bool outsider_start(struct outsider *o, const char *dir)
{
	char code[H_PATH + 256], ready[H_PATH];
	const char *argv[] = { "python3", "-c", code, NULL };

	if (!ASSERT_OK(svc_start(&o->svc, &(struct svc_spec){ .name = "outside" }, dir),
		       "a service outside the cgroup"))
		return false;
	snprintf(ready, sizeof(ready), "%s/outside-caller", dir);
	snprintf(code, sizeof(code),
		 "import socket, time\n"
		 "s = socket.create_connection(('127.0.0.1', %d))\n"
		 "s.sendall(b'GET /r/1 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'); s.recv(4096)\n"
		 "open('%s', 'w').write('up')\n"
		 "time.sleep(120)\n",
		 o->svc.port, ready);
	o->caller = proc_spawn(argv, NULL, NULL);
	return ASSERT_GT(o->caller, 0, "its caller") &&
	       ASSERT_OK(wait_file(ready, 10000), "its connection open");
}

static void outsider_stop(struct outsider *o)
{
	if (o->caller > 0)
		proc_stop(o->caller, 1000);
	if (o->svc.pid > 0)
		svc_stop(&o->svc);
}

static void run_chain(bool keepalive, bool tls, int requests)
{
	struct chain c = { .keepalive = keepalive, .tls = tls, .requests = requests };
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct test_cgroup cg = { 0 };
	struct outsider outside = { 0 };
	struct json_object *all = NULL;
	char warm[H_PATH], go[H_PATH];
	const char *only[] = { "--cgroup", cg.dir, NULL };
	pid_t client_pid = 0;
	int i;

	if (!test__need_root())
		return;
	if (!ASSERT_OK(tmpdir_make(c.dir, sizeof(c.dir)), "tmpdir"))
		return;
	/*
	 * Keep-alive: a service and a caller outside the cgroup, their
	 * connection open when claimd starts: not seeded, not followed.
	 */
	if (keepalive && !outsider_start(&outside, c.dir))
		goto out;
	if (!ASSERT_OK(test_cgroup_enter(&cg), "a cgroup of its own"))
		goto out;
	snprintf(h.dir, sizeof(h.dir), "%s", c.dir);
	snprintf(warm, sizeof(warm), "%s/warm", c.dir);
	snprintf(go, sizeof(go), "%s/go", c.dir);

	if (!keepalive && !ASSERT_OK(claimd_start(&h, only), "claimd start"))
		goto out;
	if (chain_start(&c))
		goto out;
	if (keepalive) {
		/* Every connection exists, idle, before claimd looks. */
		c.client = client_start(&c, warm, go);
		if (!ASSERT_OK(wait_file(warm, 20000), "client warmed up"))
			goto out;
		if (!ASSERT_OK(claimd_start(&h, only), "claimd start"))
			goto out;
		if (!ASSERT_OK(trace_start(&t, &h), "trace"))
			goto out;
		write_file(go, "go\n");
	} else {
		if (!ASSERT_OK(trace_start(&t, &h), "trace"))
			goto out;
		c.client = client_start(&c, NULL, NULL);
	}
	if (!ASSERT_GT(c.client, 0, "client") ||
	    !ASSERT_EQ(proc_wait(c.client, 120000), 0, "client finished"))
		goto out;
	client_pid = c.client;
	c.client = 0; /* reaped: nothing to stop */
	for (i = 0; i < 3; i++) {
		struct match_ctx m = { c.svc[i], "ingress" };

		trace_wait(&t, match_pid_type, &m, total(&c), 20000);
	}
	{
		struct match_ctx m = { client_pid, "egress" };

		trace_wait(&t, match_pid_type, &m, total(&c), 20000);
	}
	sleep_ms(300); /* anything invented would arrive by now */
	trace_stop(&t);
	all = trace_read(&t);
	for (i = 0; i < 3; i++)
		check_service(all, &c, i);
	check_verdicts(all, &c);
	c.client = client_pid;
	check_client(all, &c);
	c.client = 0;
	check_kernel_counters(&h);
	if (tls) {
		const char *args[] = { "status", NULL };
		struct json_object *st = claimctl_json(&h, args), *k = j_get(st, "kernel");

		/* Every connection of the run carried TLS, and no call lost its socket. */
		ASSERT_GE(j_int(k, "tls_connections"), 3 * total(&c), "TLS connections seen");
		ASSERT_EQ(j_int(k, "tls_calls_without_socket"), 0, "SSL calls tied to sockets");
		json_object_put(st);
	}
	if (keepalive) {
		const char *args[] = { "status", NULL };
		struct json_object *st = claimctl_json(&h, args), *s = j_get(st, "seeded");

		/* client->A, A->B, B->C: 8 each, seen from both ends; none of the outsider's */
		printf("seeded: %lld inbound, %lld outbound, %lld listeners\n", j_int(s, "inbound"),
		       j_int(s, "outbound"), j_int(s, "listeners"));
		ASSERT_EQ(j_int(s, "inbound"), 3 * THREADS, "seeded inbound connections");
		ASSERT_EQ(j_int(s, "outbound"), 3 * THREADS, "seeded outbound connections");
		ASSERT_EQ(j_int(s, "listeners"), 3, "seeded listeners: the chain's");
		json_object_put(st);
	}
out:
	if (test__failed_now())
		claimd_print_log(&h);
	json_object_put(all);
	trace_stop(&t);
	chain_stop(&c);
	claimd_stop(&h);
	test_cgroup_leave(&cg);
	outsider_stop(&outside);
	tmpdir_remove(c.dir);
}

void test_chain_trace(void)
{
	run_chain(false, false, 200);
}

void test_chain_keepalive(void)
{
	run_chain(true, false, 200);
}

/* HTTPS on every hop: plaintext from the SSL_* probes, the same answers. */
void test_chain_tls(void)
{
	run_chain(false, true, 100);
}
