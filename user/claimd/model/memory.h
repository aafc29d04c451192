/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The long-term memory of edge ratios, kept across restarts in the state
 * directory as memory.json: written atomically (temporary file, fsync,
 * rename, fsync of the directory), versioned. A file that cannot be read
 * as a whole is reported and moved aside, never half-loaded.
 */
#ifndef CLAIMD_MEMORY_H
#define CLAIMD_MEMORY_H

#include <stddef.h>
#include <time.h>

#include "model/edges.h"

#define MEMORY_FILE    "memory.json"
#define MEMORY_FORMAT  "claimd-memory"
#define MEMORY_VERSION 1

struct memory_load {
	int edges;	    /* edges loaded */
	int corrupt;	    /* the file was unreadable and moved aside */
	char moved_to[512]; /* where it went */
	char why[160];
};

/* Parses a memory file's text into e (only if all of it is valid). Returns the
 * number of edges, or -1 with the reason in why. */
int memory__parse(struct edges *e, const char *text, size_t len, char *why, size_t whylen);
/* Loads state_dir/memory.json, if there is one. Returns 0, or -1 on an I/O error
 * other than "no file"; a corrupt file is not an error (see out->corrupt). */
int memory__load(struct edges *e, const char *state_dir, time_t wall, struct memory_load *out);
/* Writes state_dir/memory.json atomically. Returns 0 or -errno. */
int memory__save(const struct edges *e, const char *state_dir, time_t wall);

#endif
