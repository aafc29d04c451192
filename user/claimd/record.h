/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records from the observer's ring buffer, checked before use: a record is
 * trusted only after its type, version and size agree with headers/observer.h.
 */
#ifndef CLAIMD_RECORD_H
#define CLAIMD_RECORD_H

#include <stddef.h>

#include "observer.h"

/* Returns the record's type (enum claimd_record_type), or 0 when it is
 * malformed, with *why saying how. */
int record__check(const void *data, size_t size, const char **why);

/* An egress failed: a status of 500 or more, or a transport failure. */
static inline int record__egress_failed(const struct claimd_egress *e)
{
	return (e->flags & CLAIMD_EG_TRANSPORT) || e->status >= 500 ||
	       ((e->flags & CLAIMD_EG_DONE) && e->status == 0);
}

static inline int record__ingress_failed(const struct claimd_ingress *r)
{
	return r->status == 0 || r->status >= 500;
}

#endif
