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

#include <stdint.h>

#include "verdict.h"

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

/* "claimed", "unclaimed" or "unknown". */
CLAIM_API const char *claim_verdict_name(enum claim_verdict v);

#ifdef __cplusplus
}
#endif

#endif /* CLAIM_H */
