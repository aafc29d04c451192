/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Root calls: calls made outside any ingress (CLAIMD_REC_EGRESS records).
 * A root call of a process that serves nothing (no listener: curl, a batch
 * job, a load generator) goes on the root edge from the process's name
 * (names__process: CLAIMD_SERVICE, else its command) to the callee: a call,
 * a callee failure when it failed, a retry when it repeats the process's
 * previous call to that callee and that call failed (roots__is_retry: the
 * kernel's retry rule, headers/outcome.h, over the process's calls in
 * time rather than one request's log). A
 * process that listens serves requests: its calls outside them are no edge
 * (they would mix a background job into the service's edges), only counted.
 * Late calls (CLAIMD_EG_LATE: they belonged to a request already answered)
 * are not root calls: counted apart. Root edges get no ratio and no class
 * (edges.h).
 */
#ifndef CLAIMD_ROOTS_H
#define CLAIMD_ROOTS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "observer.h"

struct edges;
struct names;

/*
 * A retry: same process, same callee, same method and request target, begun
 * at most this long after the end of the failed call it repeats. curl
 * --retry waits 1, 2, 4, ... s between attempts (capped at 10 min, but
 * --retry-max-time usually stops it sooner); libraries back off similarly:
 * 30 s holds the usual first retries, and a later call of the same target
 * is taken for a new request, not a retry.
 */
#define ROOTS_RETRY_WINDOW_NS (30ull * 1000000000ull)

/* What a process's last root call to a callee was: the retry rule's memory. */
struct root_last {
	__u64 end_ns;
	__u32 target_hash;
	__u8 method;
	__u8 outcome; /* enum claimd_outcome (headers/outcome.h) */
	__u32 flags;  /* CLAIMD_EG_* */
};

/* Does call x repeat prev (the same process's last call to the same callee)?
 * outcome_is_retry (headers/outcome.h), begun within ROOTS_RETRY_WINDOW_NS
 * after prev ended. */
bool roots__is_retry(const struct root_last *prev, const struct claimd_egress *x);

enum root_call {
	ROOT_CALL_EDGE = 0, /* counted on a root edge */
	ROOT_CALL_OUTSIDE,  /* a listening process's call outside its requests: no edge */
	ROOT_CALL_LATE,	    /* finished after its request had answered: not a root call */
	ROOT_CALL_DROPPED,  /* out of memory */
};

struct roots_counts {
	uint64_t edge_calls;		 /* root calls counted on root edges */
	uint64_t calls_outside_requests; /* ROOT_CALL_OUTSIDE */
	uint64_t late_calls;		 /* ROOT_CALL_LATE */
};

struct roots;

struct roots *roots__new(void);
void roots__free(struct roots *r);
/* Takes one root egress record (checked by record__check). now: monotonic seconds. */
enum root_call roots__add(struct roots *r, struct edges *e, struct names *names,
			  const struct claimd_root_egress *rec, double now);
/* The process exited: its retry memory goes. */
void roots__forget_process(struct roots *r, __u32 tgid);
const struct roots_counts *roots__counts(const struct roots *r);

#endif
