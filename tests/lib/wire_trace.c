// SPDX-License-Identifier: GPL-2.0
/*
 * Recorded conversations and event traces for the wire framers' tests
 * (wire_trace.h): reading a vector file, and running a framer over one
 * the way the BPF side would, chunk by chunk, in pieces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_progs.h"
#include "wire_trace.h"

int wire_vector_load(const char *name, struct wire_vector *v)
{
	char path[512];
	size_t off = 0, cap = 64;
	FILE *f;
	long size;

	memset(v, 0, sizeof(*v));
	snprintf(path, sizeof(path), "%s/tests/unit/vectors/%s", test__top_dir(), name);
	f = fopen(path, "rb");
	if (!f) {
		printf("%s: cannot open\n", path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto bad;
	v->size = size;
	v->bytes = malloc(v->size ? v->size : 1);
	v->chunks = malloc(cap * sizeof(*v->chunks));
	if (!v->bytes || !v->chunks || fread(v->bytes, 1, v->size, f) != v->size)
		goto bad;
	while (off < v->size) {
		struct wire_chunk *c;
		__u32 len;

		if (v->size - off < 5 || (v->bytes[off] != 'C' && v->bytes[off] != 'S'))
			goto bad;
		memcpy(&len, v->bytes + off + 1, 4);
		if (len > v->size - off - 5)
			goto bad;
		if (v->n == cap) {
			struct wire_chunk *more = realloc(v->chunks, 2 * cap * sizeof(*more));

			if (!more)
				goto bad;
			v->chunks = more;
			cap *= 2;
		}
		c = &v->chunks[v->n++];
		c->dir = v->bytes[off] == 'C' ? WIRE_TO_SERVER : WIRE_TO_CLIENT;
		c->len = len;
		c->data = v->bytes + off + 5;
		off += 5 + len;
	}
	fclose(f);
	return 0;
bad:
	printf("%s: not a vector file\n", path);
	fclose(f);
	wire_vector_free(v);
	return -1;
}

void wire_vector_free(struct wire_vector *v)
{
	free(v->bytes);
	free(v->chunks);
	memset(v, 0, sizeof(*v));
}

static void trace_add(struct wire_trace *t, __u32 dir, __u32 ev, const struct wire_calls *c)
{
	if (ev & WIRE_EV_CALL_START)
		t->starts++;
	if (ev & WIRE_EV_CALL_END) {
		t->ends++;
		if (c->outcome < WIRE_OUTCOME__COUNT)
			t->outcomes[c->outcome]++;
	}
	if (ev & WIRE_EV_ERROR)
		t->errors++;
	if (ev & WIRE_EV_OPAQUE)
		t->opaque++;
	if (t->n < WIRE_TRACE_MAX) {
		struct wire_event *e = &t->ev[t->n++];

		e->dir = dir;
		e->ev = ev;
		e->outcome = (ev & WIRE_EV_CALL_END) ? c->outcome : 0;
		e->pending = c->pending;
	}
}

void wire_trace_event(void *ctx, __u32 dir, __u32 ev)
{
	struct wire_trace *t = ctx;

	trace_add(t, dir, ev, t->ops->calls(t->framer));
}

void wire_trace_run(const struct wire_ops *ops, void *framer, const struct wire_chunk *chunks,
		    unsigned int n, size_t piece, int close, struct wire_trace *t)
{
	struct wire_calls *calls = (struct wire_calls *)ops->calls(framer);
	unsigned int i;

	memset(t, 0, sizeof(*t));
	t->ops = ops;
	t->framer = framer;
	for (i = 0; i < n; i++) {
		size_t off = 0;

		while (off < chunks[i].len) {
			size_t k = chunks[i].len - off;
			__u8 *copy;

			if (piece && k > piece)
				k = piece;
			/* A buffer of exactly the piece's size: ASan sees a read past it. */
			copy = malloc(k);
			if (!copy)
				return;
			memcpy(copy, chunks[i].data + off, k);
			wire_feed(ops, framer, chunks[i].dir, copy, k, wire_trace_event, t);
			free(copy);
			off += k;
		}
	}
	if (close && calls->state == WIRE_OPEN) {
		__u32 left = wire_close(calls), j;

		for (j = 0; j < left; j++) {
			trace_add(t, WIRE_TO_CLIENT, WIRE_EV_CALL_END, calls);
			calls->outcome = WIRE_RESET; /* all but the oldest */
		}
	}
}

__u64 wire_first_word(const void *b, size_t n, __u32 *got)
{
	__u64 w = 0;

	*got = n < 8 ? n : 8;
	memcpy(&w, b, *got);
	return w;
}

int wire_trace_same(const struct wire_trace *a, const struct wire_trace *b)
{
	return a->n == b->n && a->starts == b->starts && a->ends == b->ends &&
	       a->errors == b->errors && a->opaque == b->opaque &&
	       !memcmp(a->outcomes, b->outcomes, sizeof(a->outcomes)) &&
	       !memcmp(a->ev, b->ev, a->n * sizeof(a->ev[0]));
}

void wire_trace_pair(const struct wire_subject *w, const char *c, size_t clen, const char *s,
		     size_t slen, size_t cut_c, size_t cut_s, size_t piece, struct wire_trace *t)
{
	wire_trace_after(w, NULL, 0, c, clen, s, slen, cut_c, cut_s, piece, t);
}

