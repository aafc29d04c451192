/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libclaim's public types: a verdict and the rule that gave it. Shared with
 * claimd's kernel side (headers/verdict.h includes this file), so it
 * includes nothing: the BPF programs compile it too.
 */
#ifndef CLAIM_TYPES_H
#define CLAIM_TYPES_H

/* Where claimd pins its verdict map, inside its pin directory. */
#define CLAIM_PIN_NAME "verdicts"

enum claim_verdict {
	CLAIM_NONE = 0,	     /* not failed, or nothing known */
	CLAIM_CLAIMED = 1,   /* the service owns its error: a retry can help */
	CLAIM_UNCLAIMED = 2, /* passed up from a failed dependency: do not retry */
	CLAIM_UNKNOWN = 3,   /* could not be decided (no egress log, multiplexed) */
};

/* Why a verdict is what it is. */
enum claim_rule {
	CLAIM_RULE_NONE = 0,
	CLAIM_RULE_NO_FAILED_EGRESS = 1, /* rule 1 */
	CLAIM_RULE_HEADER = 2,		 /* rule 2: x-error-claim: unclaimed */
	CLAIM_RULE_FAIL_CLOSE = 3,	 /* rule 2: fail-close edge */
	CLAIM_RULE_FAIL_OPEN = 4,	 /* rule 3 */
	CLAIM_RULE_UNKNOWN_EDGE = 5,	 /* rule 4 */
	CLAIM_RULE_NO_LOG = 6,		 /* no egress log: cannot decide */
	CLAIM_RULE_MULTIPLEXED = 7,	 /* the thread served other requests meanwhile */
	CLAIM_RULE_FRAMING_LOST = 8,	 /* it moved bytes on a connection whose framing was lost */
	CLAIM_RULE_UNTIED_CALL = 9,	 /* it made a call that could not be followed */
	CLAIM_RULE__COUNT,
};

#endif
