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

#include <json-c/json.h>

struct truth_tally {
	int right;
	int wrong;
	int unknown;   /* "unknown", or no verdict on a failed ingress */
	int unchecked; /* the test did not know the truth of it */
};

/*
 * One verdict against the truth. want: "claimed" or "unclaimed" (or NULL:
 * the test does not know, counted as unchecked). got: the record's "verdict"
 * (NULL or "" or "none" count as unknown). Returns true unless it is wrong.
 */
bool truth__check(struct truth_tally *t, const char *want, const char *got);

/* The same for a trace line ("type": "ingress"); a line that did not fail is ignored. */
bool truth__check_ingress(struct truth_tally *t, struct json_object *rec, const char *want);

/* Prints "<what>: verdicts: N right, N wrong, N unknown[, N unchecked]". */
void truth__print(const struct truth_tally *t, const char *what);

/* The request target's hash as the framer computes it (FNV-1a), as trace prints it. */
uint32_t truth__target_hash(const char *target);
/* Does trace line rec carry the target 'target' ("target_hash")? */
bool truth__is_target(struct json_object *rec, const char *target);

#endif