void wire_trace_after(const struct wire_subject *w, const char *pre, size_t prelen, const char *c,
		      size_t clen, const char *s, size_t slen, size_t cut_c, size_t cut_s,
		      size_t piece, struct wire_trace *t)
{
	struct wire_chunk ch[5];
	unsigned int n = 0;

	if (prelen)
		ch[n++] = (struct wire_chunk){ WIRE_TO_CLIENT, prelen, (const __u8 *)pre };

	if (cut_c && cut_c < clen) {
		ch[n++] = (struct wire_chunk){ WIRE_TO_SERVER, cut_c, (const __u8 *)c };
		ch[n++] = (struct wire_chunk){ WIRE_TO_SERVER, clen - cut_c,
					       (const __u8 *)c + cut_c };
	} else {
		ch[n++] = (struct wire_chunk){ WIRE_TO_SERVER, clen, (const __u8 *)c };
	}
	if (cut_s && cut_s < slen) {
		ch[n++] = (struct wire_chunk){ WIRE_TO_CLIENT, cut_s, (const __u8 *)s };
		ch[n++] = (struct wire_chunk){ WIRE_TO_CLIENT, slen - cut_s,
					       (const __u8 *)s + cut_s };
	} else {
		ch[n++] = (struct wire_chunk){ WIRE_TO_CLIENT, slen, (const __u8 *)s };
	}
	w->init(w->framer);
	wire_trace_run(w->ops, w->framer, ch, n, piece, 1, t);
}

static struct wire_trace tr, ref;

/* The exchange cut at every byte of each side, and a byte at a time: as whole? */
static int same_every_split(const struct wire_subject *w, const struct wire_case *k)
{
	size_t i;

	wire_trace_after(w, k->pre, k->prelen, k->c, k->clen, k->s, k->slen, 0, 0, 0, &ref);
	for (i = 1; i < k->clen; i++) {
		wire_trace_after(w, k->pre, k->prelen, k->c, k->clen, k->s, k->slen, i, 0, 0, &tr);
		if (!wire_trace_same(&tr, &ref))
			return 0;
	}
	for (i = 1; i < k->slen; i++) {
		wire_trace_after(w, k->pre, k->prelen, k->c, k->clen, k->s, k->slen, 0, i, 0, &tr);
		if (!wire_trace_same(&tr, &ref))
			return 0;
	}
	wire_trace_after(w, k->pre, k->prelen, k->c, k->clen, k->s, k->slen, 0, 0, 1, &tr);
	return wire_trace_same(&tr, &ref);
}

void wire_check_cases(const struct wire_subject *w, const struct wire_case *cases, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct wire_case *k = &cases[i];
		const struct wire_calls *calls = w->ops->calls(w->framer);

		if (!test__start_subtest(k->name))
			continue;
		wire_trace_after(w, k->pre, k->prelen, k->c, k->clen, k->s, k->slen, 0, 0, 0, &tr);
		ASSERT_EQ(tr.starts, k->starts, "calls started");
		ASSERT_EQ(tr.outcomes[WIRE_OK], k->ok, "calls ok");
		ASSERT_EQ(tr.outcomes[WIRE_CALLEE_ERROR], k->err, "calls failed by an error reply");
		ASSERT_EQ(tr.outcomes[WIRE_PARTIAL], k->partial, "calls with an error inside");
		ASSERT_EQ(tr.outcomes[WIRE_RESET], k->reset, "calls ended by the close");
		ASSERT_EQ(tr.errors, k->errors, "framing lost");
		ASSERT_EQ(tr.opaque, k->opaque, "opaque");
		ASSERT_EQ(calls->state,
			  k->errors   ? WIRE_LOST
			  : k->opaque ? WIRE_OPAQUE
				      : WIRE_OPEN,
			  "connection state");
		ASSERT_TRUE(same_every_split(w, k), "same events at every split");
	}
}

void wire_check_vectors(const struct wire_subject *w, const struct wire_vector_case *cases,
			unsigned int n)
{
	static const size_t pieces[] = { 1, 3, 7, 64, 1000 };
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		const struct wire_vector_case *k = &cases[i];
		const struct wire_calls *calls = w->ops->calls(w->framer);
		struct wire_vector v;

		if (!test__start_subtest(k->file))
			continue;
		if (!ASSERT_OK(wire_vector_load(k->file, &v), "vector"))
			continue;
		w->init(w->framer);
		wire_trace_run(w->ops, w->framer, v.chunks, v.n, 0, 1, &ref);
		ASSERT_EQ(ref.starts, k->calls, "calls");
		ASSERT_EQ(ref.ends, k->opaque ? 0 : k->calls, "answers");
		ASSERT_EQ(ref.outcomes[WIRE_OK], k->ok, "ok");
		ASSERT_EQ(ref.outcomes[WIRE_CALLEE_ERROR], k->err, "error replies");
		ASSERT_EQ(ref.outcomes[WIRE_PARTIAL], k->partial, "errors inside a reply");
		ASSERT_EQ(ref.outcomes[WIRE_RESET], k->reset, "left unanswered at the end");
		ASSERT_EQ(ref.errors, 0, "framing kept");
		ASSERT_EQ(ref.opaque, k->opaque, "opaque");
		ASSERT_EQ(calls->pending, k->opaque ? k->calls : 0,
			  "nothing pending after the end");
		for (j = 0; j < sizeof(pieces) / sizeof(pieces[0]); j++) {
			w->init(w->framer);
			wire_trace_run(w->ops, w->framer, v.chunks, v.n, pieces[j], 1, &tr);
			ASSERT_TRUE(wire_trace_same(&tr, &ref), "same events in pieces");
		}
		wire_vector_free(&v);
	}
}
