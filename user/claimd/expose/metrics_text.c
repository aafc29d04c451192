// SPDX-License-Identifier: GPL-2.0
/* The Prometheus text format writer; see metrics_text.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expose/metrics_text.h"

void metrics_text__init(struct metrics_text *w)
{
	memset(w, 0, sizeof(*w));
}

void metrics_text__release(struct metrics_text *w)
{
	free(w->buf);
	metrics_text__init(w);
}

char *metrics_text__finish(struct metrics_text *w, size_t *len)
{
	char *s = w->oom ? NULL : w->buf;

	if (s && len)
		*len = w->len;
	if (!s)
		free(w->buf);
	metrics_text__init(w);
	return s;
}

static bool reserve(struct metrics_text *w, size_t more)
{
	size_t cap;
	char *p;

	if (w->oom)
		return false;
	if (w->len + more + 1 <= w->cap)
		return true;
	cap = w->cap ? w->cap : 4096;
	while (cap < w->len + more + 1)
		cap *= 2;
	p = realloc(w->buf, cap);
	if (!p) {
		w->oom = true;
		return false;
	}
	w->buf = p;
	w->cap = cap;
	return true;
}

static void put(struct metrics_text *w, const char *s, size_t n)
{
	if (!reserve(w, n))
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = 0;
}

static void puts_(struct metrics_text *w, const char *s)
{
	put(w, s, strlen(s));
}

/* A name as the format allows it: [a-zA-Z_:][a-zA-Z0-9_:]* (no ':' in labels). */
static void put_name(struct metrics_text *w, const char *name, bool label)
{
	const char *p;

	if (!*name)
		put(w, "_", 1);
	for (p = name; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (!label && c == ':') || (p != name && c >= '0' && c <= '9');

		put(w, ok ? &c : "_", 1);
	}
}

/* Escapes backslash and newline, and the double quote in label values. */
static void put_escaped(struct metrics_text *w, const char *s, bool quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			put(w, "\\\\", 2);
		else if (*s == '\n')
			put(w, "\\n", 2);
		else if (quote && *s == '"')
			put(w, "\\\"", 2);
		else
			put(w, s, 1);
	}
}

void metrics_text__family(struct metrics_text *w, const char *name, enum prom_type type,
			  const char *help)
{
	puts_(w, "# HELP ");
	put_name(w, name, false);
	put(w, " ", 1);
	put_escaped(w, help, false);
	puts_(w, "\n# TYPE ");
	put_name(w, name, false);
	puts_(w, type == PROM_COUNTER ? " counter\n" : " gauge\n");
}

void metrics_text__format_value(double v, char *out, size_t len)
{
	if (isnan(v)) {
		snprintf(out, len, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(out, len, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	snprintf(out, len, "%.15g", v);
	if (strtod(out, NULL) != v)
		snprintf(out, len, "%.17g", v);
}

void metrics_text__sample(struct metrics_text *w, const char *name, const char *const labels[],
			  double value)
{
	char num[40];
	int i;

	put_name(w, name, false);
	if (labels && labels[0]) {
		put(w, "{", 1);
		for (i = 0; labels[i] && labels[i + 1]; i += 2) {
			if (i)
				put(w, ",", 1);
			put_name(w, labels[i], true);
			put(w, "=\"", 2);
			put_escaped(w, labels[i + 1], true);
			put(w, "\"", 1);
		}
		put(w, "}", 1);
	}
	metrics_text__format_value(value, num, sizeof(num));
	put(w, " ", 1);
	puts_(w, num);
	put(w, "\n", 1);
}
