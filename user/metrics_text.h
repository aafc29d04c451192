/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A writer of the Prometheus text exposition format (version 0.0.4): a
 * growing buffer, one HELP and TYPE pair per family, then its samples with
 * their labels escaped. Metric and label names that would be invalid are
 * made valid ('_' for each bad character) rather than breaking a scrape.
 * Memory errors are sticky: the writer goes on quietly and promw__finish()
 * gives NULL.
 */
#ifndef CLAIMD_METRICS_TEXT_H
#define CLAIMD_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

struct promw {
	char *buf;
	size_t len, cap;
	bool oom;
};

enum prom_type { PROM_COUNTER, PROM_GAUGE };

void promw__init(struct promw *w);
/* Frees what promw__finish() did not hand out. */
void promw__release(struct promw *w);
/* The text, NUL-terminated (the caller frees it), or NULL if memory ran out. */
char *promw__finish(struct promw *w, size_t *len);

/* Starts a family: its HELP and TYPE lines. */
void promw__family(struct promw *w, const char *name, enum prom_type type, const char *help);
/* One sample. labels: name, value, name, value, ..., NULL (may be NULL). */
void promw__sample(struct promw *w, const char *name, const char *const labels[], double value);

/* Appends to out (of size len) the value as the format writes it: the
 * shortest decimal that reads back the same, NaN, +Inf or -Inf. */
void promw__format_value(double v, char *out, size_t len);

#endif
