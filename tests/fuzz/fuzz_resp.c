// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the Redis framer (headers/resp_parse.h) over a
 * connection's two directions, through the shared driver and oracles of
 * fuzz_wire.h, and the framer's own invariants: states and types in
 * range, the aggregate stack no deeper than RESP_MAX_DEPTH, no element
 * count at zero in an open aggregate, a bulk's bytes left within the
 * largest bulk, a fence only while calls before it are pending.
 */
#include "resp_parse.h"
#include "fuzz_wire.h"

static struct resp_framer fa, fb;

static void init(void *f)
{
	resp_framer_init(f);
}

static void check(const void *p)
{
	const struct resp_framer *f = p;
	unsigned int d, i;

	for (d = 0; d < 2; d++) {
		const struct resp_dir *r = &f->dir[d];

		if (r->state >= RS__COUNT || r->depth > RESP_MAX_DEPTH ||
		    r->remaining > RESP_MAX_BULK || r->line > RESP_MAX_LINE)
			abort();
		if (f->calls.state != WIRE_OPEN)
			continue;
		for (i = 0; i < r->depth; i++)
			if (!r->left[i])
				abort();
		if (r->attr >> r->depth)
			abort();
		if (d == WIRE_TO_SERVER && (r->state == RS_LINE))
			abort(); /* commands have no line elements */
	}
	/* Fenced: the fence's call and one before it at least, until opaque. */
	if (f->calls.state == WIRE_OPEN && f->fenced && f->calls.pending < 2)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_wire_one(&resp_ops, &fa, &fb, sizeof(fa), init, check, data, size);
	return 0;
}
