/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Verdicts against the truth a test knows. Every end-to-end test that drives
 * failing requests says, per traced failed ingress, which verdict is right;
 * a tally counts the confident wrong ones (claimed where unclaimed is true,
 * or the reverse), the honest unknowns, and the right ones, and prints one
 * line the closing notes quote: "<what>: verdicts: N right, N wrong, N unknown".
 * The target for wrong is zero, always.
 */
#ifndef CLAIMD_TEST_TRUTH_H
#define CLAIMD_TEST_TRUTH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "harness.h"

struct truth_tally {
	int right;
	int wrong;
	int unknown;   /* "unknown", or no verdict on a failed ingress */
	int unchecked; /* the test did not know the truth of it */
	/*
	 * The decision matrix's known cost, counted apart: failures passed up
	 * on a fail-open edge (truth unclaimed) that rule 3 claimed; see
	 * truth_svc.fail_open_cost.
	 */
	int matrix_cost;
	/* The first unknown verdict's record, printed where unknown verdicts were not expected. */
	char first_unknown[768];
};

/*
 * One verdict against the truth. want: "claimed" or "unclaimed" (or NULL:
 * the test does not know, counted as unchecked). got: the record's "verdict"
 * (NULL or "" or "none" count as unknown). Returns true unless it is wrong.
 */
bool truth__check(struct truth_tally *t, const char *want, const char *got);

/* The same for a trace line ("type": "ingress"); a line that did not fail is ignored. */
bool truth__check_ingress(struct truth_tally *t, struct json_object *rec, const char *want);

/* Prints "<what>: verdicts: N right, N wrong, N unknown[, N unchecked]", and
 * a line for the matrix's known cost when there is some. */
void truth__print(const struct truth_tally *t, const char *what);

/* The request target's hash as the framer computes it (FNV-1a), as trace prints it. */
uint32_t truth__target_hash(const char *target);
/* Does trace line rec carry the target 'target' ("target_hash")? */
bool truth__is_target(struct json_object *rec, const char *target);
/* The id of rec's target when it is printf(fmt, id) for an id in [0, ids), else -1. */
int truth__target_id(struct json_object *rec, const char *fmt, int ids);

/*
 * What a test knows of one service: the truth of each of its failures. A
 * trace line is the service's by pid (or, with pid 0, by service name). With
 * target set ("/r/%d"), a failure is known only on a request whose id (below
 * ids) is one the test made fail (id % mod == rem, or any id with mod 0);
 * another failure is counted unchecked. A service whose failures are of
 * two kinds has an entry for each: a failure goes to the one its id is of.
 */
struct truth_svc {
	pid_t pid;
	const char *service;
	const char *verdict; /* "claimed" or "unclaimed" */
	const char *cause;   /* the callee its cause names; "": none; NULL: not checked */
	const char *target;
	int ids, mod, rem;
	/*
	 * Its edge to cause is fail-open by design: it passes up at most 20%
	 * of the callee's failures, and once the edge is known fail-open,
	 * rule 3 ("fail-open-edges-only") claims those it does pass up. Such
	 * a claim (truth unclaimed, cause right) is the decision matrix's own
	 * known error, not the observer's: counted in matrix_cost, not wrong.
	 */
	bool fail_open_cost;
};

/*
 * The truth of a chain of n services (out[0] calls out[1] ...) whose last
 * one fails on its own and whose others pass up the failure of the next:
 * claimed at the end, unclaimed above with the next one as cause. Each
 * takes target, ids, mod and rem from shape; services[i] names it (the
 * cause above it) and finds it when pids is NULL or pids[i] is 0.
 */
void truth__chain(struct truth_svc *out, int n, const struct truth_svc *shape, const pid_t *pids,
		  const char *const *services);

/*
 * The truth of service pid, asked target with ids below ids, that fails on
 * its own for id % mod == rem (claimed, no cause) and passes every other
 * failure up from its dependency (unclaimed, cause as given; NULL: not
 * checked): two entries into out.
 */
void truth__own_or_passed(struct truth_svc out[2], pid_t pid, const char *target, int ids, int mod,
			  int rem, const char *cause);

/*
 * Tallies the failed ingresses in lines (an array of trace lines) of the n
 * services, each against its truth; a right verdict whose cause names
 * another callee counts as wrong. Every wrong one is printed with its line,
 * as is each one of the matrix's known cost, with a count per service that
 * has fail_open_cost set.
 */
void truth__tally_services(struct truth_tally *t, struct json_object *lines,
			   const struct truth_svc *svcs, int n);

/* Waits (10 s at most) until the lines captured from index 'from' on hold
 * 'failures' failed ingresses of the services, then tallies those lines as
 * truth__tally_services. */
void truth__tally_trace(struct truth_tally *t, const struct trace_cap *tc, size_t from,
			const struct truth_svc *svcs, int n, int failures);

/*
 * Prints the tally (truth__print) and asserts that no verdict is wrong, that
 * none was unchecked (every failure is one the test caused), and that right
 * (with the matrix's known cost: right but for the matrix) and unknown are as
 * given (-1: not checked). True if all held.
 */
bool truth__expect(const struct truth_tally *t, const char *what, int right, int unknown);
/*
 * The same where the decision matrix itself is wrong by design (rule 4 on
 * an unknown edge unclaims a failure that was the service's own): exactly
 * 'wrong' wrong verdicts, each one printed.
 */
bool truth__expect_wrong(const struct truth_tally *t, const char *what, int wrong, int right,
			 int unknown);

#endif
