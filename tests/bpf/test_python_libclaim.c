// SPDX-License-Identifier: GPL-2.0
/*
 * libclaim for Python (python/libclaim) where services live: a Flask
 * service with ClaimMiddleware (werkzeug's threaded server, requests to its
 * backend) writes x-error-claim from claimd's verdicts, and a client whose
 * requests retry through ClaimRetry reads it. The backend fails every
 * fifth id on its own (id % 5 == 0), which Flask passes up as 502; Flask
 * fails ids % 5 == 1 on its own (500), before calling.
 *
 * What must hold: the passed-up failures say unclaimed and are tried once,
 * so the failing backend sees each call once (its edge 80 calls, no more);
 * Flask's own failures say claimed and are retried (4 attempts); claimd's
 * recorded verdicts agree with that truth, 0 wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_expect.h"
#include "harness.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"

#define REQUESTS 100
#define FAIL_MOD 5
#define ATTEMPTS 4 /* ClaimRetry(total=3): a claimed failure's tries */

/* The Python side's environment: the package, its C library, claimd's verdicts. */
struct py_env {
	char path[H_PATH + 64], lib[H_PATH + 32], verdicts[H_PATH + 32], service[64];
	const char *envv[5];
};

static void py_env_make(struct py_env *e, const struct claimd_h *h, const char *service)
{
	snprintf(e->path, sizeof(e->path), "PYTHONPATH=%s/python:%s/tests/peers", test__top_dir(),
		 test__top_dir());
	snprintf(e->lib, sizeof(e->lib), "CLAIMD_LIBCLAIM=%s/libclaim.so", test__build_dir());
	snprintf(e->verdicts, sizeof(e->verdicts), "CLAIMD_VERDICTS=%s/verdicts", h->pin);
	snprintf(e->service, sizeof(e->service), "CLAIMD_SERVICE=%s", service);
	e->envv[0] = e->path;
	e->envv[1] = e->lib;
	e->envv[2] = e->verdicts;
	e->envv[3] = e->service;
	e->envv[4] = NULL;
}

/* Each id's answer as the client saw it, against the truth: the count of mismatches. */
static int check_answers(struct json_object *out, int *claimed, int *unclaimed)
{
	int i, bad = 0;

	for (i = 0; i < REQUESTS; i++) {
		char key[16];
		struct json_object *a;
		int want_status = i % FAIL_MOD == 0 ? 502 : i % FAIL_MOD == 1 ? 500 : 200;
		const char *want_claim = i % FAIL_MOD == 0   ? "unclaimed"
					 : i % FAIL_MOD == 1 ? "claimed"
							     : "";
		int want_attempts = i % FAIL_MOD == 1 ? ATTEMPTS : 1;

		snprintf(key, sizeof(key), "%d", i);
		a = j_get(out, key);
		*claimed += !strcmp(j_str(a, "claim"), "claimed");
		*unclaimed += !strcmp(j_str(a, "claim"), "unclaimed");
		if (a && j_int(a, "status") == want_status &&
		    !strcmp(j_str(a, "claim"), want_claim) && j_int(a, "attempts") == want_attempts)
			continue;
		bad++;
		printf("id %d: status %lld, x-error-claim '%s', %lld attempts; the truth: %d, "
		       "'%s', "
		       "%d\n",
		       i, j_int(a, "status"), j_str(a, "claim"), j_int(a, "attempts"), want_status,
		       want_claim, want_attempts);
	}
	return bad;
}

void test_python_libclaim(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc back = { 0 };
	struct py_env fe, ce;
	char script[H_PATH], client[H_PATH], ready[H_PATH], log[H_PATH], out[H_PATH], bport[16],
		fport[16];
	static char buf[1 << 16];
	pid_t front = -1, cl = -1;
	struct json_object *answers = NULL;
	int claimed = 0, unclaimed = 0, fails = REQUESTS / FAIL_MOD;
	size_t mark;

	if (!test__need_root())
		return;
	if (claimd_traced_start(&h, &t, NULL))
		goto out;
	if (!ASSERT_OK(svc_start(&back,
				 &(struct svc_spec){
					 .name = "pyb", .fail_mod = FAIL_MOD, .keepalive = true },
				 h.dir),
		       "backend"))
		goto out;
	py_env_make(&fe, &h, "pyflask");
	peer_script("flask_claim_service.py", script, sizeof(script));
	snprintf(ready, sizeof(ready), "%s/flask.ready", h.dir);
	snprintf(log, sizeof(log), "%s/flask.log", h.dir);
	snprintf(bport, sizeof(bport), "%d", back.port);
	{
		const char *argv[] = { "/usr/bin/python3", script, "--backend", bport,
				       "--ready-file",	   ready,  NULL };

		front = proc_spawn(argv, fe.envv, log);
	}
	if (!ASSERT_GT(front, 0, "flask") || !ASSERT_OK(wait_file(ready, 15000), "flask up") ||
	    !ASSERT_GT(read_file(ready, fport, sizeof(fport)), 0, "its port")) {
		read_file(log, buf, sizeof(buf));
		printf("flask's log:\n%s\n", buf);
		goto out;
	}
	fport[strcspn(fport, "\n")] = 0;
	mark = trace_mark(&t);

	py_env_make(&ce, &h, "pyclient");
	peer_script("claim_client.py", client, sizeof(client));
	snprintf(out, sizeof(out), "%s/client.json", h.dir);
	{
		const char *argv[] = { "/usr/bin/python3", client, "--port", fport, NULL };

		cl = proc_spawn(argv, ce.envv, out);
	}
	if (!ASSERT_GT(cl, 0, "client") || !ASSERT_EQ(proc_wait(cl, 120000), 0, "client done") ||
	    !ASSERT_GT(read_file(out, buf, sizeof(buf)), 0, "its answers"))
		goto out;
	answers = json_tokener_parse(buf);
	if (!ASSERT_OK_PTR(answers, "answers as JSON"))
		goto out;
	ASSERT_EQ(check_answers(answers, &claimed, &unclaimed), 0, "answers as the truth says");
	printf("python_libclaim: x-error-claim claimed on %d answers, unclaimed on %d\n", claimed,
	       unclaimed);

	/* The failing backend called once per id Flask served: no retry reached it. */
	edge_expect(&h, "pyflask", "pyb",
		    &(struct edge_want){ REQUESTS - fails, fails, fails, "fail-close" },
		    "python_libclaim");
	{
		const struct truth_svc truth[2] = {
			{ .service = "pyflask",
			  .verdict = "unclaimed",
			  .cause = "pyb",
			  .target = "/r/%d",
			  .ids = REQUESTS,
			  .mod = FAIL_MOD,
			  .rem = 0 },
			{ .service = "pyflask",
			  .verdict = "claimed",
			  .cause = "",
			  .target = "/r/%d",
			  .ids = REQUESTS,
			  .mod = FAIL_MOD,
			  .rem = 1 },
		};
		struct truth_tally tally = { 0 };

		truth__tally_trace(&tally, &t, mark, truth, 2, fails + fails * ATTEMPTS);
		truth__expect(&tally, "pyflask", fails + fails * ATTEMPTS, 0);
	}
out:
	json_object_put(answers);
	if (cl > 0)
		proc_stop(cl, 2000);
	if (front > 0)
		proc_stop(front, 5000);
	svc_stop(&back);
	claimd_traced_stop(&h, &t);
}
