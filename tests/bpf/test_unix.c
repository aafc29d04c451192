// SPDX-License-Identifier: GPL-2.0
/*
 * Dependencies over socket files (Unix stream sockets), followed as TCP
 * ones (bpf/unixsock.c): a service listening on a socket file only,
 * behind nginx; a threaded service calling its backend over one; a
 * service whose dependency speaks another protocol than HTTP over one.
 * Each compares claimd's verdicts with the truth the test knows: the
 * backend fails every fifth request on its own, its callers pass that up.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "edge_expect.h"
#include "harness.h"
#include "nginx.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"

#define REQUESTS 100
#define FAIL_MOD 5

/*
 * The verdicts of the two services of a chain (front passes up back's
 * failures, back fails every fifth request on its own) from mark on.
 */
static void check_chain(const struct trace_cap *t, size_t mark, const char *front, pid_t front_pid,
			const char *back, pid_t back_pid, int unknown)
{
	const struct truth_svc shape = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	const pid_t pids[2] = { front_pid, back_pid };
	const char *const names[2] = { front, back };
	struct truth_tally tally = { 0 };
	struct truth_svc truth[2];
	int fails = REQUESTS / FAIL_MOD;

	truth__chain(truth, 2, &shape, pids, names);
	truth__tally_trace(&tally, t, mark, truth, 2, 2 * fails);
	truth__expect(&tally, front, 2 * fails - unknown, unknown);
}

/* A service on a socket file only, behind nginx on TCP (proxy_pass http://unix:...). */
static void behind_nginx(struct claimd_h *h, struct trace_cap *t)
{
	char dir[64], sock[H_PATH], bind[H_PATH + 8], loc[H_PATH + 64];
	struct svc back = { 0 };
	struct ngx n = { 0 };
	size_t mark = trace_mark(t);

	/* nginx's worker runs as nobody: the socket file where it may reach it. */
	snprintf(dir, sizeof(dir), "/tmp/claimd-test-%d-unix", getpid());
	snprintf(sock, sizeof(sock), "%s/ub.sock", dir);
	snprintf(bind, sizeof(bind), "unix:%s", sock);
	snprintf(loc, sizeof(loc), "location / { proxy_pass http://unix:%s:; }\n", sock);
	if (!ASSERT_OK(mkdir(dir, 0755), "socket directory"))
		return;
	if (!ASSERT_OK(svc_start(&back,
				 &(struct svc_spec){
					 .name = "ub", .bind = bind, .fail_mod = FAIL_MOD },
				 h->dir),
		       "backend on a socket file") ||
	    !ASSERT_OK(chmod(sock, 0666), "socket file open to nginx's worker") ||
	    !ASSERT_OK(nginx_start(&n, h->dir, "unx", loc), "nginx in front"))
		goto out;
	ASSERT_EQ(svc_drive(n.port, REQUESTS), REQUESTS / FAIL_MOD,
		  "behind_nginx: failures the client saw");
	edge_expect(h, n.name, "ub",
		    &(struct edge_want){ REQUESTS, REQUESTS / FAIL_MOD, REQUESTS / FAIL_MOD,
					 "fail-close" },
		    "behind_nginx");
	check_chain(t, mark, n.name, 0, "ub", back.pid, 0);
out:
	nginx_stop(&n);
	svc_stop(&back);
	unlink(sock);
	rmdir(dir);
}

/* A threaded Python service calling its backend over a socket file, its connection kept. */
static void service_calls_unix(struct claimd_h *h, struct trace_cap *t)
{
	char sock[H_PATH], bind[H_PATH + 8];
	struct svc back = { 0 }, front = { 0 };
	size_t mark = trace_mark(t);

	snprintf(sock, sizeof(sock), "%s/ub2.sock", h->dir);
	snprintf(bind, sizeof(bind), "unix:%s", sock);
	if (!ASSERT_OK(svc_start(&back,
				 &(struct svc_spec){ .name = "ub2",
						     .bind = bind,
						     .fail_mod = FAIL_MOD,
						     .keepalive = true },
				 h->dir),
		       "backend on a socket file") ||
	    !ASSERT_OK(svc_start(&front,
				 &(struct svc_spec){
					 .name = "uf2", .down_unix = sock, .keepalive = true },
				 h->dir),
		       "front"))
		goto out;
	ASSERT_EQ(svc_drive(front.port, REQUESTS), REQUESTS / FAIL_MOD,
		  "service_calls_unix: failures seen");
	edge_expect(h, "uf2", "ub2",
		    &(struct edge_want){ REQUESTS, REQUESTS / FAIL_MOD, REQUESTS / FAIL_MOD,
					 "fail-close" },
		    "service_calls_unix");
	check_chain(t, mark, "uf2", front.pid, "ub2", back.pid, 0);
out:
	svc_stop(&front);
	svc_stop(&back);
	unlink(sock);
}

/*
 * A service whose dependency speaks a line protocol (a key-value store)
 * over a socket file, and fails every fifth request: the service passes
 * the failure up (502). Not HTTP, its calls are not judged: the service's
 * failures are unknown (opaque-call), never claimed; the store serves
 * nothing claimd frames.
 */
static void opaque_over_unix(struct claimd_h *h, struct trace_cap *t)
{
	const struct truth_svc truth = { .service = "ukf",
					 .verdict = "unclaimed",
					 .target = "/r/%d",
					 .ids = REQUESTS,
					 .mod = FAIL_MOD };
	char sock[H_PATH], bind[H_PATH + 8];
	struct svc kv = { 0 }, front = { 0 };
	struct truth_tally tally = { 0 };
	size_t mark = trace_mark(t);
	struct truth_svc want = truth;

	snprintf(sock, sizeof(sock), "%s/ukv.sock", h->dir);
	snprintf(bind, sizeof(bind), "unix:%s", sock);
	if (!ASSERT_OK(svc_start(&kv,
				 &(struct svc_spec){ .name = "ukv",
						     .bind = bind,
						     .kv_store = true,
						     .fail_mod = FAIL_MOD },
				 h->dir),
		       "store on a socket file") ||
	    !ASSERT_OK(
		    svc_start(&front, &(struct svc_spec){ .name = "ukf", .kv_unix = sock }, h->dir),
		    "front"))
		goto out;
	want.pid = front.pid;
	ASSERT_EQ(svc_drive(front.port, REQUESTS), REQUESTS / FAIL_MOD,
		  "opaque_over_unix: failures seen");
	truth__tally_trace(&tally, t, mark, &want, 1, REQUESTS / FAIL_MOD);
	truth__expect(&tally, "ukf", 0, REQUESTS / FAIL_MOD);
out:
	svc_stop(&front);
	svc_stop(&kv);
	unlink(sock);
}

void test_unix_sockets(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };

	if (!test__need_root())
		return;
	if (claimd_traced_start(&h, &t, NULL))
		goto out;
	if (test__start_subtest("behind_nginx"))
		behind_nginx(&h, &t);
	if (test__start_subtest("service_calls_unix"))
		service_calls_unix(&h, &t);
	if (test__start_subtest("opaque_over_unix"))
		opaque_over_unix(&h, &t);
out:
	claimd_traced_stop(&h, &t);
}
