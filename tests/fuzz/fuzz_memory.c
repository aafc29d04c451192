// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the state-file loaders, which read the state directory
 * at start: memory.json (memory__parse) and departed.json
 * (departed__parse). A file is taken whole or not at all: on refusal it
 * must say why and leave the edge table (the names gone, the socket
 * files) empty; on
 * success every edge it counted must be there, and saving the table must
 * work.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/unix_listeners.h"
#include "model/departed.h"
#include "model/edges.h"
#include "model/memory.h"
#include "unixaddr.h"

static int count;
static int named;

static void count_departed(const struct claimd_addr *local, const char *name, void *ctx)
{
	(void)ctx;
	if (!local->port || !name || !name[0])
		abort();
	named++;
}

/* Fed as at this time: a week back from it is kept. */
#define NOW 1800000000

static void count_socket_file(__u64 hash, const char *path, __u64 bound, time_t seen, void *ctx)
{
	(void)bound, (void)ctx;
	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) > CLAIMD_UNIX_NAME_MAX ||
	    hash != unix_listeners__hash(path) || seen < NOW - DEPARTED_SOCKET_FILE_KEEP_S)
		abort();
	named++;
}

/* The same bytes as departed.json: all of its names put back, or none and a reason. */
static void departed_input(const char *text, size_t size)
{
	struct names *n = names__new();
	char why[160] = "";
	int r;

	if (!n)
		return;
	r = departed__parse(n, text, size, NOW, why, sizeof(why));
	named = 0;
	names__each_departed(n, count_departed, NULL);
	names__each_socket_file(n, count_socket_file, NULL);
	if ((r < 0 && (!why[0] || named)) || (r >= 0 && named != r))
		abort();
	names__free(n);
}

static void count_edge(struct edge *ed, void *ctx)
{
	(void)ctx;
	if (!ed->caller || !ed->callee || !ed->in_memory)
		abort();
	count++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct edges_config cfg = { .window_s = 300,
				    .memory_half_life_s = 14 * 86400.0,
				    .min_failures = 20,
				    .fail_status = 500,
				    .use_memory = true };
	struct edges *e = edges__new(&cfg);
	char why[160] = "";
	char *text;
	int n;

	if (!e)
		return 0;
	/* Exactly the file's bytes: no terminating NUL to lean on. */
	text = malloc(size ? size : 1);
	if (!text) {
		edges__free(e);
		return 0;
	}
	memcpy(text, data, size);
	n = memory__parse(e, text, size, why, sizeof(why));
	count = 0;
	edges__for_each(e, count_edge, NULL);
	if (n < 0 && (!why[0] || count))
		abort();
	/* Duplicate caller/callee pairs collapse into one edge. */
	if (n >= 0 && (count > n || (n > 0 && !count)))
		abort();
	if (n >= 0) {
		struct json_object *arr = edges__json(e, 1.0, 1700000000);

		json_object_put(arr);
	}
	departed_input(text, size);
	free(text);
	edges__free(e);
	return 0;
}
