/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records from the observer's ring buffer, checked before use: a record is
 * trusted only after its type, version and size agree with headers/observer.h.
 * How a record's calls and request ended: headers/outcome.h.
 */
#ifndef CLAIMD_RECORD_H
#define CLAIMD_RECORD_H

#include <stddef.h>

#include "observer.h"

/* Returns the record's type (enum claimd_record_type), or 0 when it is
 * malformed, with *why saying how. */
int record__check(const void *data, size_t size, const char **why);

#endif
