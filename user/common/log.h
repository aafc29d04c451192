/* SPDX-License-Identifier: GPL-2.0 */
/* Logging for claimd and claimctl: one line per message on stderr. */
#ifndef CLAIMD_LOG_H
#define CLAIMD_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(enum log_level level);
void log_set_prefix(const char *prefix);
__attribute__((format(printf, 2, 3))) void log_msg(enum log_level level, const char *fmt, ...);

#define pr_err(...)   log_msg(LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
