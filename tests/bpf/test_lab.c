// SPDX-License-Identifier: GPL-2.0
/*
 * The lab end to end, with a claimd of the test's own attached and the
 * nodes reading its verdicts through libclaim:
 * - a short T1 (evaluation.md): the 7-chain failing at D under per-hop
 *   retries (2x, 4x, 8x at B, C, D; A and B retry; storm radius 3), then
 *   claim-aware (only C retries: D 2x, radius 1, and the failed answers carry
 *   claimd's verdicts: claimed at D, unclaimed above), then claim-aware with
 *   a 10% budget at C (D 1.1x);
 * - the acceptance case of a dependency without libclaim: D never writes
 *   x-error-claim; under claim:2, C retries it exactly once per request (at
 *   most once without a header), its failure goes up unclaimed, and nothing
 *   above C retries.
 * Every run's failures are compared with the truth: D's are its own, those
 * of A, B and C passed up from one hop down.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "test_progs.h"

#define N      400
#define TOL    0.05 /* the short runs: 5% */
#define RUN_MS 30000

/*
 * claimlab run on the 7-chain failing at D, with claimd's verdicts; extra:
 * more arguments (NULL-terminated). Returns its JSON report, or NULL.
 */
static struct json_object *lab_run(const struct claimd_h *h, const struct trace_cap *t,
				   const char *name, const char *const extra[])
{
	char lab[H_PATH], json[H_PATH], log[H_PATH], env[H_PATH], n[16], buf[8192], prefix[48];
	char what[64];
	const char *argv[32] = { lab,	   "run", "--topology",	      "chain:7",
				 "--fail", "D",	  "--requests",	      n,
				 "--json", json,  "--service-prefix", prefix };
	const char *envv[] = { env, NULL };
	struct json_object *rep;
	int argc = 12, status, i;
	pid_t pid;

	snprintf(lab, sizeof(lab), "%s/claimlab", test__build_dir());
	snprintf(json, sizeof(json), "%s/%s.json", h->dir, name);
	snprintf(log, sizeof(log), "%s/%s.log", h->dir, name);
	snprintf(env, sizeof(env), "CLAIMD_VERDICTS=%s/verdicts", h->pin);
	snprintf(n, sizeof(n), "%d", N);
	lab_prefix(prefix, sizeof(prefix), name);
	for (i = 0; extra[i] && argc < 31; i++)
		argv[argc++] = extra[i];
	argv[argc] = NULL;
	pid = proc_spawn(argv, envv, log);
	if (!ASSERT_GT(pid, 0, "spawn claimlab"))
		return NULL;
	status = proc_wait(pid, RUN_MS);
	if (status == -1) {
		proc_stop(pid, 2000);
		printf("claimlab run did not finish within %d s\n", RUN_MS / 1000);
	}
	if (!ASSERT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
			 "claimlab run succeeds")) {
		if (read_file(log, buf, sizeof(buf)) > 0)
			printf("---- %s ----\n%s", log, buf);
		return NULL;
	}
	if (read_file(log, buf, sizeof(buf)) > 0)
		printf("%s", buf); /* its table, shown with -v */
	rep = json_object_from_file(json);
	snprintf(what, sizeof(what), "lab, %s", name);
	if (ASSERT_OK_PTR(rep, "claimlab's JSON"))
		lab_verdicts(t, rep, prefix, what);
	return rep;
}

static double load_of(struct json_object *rep, const char *name)
{
	return json_object_get_double(j_get(j_get(rep, "load"), name));
}

static long long retries_of(struct json_object *rep, const char *name)
{
	return j_int(j_get(rep, "retries_sent"), name);
}

static long long claims_of(struct json_object *rep, const char *name, const char *which)
{
	return j_int(j_get(lab_node(rep, name), "claims_written"), which);
}

/* Loads at B, C, D within TOL of want; the storm radius; claimd read by all. */
static void check_chain(struct json_object *rep, const double want[3], int radius)
{
	static const char *const names[3] = { "B", "C", "D" };
	int i;

	ASSERT_FLOAT_NEAR(load_of(rep, "A"), 1.0, 1e-9, "load A");
	for (i = 0; i < 3; i++)
		ASSERT_FLOAT_NEAR(load_of(rep, names[i]), want[i], TOL * want[i], names[i]);
	ASSERT_FLOAT_NEAR(load_of(rep, "E"), 0, 0, "nothing reaches E");
	ASSERT_EQ(j_int(rep, "storm_radius"), radius, "storm radius");
	ASSERT_EQ(j_int(rep, "claimd_connected_nodes"), 7, "every node reads claimd");
	ASSERT_EQ(j_int(j_get(rep, "client"), "ok"), 0, "every request fails");
}

