// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the MySQL/MariaDB framer (headers/mysql_parse.h) over
 * a connection's two directions, through the shared driver and oracles of
 * fuzz_wire.h, and the framer's own invariants: states, phases, answers
 * and layouts in range, no more commands queued than the ring holds and
 * no more than the calls pending, a payload's bytes left within its
 * packet's length.
 */
#include "mysql_parse.h"
#include "fuzz_wire.h"

static struct mysql_framer fa, fb;

static void init(void *f)
{
	mysql_framer_init(f);
}

static void check(const void *p)
{
	const struct mysql_framer *f = p;
	unsigned int d;

	for (d = 0; d < 2; d++) {
		const struct my_dir *r = &f->dir[d];

		if (r->state >= MY__COUNT || r->layout > MY_L_PREPARE || r->remaining > r->len ||
		    r->len > MY_MAX_PAYLOAD)
			abort();
	}
	if (f->phase > MY_PH_COMMAND || f->answer > MY_A_AUTH || f->head >= MY_MAX_PENDING ||
	    f->queued > MY_MAX_PENDING)
		abort();
	if (f->calls.state == WIRE_OPEN && f->queued > f->calls.pending)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_wire_one(&mysql_ops, &fa, &fb, sizeof(fa), init, check, data, size);
	return 0;
}
