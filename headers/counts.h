/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What one answered request adds to its service's counts and to its edges'
 * counts: written once, applied by the kernel at the moment the request is
 * answered (per CPU, in the service_counts and edge_counts maps claimd reads
 * each tick) and by claimd for a record the kernel could not count (a full
 * map: CLAIMD_IN_UNCOUNTED, CLAIMD_EG_UNCOUNTED).
 *
 * A service (one process's listening port) counts requests, failures, and
 * whose failures they were: claimed or unclaimed when the verdict is
 * confident, else unknown, by the reason (the rule that gave unknown, or the
 * flag that makes a verdict a guess).
 *
 * An edge (the caller instance, the callee endpoint) counts every call
 * its caller made, tied to a request or not: its calls, its retries, and
 * per request at most once whether the callee failed (a failed call the
 * retry walk did not supersede, headers/outcome.h). Only a request whose
 * log claimd followed whole teaches the edge's class: the callee failures
 * it saw (tied_failures) and whether the request failed with them
 * (both_failed), the ratio's two terms. A call outside requests, or in a
 * request whose log may miss calls, cannot say whether its request failed
 * for it: counted in calls and callee_failures alone, it would dilute the
 * ratio towards fail-open.
 */
#ifndef CLAIMD_COUNTS_H
#define CLAIMD_COUNTS_H

#include "observer.h"
#include "verdict.h"
#include "outcome.h"

#define CLAIMD_RULE_SLOTS 16 /* >= CLAIM_RULE__COUNT */

_Static_assert(CLAIM_RULE__COUNT <= CLAIMD_RULE_SLOTS, "a count for every rule");

/*
 * Per CPU, per service instance, in a slot of its own on each CPU (below).
 * The epoch and the owner first, by the counts every request adds: one
 * cache line where a request that does not fail touches the struct.
 */
struct claimd_service_counts {
	__u64 epoch; /* no count: see struct claimd_dirty */
	__u64 owner; /* the service instance whose slot this is on this CPU; 0: free */
	__u64 requests;
	__u64 failures;	   /* failed or lost (outcome_judged) */
	__u64 claimed;	   /* failures with a confident verdict: claimed */
	__u64 unclaimed;   /* ... unclaimed */
	__u64 unknown;	   /* failures without one */
	__u64 multiplexed; /* requests whose thread juggled another meanwhile */
	__u64 goroutine;   /* requests followed per goroutine (Go probes) */
	__u64 tied_id;	   /* event loops' requests with a call tied by request id (keyed.c) */
	__u64 tied_relay;  /* ... tied as its relay */
	__u64 tied_nginx;  /* ... tied by nginx's probe (bpf/runtimes/nginx.c) */
	__u64 tied_node;   /* ... tied by Node.js's async context (bpf/node.bpf.h) */
	__u64 unknown_by
		[CLAIMD_RULE_SLOTS]; /* unknown failures by reason (CLAIM_RULE_NONE: other) */
};

struct claimd_service_key {
	__u32 tgid;
	__u16 local_port;
	__u16 pad;
};

/*
 * Where a service instance's counts are: an array of CLAIMD_SERVICES_MAX
 * slots per CPU, not a hash (its lookup was a fifth of what claimd adds to
 * a traced request: docs/performance.md). On each CPU the instance takes
 * the first of its CLAIMD_SERVICE_PROBES slots that it owns already or that
 * is free, and keeps it until claimd forgets the process (claimd_forget_
 * services). CPUs decide alone, so one instance may sit in different slots
 * on different CPUs, and in two of its slots on one CPU (a slot before its
 * own freed meanwhile): claimd sums every slot of the instance's that it
 * owns on every CPU. All of them held by others on this CPU: refused, the
 * request sent as a record (CLAIMD_IN_UNCOUNTED), as when a map is full.
 */
#define CLAIMD_SERVICE_PROBES 4

/* The owner word of an instance: never 0 (a process's tgid is not). */
static inline __u64 claimd_service_owner(__u32 tgid, __u16 local_port)
{
	return (__u64)tgid << 16 | local_port;
}

/* The instance an owner word names. */
static inline struct claimd_service_key claimd_service_key_of(__u64 owner)
{
	struct claimd_service_key key = { .tgid = (__u32)(owner >> 16),
					  .local_port = (__u16)owner };

	return key;
}

/* The instance's probe-th slot (probe < CLAIMD_SERVICE_PROBES). */
static inline __u32 claimd_service_slot(__u64 owner, __u32 probe)
{
	return ((__u32)((owner * 0x9E3779B97F4A7C15ULL) >> 32) + probe) & (CLAIMD_SERVICES_MAX - 1);
}

/* Per CPU, per edge: struct claimd_edge_key (headers/verdict.h) -> this. */
struct claimd_edge_counts {
	__u64 calls;
	__u64 callee_failures; /* requests (or calls outside them) in which the callee failed */
	__u64 tied_failures;   /* ... in requests that teach (counts_teaches_edges) */
	__u64 both_failed;     /* ... of those, the request failed too */
	__u64 retries;
	__u64 last_failed; /* the request that last counted a callee failure here */
	__u64 epoch;	   /* no count: see struct claimd_dirty */
};

/*
 * What changed, so that claimd reads only that. claimd numbers its reads
 * (epochs, in count_epoch). The first time in an epoch that a CPU adds to a
 * counter, it notes the counter's key in its dirty list for that epoch (two
 * lists, by the epoch's parity; the counter's epoch field says it is noted).
 * A list that fills up says so (overflow): claimd then reads every counter.
 */
#define CLAIMD_DIRTY_MAX 256

struct claimd_dirty_head {
	__u32 n; /* keys noted (may pass CLAIMD_DIRTY_MAX: then overflow) */
	__u32 overflow;
};

struct claimd_dirty_edges {
	struct claimd_dirty_head head;
	struct claimd_edge_key keys[CLAIMD_DIRTY_MAX];
};

struct claimd_dirty_services {
	struct claimd_dirty_head head;
	struct claimd_service_key keys[CLAIMD_DIRTY_MAX];
};

/*
 * The kernel adds atomically: a uprobe's program may be preempted, and any
 * program interrupted by a socket's state change in softirq (its CPU's
 * values are then shared with the program that runs meanwhile). claimd,
 * single-threaded, adds plainly.
 */
#ifdef __bpf__
#define COUNTS_ADD(p, v)	__sync_fetch_and_add((p), (v))
#define COUNTS_CAS(p, old, new) __sync_bool_compare_and_swap((p), (old), (new))
#else
#define COUNTS_ADD(p, v)	(*(p) += (v))
static inline int counts_cas_(__u64 *p, __u64 old, __u64 new_value)
{
	if (*p != old)
		return 0;
	*p = new_value;
	return 1;
}
#define COUNTS_CAS(p, old, new) counts_cas_((p), (old), (new))
#endif

/* The rules whose verdict is unknown, as a mask, from the one rule table. */
#define COUNTS_UNKNOWN_RULE_BIT_(id, num, name, verdict) \
	| ((verdict) == CLAIM_UNKNOWN ? 1u << (num) : 0u)
#define COUNTS_UNKNOWN_RULES (0u CLAIM_RULE_TABLE(COUNTS_UNKNOWN_RULE_BIT_))

OUTCOME_INLINE int counts_rule_is_unknown(__u32 rule)
{
	return rule < 32 && ((COUNTS_UNKNOWN_RULES >> rule) & 1);
}

/* Bytes claimd could not frame, or a call it could not follow. */
#define COUNTS_BLIND_FLAGS (CLAIMD_IN_BLIND | CLAIMD_IN_UNTIED | CLAIMD_IN_LOST)

/*
 * Is a failed request's verdict confident? Only claimed or unclaimed, built
 * on a log claimd followed whole and an answer it framed.
 */
OUTCOME_INLINE int counts_confident(__u32 verdict, __u32 rule, __u32 in_flags)
{
	return (verdict == CLAIM_CLAIMED || verdict == CLAIM_UNCLAIMED) &&
	       !(in_flags & COUNTS_BLIND_FLAGS) && rule != CLAIM_RULE_FRAMING_LOST &&
	       rule != CLAIM_RULE_UNTIED_CALL;
}

/* Why a failure's verdict is unknown: the rule that said so, else its flags. */
OUTCOME_INLINE __u32 counts_unknown_reason(__u32 rule, __u32 in_flags)
{
	if (counts_rule_is_unknown(rule))
		return rule;
	if (in_flags & CLAIMD_IN_UNTIED)
		return CLAIM_RULE_UNTIED_CALL;
	if (in_flags & (CLAIMD_IN_BLIND | CLAIMD_IN_LOST))
		return CLAIM_RULE_FRAMING_LOST;
	if (in_flags & CLAIMD_IN_MUX)
		return CLAIM_RULE_MULTIPLEXED;
	if (in_flags & CLAIMD_IN_NOCTX)
		return CLAIM_RULE_NO_LOG;
	return CLAIM_RULE_NONE;
}

/*
 * Does a request (its flags, its verdict's rule) teach its edges? Not when
 * its log may miss calls or their outcomes. A dependency in another
 * protocol (opaque-call) leaves its log of HTTP calls whole: it teaches,
 * failed or not, or a callee's failures that fail it would go uncounted
 * where those that do not are counted.
 */
OUTCOME_INLINE int counts_teaches_edges(__u32 rule, __u32 in_flags, __u32 egress_dropped)
{
	return !(in_flags & (CLAIMD_IN_MUX | CLAIMD_IN_NOCTX | COUNTS_BLIND_FLAGS)) &&
	       (!counts_rule_is_unknown(rule) || rule == CLAIM_RULE_OPAQUE_CALL) && !egress_dropped;
}

/* Adds one answered request (its status, flags and verdict) to s. */
OUTCOME_INLINE void counts_add_request(struct claimd_service_counts *s, __u32 status,
				       __u32 in_flags, __u32 verdict, __u32 rule,
				       __u32 fail_status_min)
{
	int failed = outcome_judged(outcome_of_request(status, in_flags, fail_status_min));

	COUNTS_ADD(&s->requests, 1);
	if (in_flags & CLAIMD_IN_MUX)
		COUNTS_ADD(&s->multiplexed, 1);
	if (in_flags & CLAIMD_IN_GO)
		COUNTS_ADD(&s->goroutine, 1);
	if (in_flags & CLAIMD_IN_TIED_ID)
		COUNTS_ADD(&s->tied_id, 1);
	if (in_flags & CLAIMD_IN_TIED_RELAY)
		COUNTS_ADD(&s->tied_relay, 1);
	if (in_flags & CLAIMD_IN_TIED_NGINX)
		COUNTS_ADD(&s->tied_nginx, 1);
	if (in_flags & CLAIMD_IN_TIED_NODE)
		COUNTS_ADD(&s->tied_node, 1);
	if (!failed)
		return;
	COUNTS_ADD(&s->failures, 1);
	if (counts_confident(verdict, rule, in_flags)) {
		if (verdict == CLAIM_CLAIMED)
			COUNTS_ADD(&s->claimed, 1);
		else
			COUNTS_ADD(&s->unclaimed, 1);
		return;
	}
	COUNTS_ADD(&s->unknown, 1);
	COUNTS_ADD(&s->unknown_by[counts_unknown_reason(rule, in_flags) & (CLAIMD_RULE_SLOTS - 1)],
		   1);
}

/*
 * Adds one call of request 'request' (an id unique among the requests that
 * count into c; never 0) to its edge's counts: callee_failed from the retry
 * walk, request_failed from outcome_judged, teaches from
 * counts_teaches_edges (0 for a call outside requests). The callee's
 * failure counts once per request: the first of its failed calls to claim
 * last_failed does.
 */
OUTCOME_INLINE void counts_add_call(struct claimd_edge_counts *c, __u64 request, int callee_failed,
				    int request_failed, int teaches, __u32 eg_flags)
{
	__u64 prev;

	COUNTS_ADD(&c->calls, 1);
	if (eg_flags & CLAIMD_EG_RETRY)
		COUNTS_ADD(&c->retries, 1);
	if (!callee_failed)
		return;
	prev = c->last_failed;
	if (prev == request || !COUNTS_CAS(&c->last_failed, prev, request))
		return;
	COUNTS_ADD(&c->callee_failures, 1);
	if (!teaches)
		return;
	COUNTS_ADD(&c->tied_failures, 1);
	if (request_failed)
		COUNTS_ADD(&c->both_failed, 1);
}

/*
 * Calls outside any request: a service's (a process that served a request
 * or listens, struct claimd_outside) count on its service's edge, the edge
 * key's local_port its service's port; any other process's are root calls
 * (headers/observer.h), counted on the edge from the calling process to the
 * callee endpoint, the edge key's local_port 0 (a service's port is never
 * 0). Each such call is its own request: a callee failure is one call that
 * failed; it teaches no class (counts_add_call). A retry repeats the same
 * process's last call outside requests to the same callee endpoint
 * (outcome_is_retry), begun at most
 * CLAIMD_ROOT_RETRY_WINDOW_NS after that call ended. curl --retry waits 1,
 * 2, 4, ... s between attempts, libraries back off similarly: 30 s holds the
 * usual first retries, and a later call of the same target is a new one.
 */
#define CLAIMD_ROOT_PORT	    0
#define CLAIMD_ROOT_RETRY_WINDOW_NS (30ull * 1000000000ull)

/*
 * A process's last call outside requests to a callee endpoint: the retry
 * rule's memory. A service's pool threads call one callee side by side: its
 * call retries only its own thread's (tid).
 */
struct claimd_root_last {
	__u64 end_ns;
	__u32 target_hash;
	__u32 flags; /* CLAIMD_EG_* */
	__u8 method;
	__u8 outcome; /* enum claimd_outcome */
	__u8 pad[2];
	__u32 tid;
};

/* Does the call (start_ns, method, target) repeat prev? */
OUTCOME_INLINE int counts_root_is_retry(const struct claimd_root_last *prev, __u64 start_ns,
					__u32 method, __u32 target_hash)
{
	return prev &&
	       outcome_is_retry(prev->outcome, prev->flags, prev->method, prev->target_hash, method,
				target_hash) &&
	       start_ns >= prev->end_ns && start_ns - prev->end_ns <= CLAIMD_ROOT_RETRY_WINDOW_NS;
}

#endif /* CLAIMD_COUNTS_H */
