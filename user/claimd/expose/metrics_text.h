/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A writer of the Prometheus text exposition format (version 0.0.4): a
 * growing buffer, one HELP and TYPE pair per family, then its samples with
 * their labels escaped. Metric and label names that would be invalid are
 * made valid ('_' for each bad character) rather than breaking a scrape.
 * Memory errors are sticky: the writer goes on quietly and metrics_text__finish()
 * gives NULL.
 */
#ifndef CLAIMD_METRICS_TEXT_H
#define CLAIMD_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

struct metrics_text {
	char *buf;
	size_t len, cap;
	bool oom;
};

enum prom_type { PROM_COUNTER, PROM_GAUGE };

void metrics_text__init(struct metrics_text *w);
/* Frees what metrics_text__finish() did not hand out. */
void metrics_text__release(struct metrics_text *w);
/* The text, NUL-terminated (the caller frees it), or NULL if memory ran out. */
char *metrics_text__finish(struct metrics_text *w, size_t *len);

/* Starts a family: its HELP and TYPE lines. */
void metrics_text__family(struct metrics_text *w, const char *name, enum prom_type type,
			  const char *help);
/* One sample. labels: name, value, name, value, ..., NULL (may be NULL). */
void metrics_text__sample(struct metrics_text *w, const char *name, const char *const labels[],
			  double value);

/* Appends to out (of size len) the value as the format writes it: the
 * shortest decimal that reads back the same, NaN, +Inf or -Inf. */
void metrics_text__format_value(double v, char *out, size_t len);

#endif
