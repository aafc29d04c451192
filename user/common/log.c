// SPDX-License-Identifier: GPL-2.0
/* The logger of claimd, claimctl and claimlab; see log.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#define LOG_LINE_MAX 1024

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
	static const char *const names[] = { "error: ", "warning: ", "", "debug: " };
	char line[LOG_LINE_MAX];
	va_list ap;
	int n;

	if (level > max_level)
		return;
	n = snprintf(line, sizeof(line), "%s: %s", log_prefix, names[level]);
	if (n < 0 || (size_t)n >= sizeof(line) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	n = strlen(line);
	line[n++] = '\n';
	/* One write per line: several processes may share the terminal. */
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}
