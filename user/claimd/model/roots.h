/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Root calls: calls made outside any request by a process that serves
 * nothing (no listener: curl, a batch job, a load generator). The kernel
 * counts them (headers/counts.h: the root edge key, local_port
 * CLAIMD_ROOT_PORT, and the retry rule with its memory per process) on the
 * root edge from the process's name (names__process: CLAIMD_SERVICE, else
 * its command) to the callee. It sends a CLAIMD_REC_EGRESS record for the
 * process's first one (so that claimd names it while it lives, or by the
 * CLAIMD_SERVICE the kernel read from its environment: names__seen), when
 * someone traces, and when its counter map had no room (CLAIMD_EG_UNCOUNTED:
 * counted here). A process that serves (it served a request or listens)
 * makes no root calls: its calls outside requests count on its service's
 * edge (the record's local_port, the kernel's edge key), teaching no class.
 * Late calls (CLAIMD_EG_LATE: they belonged to a request already answered)
 * are counted apart. Root edges get no ratio and no class (edges.h).
 */
#ifndef CLAIMD_ROOTS_H
#define CLAIMD_ROOTS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "observer.h"

struct edge_counts;
struct edges;
struct names;

enum root_call {
	ROOT_CALL_EDGE = 0, /* counted on a root edge */
	ROOT_CALL_LATE,	    /* finished after its request had answered: not a root call */
	ROOT_CALL_COUNTED,  /* a record of a call the kernel counted already */
	ROOT_CALL_DROPPED,  /* out of memory */
	ROOT_CALL_SERVICE,  /* a service's call outside requests: counted on its edge */
};

struct roots_counts {
	uint64_t edge_calls; /* root calls counted on root edges */
};

struct roots;

struct roots *roots__new(void);
void roots__free(struct roots *r);

/*
 * Root calls of process tgid (comm: its command, or NULL to read it) to
 * callee: d, what they add (calls, callee failures, retries), onto its root
 * edge. now: monotonic seconds.
 */
enum root_call roots__count(struct roots *r, struct edges *e, struct names *names, __u32 tgid,
			    const char *comm, const struct claimd_addr *callee,
			    const struct edge_counts *d, double now);

/* One root egress record (checked by record__check): counted if the kernel could not. */
enum root_call roots__add(struct roots *r, struct edges *e, struct names *names,
			  const struct claimd_root_egress *rec, double now);

const struct roots_counts *roots__counts(const struct roots *r);

#endif
