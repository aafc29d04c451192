/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A file of claimd's state directory (--state-dir), written whole or not
 * at all: into a temporary file beside it, synced, renamed over it, and the
 * rename synced too, so that a crash leaves the old file or the new one.
 * The edge memory (model/memory.h) and the names of listeners gone
 * (model/departed.h) are kept so.
 */
#ifndef CLAIMD_STATEFILE_H
#define CLAIMD_STATEFILE_H

#include <stddef.h>

/* Writes text, then a newline, as dir/name (dir made when missing). 0 or -errno. */
int statefile__write(const char *dir, const char *name, const char *text);

/*
 * The whole of file path (a malloc'd buffer, its length in *len), or NULL
 * with errno set: ENOENT, an I/O error, or EFBIG past max bytes.
 */
char *statefile__read(const char *path, size_t max, size_t *len);

struct json_object;

/*
 * text (len bytes, no NUL needed) as a state file's one JSON document: at
 * most max bytes, an object whose "format" is format, whose "version" is
 * version, and whose key holds an array, into *list. The document (the
 * caller puts it), or NULL with the reason in why.
 */
struct json_object *statefile__parse(const char *text, size_t len, size_t max, const char *format,
				     int version, const char *key, struct json_object **list,
				     char *why, size_t whylen);

#endif /* CLAIMD_STATEFILE_H */
