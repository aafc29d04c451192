/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's counts (headers/counts.h), read into edges and services: each
 * read takes what every counter gained since the last one. A counter's key
 * (a service instance; an instance and a callee endpoint) is named once and
 * linked to its service or edge; again only when names change. A read that
 * finds the kernel counted no request since the last one costs one lookup.
 */
#ifndef CLAIMD_KCOUNTS_H
#define CLAIMD_KCOUNTS_H

#include <stdint.h>
#include <time.h>

#include <linux/types.h>

struct edges;
struct names;
struct classes;
struct roots;

/* Where the counts go. */
struct kcounts_into {
	struct edges *edges;
	struct names *names;
	struct classes *classes; /* told each instance's and callee's name */
	struct roots *roots;	 /* root calls (the root edge key, headers/counts.h) */
};

struct kcounts;

/* The kernel's side (bpf/observer.bpf.c, headers/counts.h). */
struct kcounts_maps {
	int edge_fd, service_fd; /* edge_counts, service_counts */
	int service_forget_fd;	 /* claimd_forget_services: a gone instance's slots back */
	int dirty_edges_fd, dirty_services_fd; /* what changed since the last read */
	volatile __u32 *epoch;		       /* count_epoch; NULL: read everything */
};

/* NULL when out of memory. */
struct kcounts *kcounts__new(const struct kcounts_maps *m);
void kcounts__free(struct kcounts *k);

/*
 * Reads the counters if the kernel counted requests or root calls since the
 * last read (counted: CLAIMD_ST_COUNTED, CLAIMD_ST_ROOT_CALLS,
 * CLAIMD_ST_CALLS_OUTSIDE and CLAIMD_ST_LATE_CALLS, summed) or
 * names changed, and adds what they gained to into's edges, services and
 * root calls. Reads only the counters the dirty lists name, and every
 * counter at the first read, when a list overflowed, and at least every 30
 * s. now: monotonic seconds; wall: time(NULL). Returns how many counters
 * gained, or -errno.
 */
int kcounts__poll(struct kcounts *k, uint64_t counted, const struct kcounts_into *into, double now,
		  time_t wall);
/* Reads of every counter, and of the changed ones only, so far. */
uint64_t kcounts__full_reads(const struct kcounts *k);
uint64_t kcounts__dirty_reads(const struct kcounts *k);

/* Forgets the counters of processes that exited, here and in the kernel,
 * each read a last time into into. Returns how many went. */
int kcounts__forget(struct kcounts *k, const __u32 *tgids, int n, const struct kcounts_into *into,
		    double now, time_t wall);

/* Each process with counters (an edge's caller, a service instance), to fn; once or more. */
void kcounts__each_process(struct kcounts *k, void (*fn)(__u32 tgid, void *ctx), void *ctx);

/* Counters followed (edges, service instances). */
size_t kcounts__edges(const struct kcounts *k);
size_t kcounts__services(const struct kcounts *k);

#endif
