// SPDX-License-Identifier: GPL-2.0
/*
 * Dependencies that lie, over a socket file (tests/peers/wire_liar.py),
 * to a traced service that speaks their protocols byte for byte
 * (tests/peers/wire_caller.py): RESP junk, a RESP bulk of 2^40 bytes, a
 * reset in the middle of a reply, a PostgreSQL message whose length is
 * less than its length field, a MySQL packet that announces 16 MiB and
 * ends. claimd follows only the service (--pid), so its kernel counters
 * move only with what a subtest does, and are checked exactly: every
 * connection told, every lie a framing lost where the framer can see it.
 * Every request fails because of its dependency: unclaimed or unknown,
 * never claimed. After each lie, well-formed answers on new connections
 * are framed and counted in full, and claimd answers throughout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"

#define REQUESTS 5

struct scenario {
	const char *name;  /* wire_liar.py --scenario */
	const char *proto; /* wire_caller.py's path: /<proto>/<id> */
	const char *honest;
	bool lost; /* the framer sees the lie: the connection's framing is lost */
};

static const struct scenario scenarios[] = {
	{ "redis_junk", "redis", "redis_ok", true },
	{ "redis_bulk_2e40", "redis", "redis_ok", true },
	{ "redis_reset", "redis", "redis_ok", false },
	{ "pg_lie", "pg", "pg_ok", true },
	{ "mysql_lie", "mysql", "mysql_ok", false },
};

struct env {
	struct claimd_h h;
	struct trace_cap t;
	pid_t caller;
	int port;
	char sock[H_PATH];
};

enum { K_CONNS, K_CALLS, K_LOST, K_COUNT };
static const char *const kernel_names[K_COUNT] = { "dependency_connections", "dependency_calls",
						   "dependency_framing_lost" };

/* The dependency counters now; false if claimd did not answer. */
static bool counters(const struct env *e, long long v[K_COUNT])
{
	const char *args[] = { "status", NULL };
	struct json_object *st = claimctl_json(&e->h, args), *k = j_get(st, "kernel");
	int i;

	for (i = 0; i < K_COUNT; i++)
		v[i] = j_int(k, kernel_names[i]);
	json_object_put(st);
	return ASSERT_OK_PTR(k, "claimd answers claimctl status");
}

/* The liar, as scenario says, on e->sock; its pid, or -1. */
static pid_t liar_start(const struct env *e, const char *scenario)
{
	char script[H_PATH], ready[H_PATH], log[H_PATH];
	const char *argv[] = {
		"/usr/bin/python3", script,	    "--listen", e->sock, "--scenario",
		scenario,	    "--ready-file", ready,	NULL
	};
	pid_t pid;

	peer_script("wire_liar.py", script, sizeof(script));
	snprintf(ready, sizeof(ready), "%s/liar.ready", e->h.dir);
	snprintf(log, sizeof(log), "%s/liar.%s.log", e->h.dir, scenario);
	unlink(ready);
	pid = proc_spawn(argv, NULL, log);
	if (pid <= 0 || wait_file(ready, 10000)) {
		printf("wire_liar.py %s did not start (log %s)\n", scenario, log);
		return -1;
	}
	return pid;
}

/* REQUESTS requests /<proto>/<id> from id on: how many answered 200. */
static int drive(const struct env *e, const char *proto, int id)
{
	int i, ok = 0;

	for (i = 0; i < REQUESTS; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/%s/%d", proto, id + i);
		ok += http_get(e->port, path) == 200;
	}
	return ok;
}

