/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the wire framers' tests share (tests/unit/test_resp_parse.c,
 * test_pgwire_parse.c, test_mysql_parse.c, tests/bpf/test_proto_verify.c):
 * a conversation recorded from a real server (tests/unit/vectors/, records
 * of one direction's chunk each), read back; and a trace of the events a
 * framer reports over a conversation, fed whole, a byte at a time or cut
 * in pieces, so that runs can be compared.
 */
#ifndef CLAIMD_TEST_WIRE_TRACE_H
#define CLAIMD_TEST_WIRE_TRACE_H

#include <stddef.h>

#include "wire_parse.h"

#define WIRE_TRACE_MAX 4096

/* One event as the framer reported it, with the calls' count then. */
struct wire_event {
	__u8 dir;
	__u8 ev;
	__u8 outcome; /* at a WIRE_EV_CALL_END */
	__u32 pending;
};

struct wire_trace {
	struct wire_event ev[WIRE_TRACE_MAX];
	unsigned int n;	     /* events kept (the first WIRE_TRACE_MAX) */
	unsigned int starts; /* WIRE_EV_CALL_START */
	unsigned int ends;   /* WIRE_EV_CALL_END */
	unsigned int outcomes[WIRE_OUTCOME__COUNT];
	unsigned int errors; /* WIRE_EV_ERROR */
	unsigned int opaque; /* WIRE_EV_OPAQUE */
	/* For the callback: the framer's calls. */
	const struct wire_ops *ops;
	const void *framer;
};

/* A recorded conversation: chunks in order, each of one direction. */
struct wire_chunk {
	__u8 dir; /* WIRE_TO_SERVER ('C' in the file), WIRE_TO_CLIENT ('S') */
	__u32 len;
	const __u8 *data;
};

struct wire_vector {
	__u8 *bytes; /* the file */
	size_t size;
	struct wire_chunk *chunks;
	unsigned int n;
};

/* Reads tests/unit/vectors/<name>; 0, or -1 (printed). */
int wire_vector_load(const char *name, struct wire_vector *v);
void wire_vector_free(struct wire_vector *v);

/* The event callback wire_feed takes: ctx a struct wire_trace. */
void wire_trace_event(void *ctx, __u32 dir, __u32 ev);

/*
 * A conversation through a framer (already initialised): each chunk fed in
 * pieces of at most piece bytes (0: whole), then, with close, the
 * connection's end (its unanswered calls counted as ends with the close's
 * outcomes). t is cleared first.
 */
void wire_trace_run(const struct wire_ops *ops, void *framer, const struct wire_chunk *chunks,
		    unsigned int n, size_t piece, int close, struct wire_trace *t);

/* The first eight bytes of b (n long) as the detectors take them; *got: how many. */
__u64 wire_first_word(const void *b, size_t n, __u32 *got);

/* Do two traces hold the same events? */
int wire_trace_same(const struct wire_trace *a, const struct wire_trace *b);

/* A framer to test: its functions, the framer, how to make it new. */
struct wire_subject {
	const struct wire_ops *ops;
	void *framer;
	void (*init)(void *framer);
};

/*
 * An exchange: what the client writes, then what it reads, each one chunk,
 * cut in two at cut_c / cut_s (0: not cut), fed in pieces of at most piece
 * bytes (0: whole), then the connection's end; through a new framer.
 */
void wire_trace_pair(const struct wire_subject *w, const char *c, size_t clen, const char *s,
		     size_t slen, size_t cut_c, size_t cut_s, size_t piece, struct wire_trace *t);
/* The same, after what the server says first (pre, prelen: MySQL's greeting). */
void wire_trace_after(const struct wire_subject *w, const char *pre, size_t prelen, const char *c,
		      size_t clen, const char *s, size_t slen, size_t cut_c, size_t cut_s,
		      size_t piece, struct wire_trace *t);

/*
 * An exchange and what it must give: calls started, outcomes, losses. pre:
 * what the server says before the client writes (MySQL's greeting), or
 * NULL.
 */
struct wire_case {
	const char *name;
	const char *c;
	size_t clen;
	const char *s;
	size_t slen;
	unsigned int starts, ok, err, partial, reset, errors, opaque;
	const char *pre;
	size_t prelen;
};

/*
 * A table of exchanges, one subtest each: the counts each must give, the
 * connection's state after it, and the same events cut at every byte of
 * either side and fed a byte at a time.
 */
void wire_check_cases(const struct wire_subject *w, const struct wire_case *cases, unsigned int n);

/*
 * Recorded conversations (wire_vector_load), one subtest each, then the
 * connection's end: the counts each must give (reset: calls the end left
 * unanswered), framed to its end, and the same events fed in pieces of
 * several sizes.
 */
struct wire_vector_case {
	const char *file;
	unsigned int calls, ok, err, partial, opaque, reset;
};
void wire_check_vectors(const struct wire_subject *w, const struct wire_vector_case *cases,
			unsigned int n);

#endif
