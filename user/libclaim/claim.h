/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libclaim: error ownership for a service's retry logic.
 *
 * claimd publishes, for every thread serving a request on this host, what
 * the verdict of that request would be if it failed now: claimed (the error
 * starts here; retrying this service can help) or unclaimed (a dependency
 * failed; retrying here only adds load). libclaim maps claimd's verdict map
 * read-only; after claim_open(), claim_current() makes no system call.
 *
 * Works unprivileged. With no claimd running, every answer is "unknown",
 * never an error, never a wait. Thread-safe: one handle serves all threads.
 */
#ifndef CLAIM_H
#define CLAIM_H

#include <stddef.h>
#include <stdint.h>

#include "claim_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CLAIM_BUILD)
#define CLAIM_API __attribute__((visibility("default")))
#else
#define CLAIM_API
#endif

#define CLAIM_DEFAULT_PATH "/sys/fs/bpf/claimd/" CLAIM_PIN_NAME
#define CLAIM_ENV_PATH	   "CLAIMD_VERDICTS" /* overrides the default path */

struct claim;

/* What claimd says about the request the calling thread is serving. */
struct claim_result {
	enum claim_verdict verdict; /* CLAIM_CLAIMED, CLAIM_UNCLAIMED or CLAIM_UNKNOWN */
	enum claim_rule rule;	    /* why (see verdict.h) */
	int cause_known;	    /* 1 when cause_addr/cause_port name the failed call */
	uint16_t cause_port;	    /* the callee whose failure decided */
	uint8_t cause_addr[16];	    /* IPv6, or IPv4 mapped into IPv6 */
};

/*
 * Maps the verdict map at path (NULL: $CLAIMD_VERDICTS, else
 * CLAIM_DEFAULT_PATH). Returns a handle even when the map is missing or
 * claimd is not running: it then answers unknown. NULL only when out of
 * memory.
 */
CLAIM_API struct claim *claim_open(const char *path);
CLAIM_API void claim_close(struct claim *c);

/* 1 when the handle maps a live claimd's verdicts. */
CLAIM_API int claim_connected(const struct claim *c);

/*
 * The running verdict of the request this thread serves (what it would be if
 * the request failed now). Fills *out when given; returns out->verdict. No
 * system call, except a gettid() the first time a thread asks.
 */
CLAIM_API enum claim_verdict claim_current(const struct claim *c, struct claim_result *out);

/*
 * The verdict map as this handle maps it, read-only, for a binding that
 * reads its thread's slot itself rather than through a call (Java: a call
 * through JNA costs more than the read): the layout of headers/verdict.h,
 * CLAIM_MAP_VERSION, checked at claim_open. NULL when nothing is mapped;
 * *len its length. Valid until claim_close.
 */
CLAIM_API const void *claim_map(const struct claim *c, size_t *len);

/*
 * claim_current() in one word, for bindings where a structure costs more
 * than the lookup (Python's ctypes): verdict | rule << 8 | cause_port << 16
 * (cause_port 0: no cause known; its address is claim_current()'s).
 */
CLAIM_API uint32_t claim_current_packed(const struct claim *c);

/* "claimed", "unclaimed" or "unknown". */
CLAIM_API const char *claim_verdict_name(enum claim_verdict v);
/* Why: "no-failed-call", "fail-close-edge", "multiplexed", ... ("none" out of range). */
CLAIM_API const char *claim_rule_name(enum claim_rule r);

/* ---- Explicit context, for event loops ---- */

/*
 * A thread-per-request service needs nothing more: claimd follows each
 * thread. A service where one thread works on many requests in turn (an
 * event loop) says which one it is working on: claim_context_enter(fd) with
 * the accepted socket the request came on, before reading it or doing
 * anything for it, and claim_context_leave() when it goes back to its loop.
 * claimd then keeps each request's calls apart, and claim_current() answers
 * for the request entered. Each is an empty function that claimd watches
 * with a uprobe, so where claimd runs each call costs a hit of it: on
 * x86-64 a kernel that optimizes uprobes (Linux 6.18) turns it into one
 * system call through its trampoline (about 1 us a call on a VM), where an
 * older one takes a breakpoint's trap and a single step (13 us on the same
 * VM). Without claimd they cost a function call.
 */
