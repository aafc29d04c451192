/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Edge classes into the kernel. claimd knows edges by service names; the
 * kernel knows a caller by (process, service port) and a callee by address.
 * This module remembers which instances run which service and which
 * addresses answer for which callee, and keeps the kernel's edge_class map
 * equal to the effective class of every edge, writing only what changed.
 * When the map is full, what does not fit is refused, counted, and tried
 * again at the next sync: room made by edges that lost their class is used.
 */
#ifndef CLAIMD_CLASSES_H
#define CLAIMD_CLASSES_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "model/edges.h"

struct classes;
struct names;

struct classes *classes__new(int map_fd);
void classes__free(struct classes *c);
/* Learns the caller instance and callee addresses in a record. */
void classes__note_ingress(struct classes *c, const struct claimd_ingress *r, struct names *names);
/* A service instance's name, a callee address's name (new or changed). */
void classes__note_instance(struct classes *c, uint32_t tgid, uint16_t port, const char *service);
void classes__note_callee(struct classes *c, const struct claimd_addr *a, const char *name);
void classes__forget_process(struct classes *c, uint32_t tgid);
/* Changes whenever an instance or callee was named anew or forgotten. */
unsigned long classes__changes(const struct classes *c);
/* Brings the kernel map up to date; returns entries written or deleted, or -errno. */
int classes__sync(struct classes *c, struct edges *e, double now, time_t wall);
/* Edge classes the kernel map refused (it was full) at the last sync, and how
 * many times an edge class was newly refused since start. */
size_t classes__refused(const struct classes *c);
unsigned long classes__refusals(const struct classes *c);
/* Is the edge's class in the kernel for at least one caller instance? */
bool classes__in_kernel(const struct classes *c, const char *caller, const char *callee);

#endif
