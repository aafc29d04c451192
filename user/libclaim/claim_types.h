/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libclaim's public types: a verdict and the rule that gave it, each made
 * from one table (X-macro: the enum, its number, its name, and for a rule
 * the verdict it gives) that every side reads: the kernel stores the
 * numbers, libclaim, claimd, claimctl and the tests print the names. Shared
 * with claimd's kernel side (headers/verdict.h includes this file), so it
 * includes nothing: the BPF programs compile it too.
 */
#ifndef CLAIM_TYPES_H
#define CLAIM_TYPES_H

/* Where claimd pins its verdict map, inside its pin directory. */
#define CLAIM_PIN_NAME "verdicts"

/*
 * X(enum, number, name):
 *   none       not failed, or nothing known
 *   claimed    the service owns its error: a retry can help
 *   unclaimed  passed up from a failed dependency: do not retry
 *   unknown    could not be decided (no egress log, multiplexed, ...)
 */
#define CLAIM_VERDICT_TABLE(X)             \
	X(CLAIM_NONE, 0, "none")           \
	X(CLAIM_CLAIMED, 1, "claimed")     \
	X(CLAIM_UNCLAIMED, 2, "unclaimed") \
	X(CLAIM_UNKNOWN, 3, "unknown")

/*
 * Why a verdict is what it is. X(enum, number, name, the verdict it gives):
 *   no-failed-call        rule 1: no call of the request failed
 *   callee-unclaimed      rule 2: a failed call said x-error-claim: unclaimed
 *   fail-close-edge       rule 2: a call failed on a fail-close edge
 *   fail-open-edges-only  rule 3: every failed call is on a fail-open edge
 *   unknown-edge          rule 4: a call failed on an edge of unknown class
 *   no-egress-log         no egress log: cannot decide
 *   multiplexed           the thread served other requests meanwhile
 *   framing-lost          it moved bytes on a connection whose framing was lost
 *   untied-call           it made a call that could not be followed
 *   unfinished-call       a call it did not wait for was still running at
 *                         its answer (a goroutine's, an explicit context's):
 *                         given up, or left to finish, claimd cannot tell
 *   opaque-call           it talked to a dependency in a protocol claimd does
 *                         not frame (or on a connection it joined
 *                         mid-stream), whose failures claimd cannot see
 *   unread-program        its process's program was not read yet: whether
 *                         its threads' syscalls tell its requests apart
 *                         (or a runtime's probes must: Go) is not known
 */
#define CLAIM_RULE_TABLE(X)                                                 \
	X(CLAIM_RULE_NONE, 0, "none", CLAIM_NONE)                           \
	X(CLAIM_RULE_NO_FAILED_EGRESS, 1, "no-failed-call", CLAIM_CLAIMED)  \
	X(CLAIM_RULE_HEADER, 2, "callee-unclaimed", CLAIM_UNCLAIMED)        \
	X(CLAIM_RULE_FAIL_CLOSE, 3, "fail-close-edge", CLAIM_UNCLAIMED)     \
	X(CLAIM_RULE_FAIL_OPEN, 4, "fail-open-edges-only", CLAIM_CLAIMED)   \
	X(CLAIM_RULE_UNKNOWN_EDGE, 5, "unknown-edge", CLAIM_UNCLAIMED)      \
	X(CLAIM_RULE_NO_LOG, 6, "no-egress-log", CLAIM_UNKNOWN)             \
	X(CLAIM_RULE_MULTIPLEXED, 7, "multiplexed", CLAIM_UNKNOWN)          \
	X(CLAIM_RULE_FRAMING_LOST, 8, "framing-lost", CLAIM_UNKNOWN)        \
	X(CLAIM_RULE_UNTIED_CALL, 9, "untied-call", CLAIM_UNKNOWN)          \
	X(CLAIM_RULE_UNFINISHED_CALL, 10, "unfinished-call", CLAIM_UNKNOWN) \
	X(CLAIM_RULE_OPAQUE_CALL, 11, "opaque-call", CLAIM_UNKNOWN)         \
	X(CLAIM_RULE_UNREAD_PROGRAM, 12, "unread-program", CLAIM_UNKNOWN)

#define CLAIM_TYPES_ENUM_(id, num, ...) id = num,

enum claim_verdict { CLAIM_VERDICT_TABLE(CLAIM_TYPES_ENUM_) };

enum claim_rule {
	CLAIM_RULE_TABLE(CLAIM_TYPES_ENUM_) CLAIM_RULE__COUNT,
};

#endif
