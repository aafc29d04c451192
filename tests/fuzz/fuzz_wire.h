/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The driver the wire framers' libFuzzer targets share (fuzz_resp.c,
 * fuzz_pg.c, fuzz_mysql.c). Input: a seed byte, then segments, each a
 * header byte (bit 0: the direction, WIRE_TO_SERVER or WIRE_TO_CLIENT; the
 * other bits: its length less one, 1 to 128) and its bytes: a
 * conversation as the syscalls of one connection would move it.
 *
 * Oracles, besides ASan and UBSan (every piece is copied into a buffer of
 * exactly its size, so a read past it is caught):
 * - the framer's own invariants (the target's check) after every piece;
 * - the calls' count: started less ended is what is pending, while the
 *   connection is framed; an end never comes with nothing pending; once
 *   lost or opaque, nothing more happens;
 * - framing does not depend on how a segment is cut: each segment fed
 *   whole, and cut in pieces the seed chooses, give the same events and
 *   leave the same framer.
 *
 * Seeds (tests/fuzz/corpus/<target>/): the first 4 KiB of the
 * conversations recorded from real servers (tests/unit/vectors/README) in
 * this format, and hand-written exchanges of the cases the unit tests
 * name (RESP3's types, pushes, attributes, a bulk of 2^40 bytes).
 */
#ifndef CLAIMD_FUZZ_WIRE_H
#define CLAIMD_FUZZ_WIRE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire_parse.h"

#define FUZZ_WIRE_EVENTS 4096

struct fuzz_wire_log {
	__u32 ev[FUZZ_WIRE_EVENTS];
	unsigned int n;
	__u64 starts, ends;
	const struct wire_calls *calls;
};

static void fuzz_wire_event(void *ctx, __u32 dir, __u32 ev)
{
	struct fuzz_wire_log *l = ctx;

	(void)dir;
	if (ev & ~(__u32)(WIRE_EV_CALL_START | WIRE_EV_CALL_END | WIRE_EV_ERROR | WIRE_EV_OPAQUE))
		abort();
	if ((ev & WIRE_EV_ERROR) && l->calls->state != WIRE_LOST)
		abort();
	if ((ev & WIRE_EV_OPAQUE) && l->calls->state != WIRE_OPAQUE)
		abort();
	if ((ev & WIRE_EV_CALL_END) && l->calls->outcome >= WIRE_OUTCOME__COUNT)
		abort();
	l->starts += !!(ev & WIRE_EV_CALL_START);
	l->ends += !!(ev & WIRE_EV_CALL_END);
	if (l->n < FUZZ_WIRE_EVENTS)
		l->ev[l->n++] = ev | (dir << 8);
}

/* One piece of a segment, copied to a buffer of its exact size. */
static void fuzz_wire_piece(const struct wire_ops *ops, void *framer, __u32 dir, const __u8 *p,
			    size_t n, struct fuzz_wire_log *l)
{
	__u8 *copy = malloc(n ? n : 1);
	__u64 done;

	if (!copy)
		abort();
	memcpy(copy, p, n);
	done = wire_feed(ops, framer, dir, copy, n, fuzz_wire_event, l);
	free(copy);
	if (done != n)
		abort();
}

static void fuzz_wire_counts(const struct fuzz_wire_log *l, const struct wire_calls *c)
{
	if (c->state == WIRE_OPEN && l->starts - l->ends != c->pending)
		abort();
	if (c->pending > WIRE_MAX_PENDING || c->state > WIRE_LOST)
		abort();
}

static struct fuzz_wire_log fuzz_whole, fuzz_cut;

/*
 * Runs the input through two framers of size bytes (a and b, made new by
 * init): segments whole into a, cut into b. check asserts the framer's own
 * invariants.
 */
static void fuzz_wire_one(const struct wire_ops *ops, void *a, void *b, size_t size,
			  void (*init)(void *), void (*check)(const void *), const uint8_t *data,
			  size_t len)
{
	size_t off = 1;
	__u8 seed;

	if (len < 1)
		return;
	seed = data[0];
	init(a);
	init(b);
	memset(&fuzz_whole, 0, sizeof(fuzz_whole));
	memset(&fuzz_cut, 0, sizeof(fuzz_cut));
	fuzz_whole.calls = ops->calls(a);
	fuzz_cut.calls = ops->calls(b);
	while (off < len) {
		__u32 dir = data[off] & 1;
		size_t n = (data[off] >> 1) + 1, at = 0;
		__u8 before = ops->calls(a)->state;

		off++;
		if (n > len - off)
			n = len - off;
		fuzz_wire_piece(ops, a, dir, data + off, n, &fuzz_whole);
		while (at < n) {
			size_t k = 1 + (seed * 7u + at) % (seed & 0x80 ? 3u : 17u);

			if (k > n - at)
				k = n - at;
			fuzz_wire_piece(ops, b, dir, data + off + at, k, &fuzz_cut);
			at += k;
		}
		off += n;
		seed = seed * 5 + 1;
		check(a);
		fuzz_wire_counts(&fuzz_whole, ops->calls(a));
		if (before != WIRE_OPEN &&
		    memcmp(ops->calls(a), ops->calls(b), sizeof(struct wire_calls)))
			abort();
		if (memcmp(a, b, size) || fuzz_whole.n != fuzz_cut.n ||
		    memcmp(fuzz_whole.ev, fuzz_cut.ev, fuzz_whole.n * sizeof(fuzz_whole.ev[0])))
			abort();
	}
	/* The connection ends: its pending calls, every one, end. */
	if (ops->calls(a)->state == WIRE_OPEN &&
	    wire_close((struct wire_calls *)ops->calls(a)) != fuzz_whole.starts - fuzz_whole.ends)
		abort();
}

#endif
