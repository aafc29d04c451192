/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names of listeners gone (model/names.h, names__each_departed), kept
 * across restarts in the state directory as departed.json, beside the
 * edge memory learned under those names (model/memory.h). A claimd
 * started again while a cache is down names the cache's address as the
 * one before it did, so its calls stay on the edge, and the class, they
 * had: not on a new edge to "ip:port", unknown, whose failures rule 4
 * unclaims where the edge was fail-open.
 *
 * The socket files known served go with them, by every name
 * (names__each_socket_file), and back into the kernel's table at start
 * (kernel/unix_served.h, unix_served__remember): a cache stopped cleanly
 * while claimd was down took its file away, and its clients' failed
 * connects are failed calls all the same, not unknown. A name not
 * listened on for a week is let go at load: socket files come and go by
 * the thousand on some hosts (an ssh agent's at each login).
 */
#ifndef CLAIMD_DEPARTED_H
#define CLAIMD_DEPARTED_H

#include <stddef.h>

#include "model/names.h"

#define DEPARTED_FILE	 "departed.json"
#define DEPARTED_FORMAT	 "claimd-departed"
#define DEPARTED_VERSION 1
/* A socket file not listened on for this long is not put back. */
#define DEPARTED_SOCKET_FILE_KEEP_S (7 * 86400)

/* Writes state_dir/departed.json whole (host/statefile.h). 0 or -errno. */
int departed__save(struct names *n, const char *state_dir);

/*
 * Puts the names of text (a departed.json) back into n: the listeners'
 * where nothing listens now, and the socket files' listened on since a
 * week before now; all of them, or none when any is malformed. The count
 * put back, or -1 with the reason in why.
 */
int departed__parse(struct names *n, const char *text, size_t len, time_t now, char *why,
		    size_t whylen);

/* The same from state_dir/departed.json: 0 when there is none; -1 with why. */
int departed__load(struct names *n, const char *state_dir, time_t now, char *why, size_t whylen);

#endif /* CLAIMD_DEPARTED_H */
