// SPDX-License-Identifier: GPL-2.0
/*
 * The storm of evaluation.md's T1, polyglot (tests/peers/polyglot_storm.py):
 * A (Python, Flask) -> B (Go, net/http) -> C (Java, the JDK's HttpServer)
 * -> D (C), D failing every request, each hop using only libclaim's package
 * for its language to write x-error-claim and to decide its retries.
 *
 * With claim-aware retries only C, nearest the failure, retries: D serves
 * 2 requests per request sent to A. With one retry per hop, whatever the
 * failure says: 8. Both from the services' own counters. Every verdict
 * claimd recorded on the way, in both runs, against the truth: D claimed,
 * each hop above it unclaimed with the next hop as cause.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "test_progs.h"
#include "truth.h"

#define REQUESTS 200

/* Runs the storm under claimd h: its JSON, or NULL. */
static struct json_object *storm_run(const struct claimd_h *h)
{
	char script[H_PATH], verdicts[H_PATH + 32], out[H_PATH], log[H_PATH], n[16];
	static char text[1 << 16];
	const char *argv[] = { "/usr/bin/python3", script, "--build", test__build_dir(),
			       "--requests",	   n,	   NULL };
	const char *envv[] = { verdicts, NULL };
	pid_t pid;
	int status;

	snprintf(n, sizeof(n), "%d", REQUESTS);
	peer_script("polyglot_storm.py", script, sizeof(script));
	snprintf(verdicts, sizeof(verdicts), "CLAIMD_VERDICTS=%s/verdicts", h->pin);
	snprintf(out, sizeof(out), "%s/storm.json", h->dir);
	snprintf(log, sizeof(log), "%s/storm.log", h->dir);
	pid = proc_spawn(argv, envv, out);
	status = pid > 0 ? proc_wait(pid, 300000) : -1;
	if (status == -1 && pid > 0)
		proc_stop(pid, 2000);
	if (!ASSERT_EQ(status, 0, "polyglot_storm.py") ||
	    !ASSERT_GT(read_file(out, text, sizeof(text)), 0, "its output")) {
		read_file(out, text, sizeof(text));
		printf("%s\n", text);
		return NULL;
	}
	return json_tokener_parse(text);
}

/* One policy's run: D's load as expected (within 3%), every hop's count, the answers. */
static void storm_check(struct json_object *run, const char *policy, double want_load,
			const char *want_answer)
{
	struct json_object *counts = j_get(run, "counts"), *answers = j_get(run, "answers");
	double load = json_object_get_double(j_get(run, "d_load"));
	char what[96];

	printf("%s: A %lld, B %lld, C %lld, D %lld requests for %d sent: D's load %.2fx "
	       "(expected %.0fx)\n",
	       policy, j_int(counts, "A"), j_int(counts, "B"), j_int(counts, "C"),
	       j_int(counts, "D"), REQUESTS, load, want_load);
	snprintf(what, sizeof(what), "%s: D's load within 3%% of %.0fx", policy, want_load);
	ASSERT_TRUE(fabs(load - want_load) <= 0.03 * want_load, what);
	snprintf(what, sizeof(what), "%s: A served each request once", policy);
	ASSERT_EQ(j_int(counts, "A"), REQUESTS, what);
	snprintf(what, sizeof(what), "%s: every answer '%s'", policy, want_answer);
	ASSERT_EQ(j_int(answers, want_answer), REQUESTS, what);
}

void test_polyglot_storm(void)
{
	static const char *const names[] = { "storm-py", "storm-go", "storm-java", "storm-c" };
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct truth_svc truth[4];
	struct truth_tally tally = { 0 };
	struct json_object *out = NULL;
	size_t mark;

	if (!test__need_root())
		return;
	if (claimd_traced_start(&h, &t, NULL))
		goto done;
	mark = trace_mark(&t);
	out = storm_run(&h);
	if (!ASSERT_OK_PTR(out, "the storm's JSON"))
		goto done;
	/* Claim-aware: C retries D once (claimed), B and A pass C's unclaimed up untried. */
	storm_check(j_get(out, "claim"), "claim-aware retries", 2, "502 unclaimed");
	/* One retry per hop: the header is not asked, each hop doubles the load below it. */
	storm_check(j_get(out, "naive"), "one retry per hop", 8, "502 unclaimed");
	/*
	 * Failed requests recorded: claim-aware A, B, C once per id, D twice;
	 * one retry per hop A once, B twice, C 4 and D 8 times. Ids 0 .. 2N-1.
	 */
	truth__chain(truth, 4,
		     &(struct truth_svc){ .target = "/r/%d", .ids = 2 * REQUESTS, .mod = 0 }, NULL,
		     names);
	truth__tally_trace(&tally, &t, mark, truth, 4, 5 * REQUESTS + 15 * REQUESTS);
	truth__expect(&tally, "polyglot storm", 20 * REQUESTS, 0);
done:
	json_object_put(out);
	claimd_traced_stop(&h, &t);
}
