// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the HTTP/1.x framer (headers/http_parse.h), both kinds,
 * with and without seek mode, fed in random splits. Input: a flags byte
 * (bit 0: response, bit 1: seek mode, bits 2-7: which answers are to HEAD
 * or CONNECT), a split seed byte (bit 6: read request ids and user agents,
 * HTTP_F_IDS; bit 7: small pieces), then the stream.
 *
 * Oracles, besides ASan and UBSan (every piece is copied into a buffer of
 * exactly its size, so a read past it is caught):
 * - the framer stays in range (state, kind, method, claim, head length,
 *   positions) after every piece and every event;
 * - http_feed (with the eight-byte fast paths) and a byte-by-byte driver
 *   give the same events and leave the same framer, piece by piece;
 * - without seek mode, framing does not depend on how the stream is split:
 *   the same events and final framer as the whole stream in one piece.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_parse.h"

#define MAX_EVENTS 4096

struct event {
	__u32 ev;
	__u8 state;
	__u8 method;
	__u8 claim;
	__u16 status;
	__u32 hash;
};

struct log {
	struct event ev[MAX_EVENTS];
	unsigned int n;
	unsigned int responses;
	__u8 methods; /* flags byte: the methods answered */
};

static void check_framer(const struct http_framer *f, __u8 kind)
{
	if (f->state >= HS__COUNT || f->kind != kind || f->method >= HTTP_M__COUNT ||
	    f->claim > HTTP_CLAIM_UNCLAIMED || f->head > HTTP_MAX_HEAD || f->hdr > HTTP_HDR_COUNT ||
	    (f->flags & ~(HTTP_F_HAVE_LEN | HTTP_F_CHUNKED | HTTP_F_SEEK | HTTP_F_IDS)) ||
	    f->id_kind >= HTTP_HDR_COUNT || (f->id_kind && f->id_kind < HTTP_HDR_TRACEPARENT) ||
	    (!f->id_kind && f->id_hash))
		abort();
	if (f->pos > 64 && f->state != HS_REQ_TARGET)
		abort();
	if (f->remaining > HTTP_MAX_LENGTH || (f->state == HS_RESP_STATUS && f->status > 999))
		abort();
	if (f->kind == HTTP_KIND_REQUEST && f->state >= HS_RESP_VERSION &&
	    f->state <= HS_RESP_REASON)
		abort();
	if (f->kind == HTTP_KIND_RESPONSE && f->state >= HS_REQ_METHOD &&
	    f->state <= HS_REQ_LINE_CR)
		abort();
}

/* What the kernel side does on an event: a response learns its request's method. */
static void on_event(void *ctx, struct http_framer *f, __u32 ev)
{
	struct log *l = ctx;
	struct event *e;

	check_framer(f, f->kind);
	if ((ev & HTTP_EV_ERROR) && f->state != HS_LOST)
		abort();
	if ((ev & HTTP_EV_RESYNC) && (f->state != HS_START || !(f->flags & HTTP_F_SEEK)))
		abort();
	if ((ev & HTTP_EV_START) && f->kind == HTTP_KIND_RESPONSE) {
		switch ((l->methods >> (2 + (l->responses % 3) * 2)) & 3) {
		case 1:
			f->method = HTTP_M_HEAD;
			break;
		case 2:
			f->method = HTTP_M_CONNECT;
			break;
		default:
			f->method = HTTP_M_GET;
		}
		l->responses++;
	}
	if (ev & HTTP_EV_START && f->kind == HTTP_KIND_RESPONSE &&
	    (f->status < 100 || f->status > 999))
		abort();
	if (l->n >= MAX_EVENTS)
		return;
	e = &l->ev[l->n++];
	e->ev = ev;
	e->state = f->state;
	e->method = f->method;
	e->claim = f->claim;
	e->status = f->status;
	e->hash = f->hash;
}

/* http_feed without the eight-byte fast paths: the reference. */
static __u64 feed_bytes(struct http_framer *f, const __u8 *buf, __u64 len, struct log *l)
{
	__u64 off = 0;

	while (off < len) {
		__u32 ev = 0;

		if (http_skipping(f))
			off += http_skip(f, len - off, &ev);
		else if (http_swallowing(f))
			return len;
		else
			ev = http_step(f, buf[off++]);
		if (ev)
			on_event(l, f, ev);
		if (ev & HTTP_EV_RESYNC)
			return len;
	}
	return off;
}

static struct log whole, fast, slow;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_framer fw, ff, fs;
	__u8 kind, seek, seed;
	size_t off = 0;

	if (size < 2)
		return 0;
	kind = data[0] & 1;
	seek = !!(data[0] & 2);
	seed = data[1];
	data += 2;
	size -= 2;
	memset(&whole, 0, sizeof(whole));
	memset(&fast, 0, sizeof(fast));
	memset(&slow, 0, sizeof(slow));
	whole.methods = fast.methods = slow.methods = data[-2];
	http_framer_init(&fw, kind, seek);
	http_framer_init(&ff, kind, seek);
	http_framer_init(&fs, kind, seek);
	if (seed & 0x40)
		fw.flags = ff.flags = fs.flags = fw.flags | HTTP_F_IDS;

	/* The stream in pieces of pseudo-random sizes (1 to 64 bytes, or the rest). */
	while (off < size) {
		size_t n = 1 + ((seed * 37u + off * 13u) % 64u), done_f, done_s;
		__u8 *piece;

		if (seed & 0x80)
			n = n % 9 + 1; /* small pieces: the fast paths' edges */
		if (n > size - off)
			n = size - off;
		piece = malloc(n);
		if (!piece)
			return 0;
		memcpy(piece, data + off, n);
		done_f = http_feed(&ff, piece, n, on_event, &fast);
		done_s = feed_bytes(&fs, piece, n, &slow);
		free(piece);
		if (done_f > n || done_s != done_f)
			abort();
		check_framer(&ff, kind);
		if (memcmp(&ff, &fs, sizeof(ff)) || fast.n != slow.n ||
		    memcmp(fast.ev, slow.ev, fast.n * sizeof(fast.ev[0])))
			abort();
		off += n;
		seed = seed * 5 + 1;
	}
	if (!seek) {
		__u8 *all = malloc(size ? size : 1);

		if (!all)
			return 0;
		memcpy(all, data, size);
		http_feed(&fw, all, size, on_event, &whole);
		free(all);
		if (memcmp(&fw, &ff, sizeof(fw)) || whole.n != fast.n ||
		    memcmp(whole.ev, fast.ev, fast.n * sizeof(fast.ev[0])))
			abort();
	}
	/* The connection closes: only a body framed by the close may end. */
	if (http_close(&ff) & ~HTTP_EV_END)
		abort();
	check_framer(&ff, kind);
	return 0;
}
