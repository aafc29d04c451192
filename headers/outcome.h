/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How a call and a request ended, and which failed call a retry supersedes:
 * the rules every side applies, written once. The BPF programs judge with
 * them at response time, claimd counts edges and services with them,
 * claimctl's trace shows them, libclaim and the lab decide retries with
 * them, and the tests check them. Plain inline C over fixed-width values:
 * no libc, no pointers kept, nothing the verifier would refuse.
 *
 * A call failed: a status from fail_status_min up (claimd --fail-status,
 * default 500), or a transport failure (refused, reset, closed or EOF
 * before a response). A call whose answer's framing was lost
 * (CLAIMD_EG_LOST) neither failed nor succeeded: it counts as a call and
 * teaches nothing about the callee's failures.
 *
 * A request failed: a status from fail_status_min up, or no response at
 * all. A request whose own answer's framing was lost (CLAIMD_IN_LOST) is
 * lost too; both a failed and a lost request are judged (get a verdict: a
 * lost one always "unknown", framing-lost), so that a failure claimd could
 * not see is counted as an honest unknown rather than dropped.
 *
 * The retry walk: a call is a retry of the call right before it in the same
 * log when that one failed and this one has the same callee, method and
 * target (CLAIMD_EG_RETRY); after a refused connect (CLAIMD_EG_CONNECT),
 * which never sent its request, any next call to the same callee is its
 * retry. Walking a log newest first, a failed call
 * followed by its retry is superseded: the retry's outcome stands for both.
 */
#ifndef CLAIMD_OUTCOME_H
#define CLAIMD_OUTCOME_H

#include "observer.h"
#include "wire_parse.h"

#ifdef __bpf__
#define OUTCOME_INLINE static __always_inline
#else
#define OUTCOME_INLINE static inline
#endif

#define OUTCOME_FAIL_STATUS_DEFAULT 500

enum claimd_outcome {
	CLAIMD_OUTCOME_OK = 0,	   /* answered below fail_status_min */
	CLAIMD_OUTCOME_FAILED = 1, /* failed: see above */
	CLAIMD_OUTCOME_LOST = 2,   /* its answer's framing was lost: neither */
};

/*
 * A call with no end yet, judged at its request's answer: given up by its
 * caller if the caller awaited it (it answered its request without it;
 * design.md: the caller gives up), else left running (a goroutine's, an
 * explicit context's: given up, or left to finish, claimd cannot tell).
 */
OUTCOME_INLINE int outcome_call_given_up(__u32 eg_flags)
{
	return (eg_flags & (CLAIMD_EG_AWAITED | CLAIMD_EG_DONE)) == CLAIMD_EG_AWAITED;
}

OUTCOME_INLINE int outcome_call_left_running(__u32 eg_flags)
{
	return !(eg_flags & (CLAIMD_EG_AWAITED | CLAIMD_EG_DONE));
}

/* A call's outcome: status 0 with CLAIMD_EG_DONE is a transport failure, as one given up. */
OUTCOME_INLINE __u32 outcome_of_call(__u32 status, __u32 eg_flags, __u32 fail_status_min)
{
	if (eg_flags & CLAIMD_EG_LOST)
		return CLAIMD_OUTCOME_LOST;
	if ((eg_flags & CLAIMD_EG_TRANSPORT) || status >= fail_status_min ||
	    ((eg_flags & CLAIMD_EG_DONE) && status == 0) || outcome_call_given_up(eg_flags))
		return CLAIMD_OUTCOME_FAILED;
	return CLAIMD_OUTCOME_OK;
}

/*
 * A database's or a cache's call (headers/wire_parse.h) as a call's end,
 * for outcome_of_call: an answer is a status below any fail_status_min
 * (CLAIMD_WIRE_STATUS_OK), an error reply one above any
 * (CLAIMD_WIRE_STATUS_ERROR), the connection's end before the answer a
 * transport failure, and an answer with an error inside it (a
 * transaction's EXEC) neither: lost, it teaches nothing.
 */
#define CLAIMD_WIRE_STATUS_OK	 1
#define CLAIMD_WIRE_STATUS_ERROR 0xffff

OUTCOME_INLINE void outcome_wire_end(__u32 wire_outcome, __u32 *status, __u32 *eg_flags)
{
	*status = 0;
	*eg_flags = 0;
	if (wire_outcome == WIRE_OK)
		*status = CLAIMD_WIRE_STATUS_OK;
	else if (wire_outcome == WIRE_CALLEE_ERROR)
		*status = CLAIMD_WIRE_STATUS_ERROR;
	else if (wire_outcome == WIRE_RESET)
		*eg_flags = CLAIMD_EG_TRANSPORT;
	else
		*eg_flags = CLAIMD_EG_LOST;
}

/* A request's outcome: status 0 is no response. */
OUTCOME_INLINE __u32 outcome_of_request(__u32 status, __u32 in_flags, __u32 fail_status_min)
{
	if (in_flags & CLAIMD_IN_LOST)
		return CLAIMD_OUTCOME_LOST;
	if (status == 0 || status >= fail_status_min)
		return CLAIMD_OUTCOME_FAILED;
	return CLAIMD_OUTCOME_OK;
}

/* Does a request with this outcome get a verdict (and count as a failure)? */
OUTCOME_INLINE int outcome_judged(__u32 outcome)
{
	return outcome != CLAIMD_OUTCOME_OK;
}

/*
 * Does a call (method, target) repeat the previous call to the same callee
 * (its outcome, CLAIMD_EG_* flags, method and target)? Only a failed call is
 * retried; the caller compares the callees (the kernel by address, claimd
 * by name).
 */
OUTCOME_INLINE int outcome_is_retry(__u32 prev_outcome, __u32 prev_flags, __u32 prev_method,
				    __u32 prev_target, __u32 method, __u32 target)
{
	return prev_outcome == CLAIMD_OUTCOME_FAILED &&
	       ((prev_flags & CLAIMD_EG_CONNECT) ||
		(prev_method == method && prev_target == target));
}

/* The retry walk over one egress log, newest entry first; zero it to start. */
struct retry_walk {
	__u32 newer_is_retry; /* the entry after the next one visited retried it */
};

/*
 * Visits the next entry (newest first, its status and CLAIMD_EG_* flags):
 * true if it counts as a failed call, false if it did not fail or the
 * retry right after it superseded it.
 */
OUTCOME_INLINE int retry_walk__failed(struct retry_walk *w, __u32 status, __u32 eg_flags,
				      __u32 fail_status_min)
{
	__u32 superseded = w->newer_is_retry;

	w->newer_is_retry = !!(eg_flags & CLAIMD_EG_RETRY);
	return !superseded &&
	       outcome_of_call(status, eg_flags, fail_status_min) == CLAIMD_OUTCOME_FAILED;
}

#endif /* CLAIMD_OUTCOME_H */
