// SPDX-License-Identifier: GPL-2.0
/* Logging for claimd and claimctl: one line per message on stderr. */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static enum log_level max_level = LOG_INFO;
static const char *log_prefix = "claimd";

void log_set_level(enum log_level level)
{
	max_level = level;
}

void log_set_prefix(const char *prefix)
{
	log_prefix = prefix;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	va_list ap;

	if (level > max_level)
		return;
	fprintf(stderr, "%s: %s: ", log_prefix, names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