static void run(struct env *e, const struct scenario *sc, int *next_id)
{
	char target[64];
	struct truth_svc truth = { .pid = e->caller,
				   .service = "wcaller",
				   .verdict = "unclaimed",
				   .target = target,
				   .ids = 1000 };
	struct truth_tally tally = { 0 };
	long long a[K_COUNT], b[K_COUNT], c[K_COUNT];
	size_t mark = trace_mark(&e->t);
	pid_t liar = liar_start(e, sc->name), honest = -1;

	snprintf(target, sizeof(target), "/%s/%%d", sc->proto);
	if (!ASSERT_GT(liar, 0, "the lying dependency") || !counters(e, a))
		goto out;
	ASSERT_EQ(drive(e, sc->proto, *next_id), 0, "every request failed");
	*next_id += REQUESTS;
	/* Every failure is the dependency's: unclaimed or unknown, never claimed. */
	truth__tally_trace(&tally, &e->t, mark, &truth, 1, REQUESTS);
	truth__expect(&tally, sc->name, -1, -1);
	if (!counters(e, b))
		goto out;
	printf("%s: connections told +%lld, calls +%lld, framing lost +%lld\n", sc->name,
	       b[K_CONNS] - a[K_CONNS], b[K_CALLS] - a[K_CALLS], b[K_LOST] - a[K_LOST]);
	ASSERT_EQ(b[K_CONNS] - a[K_CONNS], REQUESTS, "each connection told what it speaks");
	ASSERT_EQ(b[K_LOST] - a[K_LOST], sc->lost ? REQUESTS : 0, "framing lost, counted");
	proc_stop(liar, 3000);
	liar = -1;

	/* Nothing lost after it: honest answers on new connections, each call framed. */
	honest = liar_start(e, sc->honest);
	if (!ASSERT_GT(honest, 0, "the honest dependency"))
		goto out;
	ASSERT_EQ(drive(e, sc->proto, *next_id), REQUESTS, "every request answered");
	*next_id += REQUESTS;
	sleep_ms(300);
	if (!counters(e, c))
		goto out;
	ASSERT_EQ(c[K_CALLS] - b[K_CALLS], REQUESTS, "then every call framed");
	ASSERT_EQ(c[K_LOST] - b[K_LOST], 0, "and none lost");
out:
	if (liar > 0)
		proc_stop(liar, 3000);
	if (honest > 0)
		proc_stop(honest, 3000);
	unlink(e->sock);
}

void test_hostile_dependencies(void)
{
	struct env e = { 0 };
	char script[H_PATH], ready[H_PATH], log[H_PATH], pid[16], buf[32];
	const char *extra[] = { "--pid", pid, "--metrics", "none", NULL };
	const char *argv[] = { "/usr/bin/python3", script, "--dep", e.sock,
			       "--ready-file",	   ready,  NULL };
	const char *env[] = { "CLAIMD_SERVICE=wcaller", NULL };
	int next_id = 0;
	size_t i;

	if (!test__need_root())
		return;
	if (!ASSERT_OK(tmpdir_make(e.h.dir, sizeof(e.h.dir)), "tmpdir"))
		return;
	snprintf(e.sock, sizeof(e.sock), "%s/liar.sock", e.h.dir);
	peer_script("wire_caller.py", script, sizeof(script));
	snprintf(ready, sizeof(ready), "%s/caller.ready", e.h.dir);
	snprintf(log, sizeof(log), "%s/caller.log", e.h.dir);
	e.caller = proc_spawn(argv, env, log);
	if (!ASSERT_GT(e.caller, 0, "caller") || !ASSERT_OK(wait_file(ready, 10000), "caller up") ||
	    !ASSERT_GT(read_file(ready, buf, sizeof(buf)), 0, "its port"))
		goto out;
	e.port = atoi(buf);
	snprintf(pid, sizeof(pid), "%d", e.caller);
	if (claimd_traced_start(&e.h, &e.t, extra))
		goto out;
	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (test__start_subtest(scenarios[i].name))
			run(&e, &scenarios[i], &next_id);
	if (test__start_subtest("claimd_still_up")) {
		long long v[K_COUNT];

		counters(&e, v);
	}
out:
	if (e.caller > 0)
		proc_stop(e.caller, 5000);
	claimd_traced_stop(&e.h, &e.t);
}
