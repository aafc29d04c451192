// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the PostgreSQL framer (headers/pgwire_parse.h) over a
 * connection's two directions, through the shared driver and oracles of
 * fuzz_wire.h, and the framer's own invariants: states and phases in
 * range, a body's bytes left within the largest message, only 'S' or 'G'
 * awaited after an SSLRequest or GSSENCRequest, the login pending only
 * while its phase says so.
 */
#include "pgwire_parse.h"
#include "fuzz_wire.h"

static struct pg_framer fa, fb;

static void init(void *f)
{
	pg_framer_init(f);
}

static void check(const void *p)
{
	const struct pg_framer *f = p;
	unsigned int d;

	for (d = 0; d < 2; d++) {
		const struct pg_dir *r = &f->dir[d];

		if (r->state >= PG__COUNT || r->remaining > PG_MAX_MSG || r->pos > 4)
			abort();
	}
	if (f->phase > PG_PH_READY || (f->ssl && f->ssl != 'S' && f->ssl != 'G') || f->batch > 1)
		abort();
	if (f->calls.state == WIRE_OPEN && f->phase == PG_PH_LOGIN && !f->calls.pending)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_wire_one(&pg_ops, &fa, &fb, sizeof(fa), init, check, data, size);
	return 0;
}