void test_lab_chain(void)
{
	struct json_object *rep = NULL;
	struct claimd_h h;
	struct trace_cap t;

	if (!lab_claimd_up(&h, &t, NULL))
		goto out;
	if (test__start_subtest("per_hop")) {
		static const double want[3] = { 2, 4, 8 };
		const char *extra[] = { "--policy", "retry:1", NULL };

		rep = lab_run(&h, &t, "per-hop", extra);
		if (rep) {
			check_chain(rep, want, 3);
			ASSERT_GT(retries_of(rep, "A"), 0, "A retries");
			ASSERT_GT(retries_of(rep, "B"), 0, "B retries");
			ASSERT_EQ(retries_of(rep, "C"), 2 * 2 * N, "C retries every call");
		}
		json_object_put(rep);
	}
	if (test__start_subtest("claim_aware")) {
		static const double want[3] = { 1, 1, 2 };
		const char *extra[] = { "--policy", "claim:1", NULL };

		rep = lab_run(&h, &t, "claim", extra);
		if (rep) {
			check_chain(rep, want, 1);
			ASSERT_EQ(retries_of(rep, "A"), 0, "A does not retry");
			ASSERT_EQ(retries_of(rep, "B"), 0, "B does not retry");
			ASSERT_EQ(retries_of(rep, "C"), N, "C retries D once per request");
			/* The verdicts claimd gave, as the nodes wrote them. */
			ASSERT_EQ(claims_of(rep, "D", "claimed"), 2 * N, "D: claimed");
			ASSERT_EQ(claims_of(rep, "C", "unclaimed"), N, "C: unclaimed");
			ASSERT_EQ(claims_of(rep, "B", "unclaimed"), N, "B: unclaimed");
			ASSERT_EQ(claims_of(rep, "A", "unclaimed"), N, "A: unclaimed");
		}
		json_object_put(rep);
	}
	if (test__start_subtest("claim_budget_at_c")) {
		static const double want[3] = { 1, 1, 1.1 };
		const char *extra[] = { "--policy", "claim:1", "--policy-at", "C=claim+budget:0.1",
					NULL };

		rep = lab_run(&h, &t, "claim-budget", extra);
		if (rep) {
			check_chain(rep, want, 1);
			ASSERT_EQ(retries_of(rep, "A"), 0, "A does not retry");
			ASSERT_EQ(retries_of(rep, "B"), 0, "B does not retry");
			ASSERT_EQ(j_int(lab_node(rep, "C"), "budget_denied"),
				  N - retries_of(rep, "C"), "the budget denied the rest");
		}
		json_object_put(rep);
	}
out:
	lab_claimd_down(&h, &t);
}

void test_lab_no_claim_header(void)
{
	const char *extra[] = { "--policy", "claim:2", "--no-claim-header-at", "D", NULL };
	struct json_object *rep = NULL, *c, *down, *stopped;
	static const double want[3] = { 1, 1, 2 };
	struct claimd_h h;
	struct trace_cap t;

	if (!lab_claimd_up(&h, &t, NULL))
		goto out;
	rep = lab_run(&h, &t, "no-header", extra);
	if (!rep)
		goto out;
	check_chain(rep, want, 1);
	ASSERT_EQ(j_int(lab_node(rep, "D"), "received"), 2 * N, "D: exactly 2x");
	ASSERT_EQ(claims_of(rep, "D", "none"), 2 * N, "D writes no header");
	/* claim:2 allows two retries; without a header, C makes one. */
	ASSERT_EQ(retries_of(rep, "C"), N, "C retries once per request");
	c = lab_node(rep, "C");
	down = json_object_array_get_idx(j_get(c, "downstreams"), 0);
	stopped = j_get(down, "stopped_retrying");
	ASSERT_EQ(j_int(stopped, "no-header-retried-once"), N, "at most once");
	ASSERT_EQ(j_int(j_get(down, "failed_with_claim"), "none"), 2 * N, "C saw no header");
	ASSERT_EQ(claims_of(rep, "C", "unclaimed"), N, "C's failure goes up unclaimed");
	ASSERT_EQ(retries_of(rep, "B"), 0, "B does not retry");
	ASSERT_EQ(retries_of(rep, "A"), 0, "A does not retry");
	ASSERT_EQ(claims_of(rep, "B", "unclaimed"), N, "B: unclaimed");
out:
	json_object_put(rep);
	lab_claimd_down(&h, &t);
}