CLAIM_API void claim_context_enter(int fd);
CLAIM_API void claim_context_leave(void);

/* ---- On the wire ---- */

#define CLAIM_HEADER "x-error-claim"

/*
 * Formats the header a failed response should carry: "x-error-claim:
 * claimed\r\n" or "...unclaimed\r\n". For CLAIM_UNKNOWN nothing is written
 * (the caller then treats the failure as unclaimed-by-default: at most one
 * retry). Returns the length written (0 for unknown), or -1 when len is too
 * small. buf is always NUL-terminated when len > 0.
 */
CLAIM_API int claim_format_header(enum claim_verdict v, char *buf, size_t len);

/* The verdict an x-error-claim header value carries (case-insensitive,
 * surrounding blanks ignored); CLAIM_NONE when it is neither. */
CLAIM_API enum claim_verdict claim_parse_header(const char *value, size_t len);

/* ---- Retries ---- */

/*
 * A retry budget: a token bucket that earns 'ratio' tokens per request
 * (0.1 by default: retries up to 10% of requests) and holds at most
 * 'burst' tokens (at least 1). Thread-safe.
 */
struct claim_budget;

CLAIM_API struct claim_budget *claim_budget_new(double ratio, double burst);
CLAIM_API void claim_budget_free(struct claim_budget *b);
/* One request went out (first attempts only): earns ratio tokens. */
CLAIM_API void claim_budget_request(struct claim_budget *b);
/* Spends a token for a retry: 1 if there was one, else 0. */
CLAIM_API int claim_budget_take(struct claim_budget *b);
/* Tokens now (for tests and metrics). */
CLAIM_API double claim_budget_tokens(struct claim_budget *b);

/* What came back from one attempt of a call. */
struct claim_outcome {
	int status;		   /* HTTP status; 0 for a transport failure */
	enum claim_verdict header; /* its x-error-claim, CLAIM_NONE when absent */
};

struct claim_retry_opts {
	int attempt;		     /* the attempt that just failed: 1 for the first */
	int max_attempts;	     /* 0: 2 (one retry) */
	int fail_status;	     /* statuses from this up fail; 0: 500 */
	struct claim_budget *budget; /* NULL: no budget */
	uint64_t deadline_ns;	     /* CLOCK_MONOTONIC; 0: none */
	uint64_t attempt_ns;	     /* time an attempt needs; with a deadline */
};

enum claim_decision {
	CLAIM_RETRY = 0,
	CLAIM_DONE_OK,	      /* not a failure: nothing to retry */
	CLAIM_DONE_UNCLAIMED, /* the callee passed the failure up: retrying it adds load */
	CLAIM_DONE_ONCE,      /* no claim header: at most one retry, already made */
	CLAIM_DONE_ATTEMPTS,  /* max_attempts reached */
	CLAIM_DONE_BUDGET,    /* the budget said no: the failure counts as handled */
	CLAIM_DONE_DEADLINE,  /* not enough time left for another attempt */
};

/*
 * The caller's decision after a failed attempt (design.md):
 *   transport failure                 -> retry, within budget
 *   failure, x-error-claim: claimed   -> retry, within budget
 *   failure, x-error-claim: unclaimed -> no
 *   failure, no claim header          -> at most once, within budget
 * plus max_attempts and the deadline. A budget token is spent only when the
 * answer is CLAIM_RETRY.
 */
CLAIM_API enum claim_decision claim_should_retry(const struct claim_outcome *out,
						 const struct claim_retry_opts *opts);
CLAIM_API const char *claim_decision_name(enum claim_decision d);

#ifdef __cplusplus
}
#endif

#endif /* CLAIM_H */
