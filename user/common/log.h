/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one logger of claimd, claimctl and claimlab: one line per message on
 * stderr, "<prefix>: <level>: <text>" (info lines without the level), each
 * line written with a single write(2) so that processes sharing a terminal
 * (the lab's nodes) never interleave halfway through a line. libclaim does
 * not log: it runs inside other people's services and answers "unknown"
 * instead of complaining.
 *
 * The error convention of user/ (style):
 *  - a function that can fail returns int: 0 on success, -1 with errno set
 *    (as libc does); a count or an fd where one is wanted (>= 0), -1 with
 *    errno on failure. Callers that must tell the reason read errno at once.
 *  - pointers: NULL on failure, errno set where libc set it (out of memory).
 *  - predicates return bool and never fail (is_*, *_failed, __is_retry).
 *  - where a message must carry detail libc's errno cannot (parsers of user
 *    input: names maps, memory files, control requests), the function fills
 *    a caller's char err[] and returns -1.
 *  - who reports: the function that decides to give up logs, once (pr_err);
 *    helpers below it return -1 and log nothing, so a failure is not told
 *    twice. Command-line errors go through argp_error (exit 64).
 * Exceptions, left where they are: libbpf's callbacks and libbpf-style
 * wrappers keep libbpf's -errno returns (kernel/observer.c, probes/); the lab's
 * lab_write_atomic returns -errno to its callers' existing checks.
 */
#ifndef CLAIMD_LOG_H
#define CLAIMD_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(enum log_level level);
/* The program's name or role on every line ("claimd", "claimctl", a lab node's name). */
void log_set_prefix(const char *prefix);
__attribute__((format(printf, 2, 3))) void log_msg(enum log_level level, const char *fmt, ...);

#define pr_err(...)   log_msg(LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
