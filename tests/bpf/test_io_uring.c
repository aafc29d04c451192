// SPDX-License-Identifier: GPL-2.0
/*
 * A front whose calls go through io_uring (tests/peers/uring_front.c: its
 * requests read and answered by plain syscalls, each call's connect, send
 * and receive io_uring operations), in front of a backend that fails every
 * fifth request. claimd frames no io_uring operation: the calls are not
 * seen. Each failure the front passes up (502) is unknown (untied-call),
 * its process's io_uring I/O counted (socket_io_unseen), never claimed for
 * want of a failed call; the backend's own are claimed.
 */
#include <stdio.h>

#include "harness.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"

#define REQUESTS 20
#define FAIL_MOD 5

void test_io_uring(void)
{
	char dir[H_DIR] = "", exe[H_PATH], ready[H_PATH], log[H_PATH], down[16];
	const char *argv[] = { exe, "-d", down, "-r", ready, NULL };
	const char *env[] = { "CLAIMD_SERVICE=ur-front", NULL };
	struct svc_spec be_spec = { .name = "ur-be", .fail_mod = FAIL_MOD };
	const struct truth_svc shape = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	const char *const names[2] = { "ur-front", "ur-be" };
	struct truth_tally tally = { 0 };
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct truth_svc truth[2];
	struct svc be = { 0 };
	pid_t front = -1, pids[2];
	int port;

	if (!test__need_root() || !ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "directory"))
		return;
	snprintf(exe, sizeof(exe), "%s/tests/uring_front", test__build_dir());
	snprintf(ready, sizeof(ready), "%s/ready.uring", dir);
	snprintf(log, sizeof(log), "%s/uring.log", dir);
	if (claimd_traced_start(&h, &t, NULL) ||
	    !ASSERT_OK(svc_start(&be, &be_spec, dir), "backend"))
		goto out;
	snprintf(down, sizeof(down), "%d", be.port);
	front = proc_spawn(argv, env, log);
	port = front > 0 ? wait_ready_port(ready, 20000) : -1;
	if (!ASSERT_GT(port, 0, "the io_uring front"))
		goto out;
	ASSERT_EQ(svc_drive(port, REQUESTS), REQUESTS / FAIL_MOD,
		  "the backend's failures, passed up");
	pids[0] = front;
	pids[1] = be.pid;
	truth__chain(truth, 2, &shape, pids, names);
	truth__tally_trace(&tally, &t, 0, truth, 2, 2 * REQUESTS / FAIL_MOD);
	/* The backend's right; the front's unknown: its calls unseen, none claimed. */
	truth__expect(&tally, "calls through io_uring", REQUESTS / FAIL_MOD, REQUESTS / FAIL_MOD);
	ASSERT_GE(claimd_status_count(&h, "socket_io_unseen", true), REQUESTS,
		  "the front's io_uring sends and receives, counted");
out:
	if (front > 0) {
		if (test__failed_now())
			file_print("the front's log", log);
		proc_stop(front, 2000);
	}
	svc_stop(&be);
	claimd_traced_stop(&h, &t);
	tmpdir_remove(dir);
}
