/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Redis serialization protocol (RESP2 and RESP3) framing, one byte at a
 * time, for the client's side of a connection to Redis (or Valkey,
 * KeyDB): what the client writes, commands, and what it reads, replies.
 *
 * A command (an array of bulk strings, or an inline line) is a call; the
 * replies answer the commands in the order they were written, pipelines
 * included (headers/wire_parse.h keeps the count). A reply that is a
 * simple error ('-') or a RESP3 blob error ('!') is a callee failure; an
 * aggregate with an error inside (EXEC's) is WIRE_PARTIAL. RESP3 push
 * frames ('>') and attributes ('|') are not replies. Aggregates nest on a
 * stack of RESP_MAX_DEPTH counts (COMMAND DOCS nests 12 deep); deeper is
 * framing lost, as are RESP3's streamed strings and aggregates (no Redis server sends them), a bulk
 * longer than Redis's largest string, a count larger than any reply, and
 * a line without its CR LF. Bulk payloads are skipped by count.
 *
 * Commands after which replies no longer answer commands one for one
 * (SUBSCRIBE and its kin, MONITOR, SYNC and PSYNC) make the connection
 * opaque once the calls written before them are answered (resp_fence):
 * that command's call has no outcome (the caller's unknown).
 */
#ifndef CLAIMD_RESP_PARSE_H
#define CLAIMD_RESP_PARSE_H

#include "wire_parse.h"

#define RESP_MAX_DEPTH	16	    /* nested aggregates (COMMAND DOCS: 12); a power of two */
#define RESP_MAX_BULK	(1u << 29)  /* 512 MiB: Redis's largest string, proto-max-bulk-len */
#define RESP_MAX_COUNT	(1u << 28)  /* elements of one aggregate */
#define RESP_MAX_LINE	(1u << 20)  /* a simple string, error or number line */
#define RESP_MAX_INLINE (64u << 10) /* Redis's PROTO_INLINE_MAX_SIZE */

enum resp_state {
	RS_TYPE = 0, /* a type byte: a frame's or an element's start */
	RS_LINE,     /* a line's content (simple string, error, integer, ...) */
	RS_NUM,	     /* a length or count's digits */
	RS_LF,	     /* the LF after a line's CR */
	RS_BULK,     /* bulk payload: skipped by resp_skip */
	RS_NAME,     /* client: the first bytes of a command's name, read */
	RS_DATA_CR,  /* the CR after a bulk payload */
	RS_DATA_LF,  /* the LF after it */
	RS_INLINE,   /* client: an inline command's line */
	RS__COUNT,
};

/* resp_dir.flags */
#define RESP_F_NEG	  0x01 /* a '-' before a length's digits */
#define RESP_F_DIGIT	  0x02 /* a digit of the length seen */
#define RESP_F_NESTED_ERR 0x04 /* an error element inside the current reply */
#define RESP_F_WANT_NAME  0x08 /* client: the command's next bulk is its name */
#define RESP_F_CALL	  0x10 /* client: the current frame is a call */
#define RESP_F_WORD_END	  0x20 /* client: an inline command's first word ended */

struct resp_dir {
	__u64 acc;		    /* a length or count being read */
	__u64 remaining;	    /* bulk bytes still to skip */
	__u64 name;		    /* client: the name's first eight bytes, upper case */
	__u32 left[RESP_MAX_DEPTH]; /* elements still to come, per open aggregate */
	__u32 line;		    /* bytes of the current line */
	__u32 namelen;		    /* client: the name's length */
	__u8 state;		    /* enum resp_state */
	__u8 type;		    /* type byte of the current element */
	__u8 top;		    /* type byte of the current top-level frame */
	__u8 depth;		    /* open aggregates */
	__u8 flags;		    /* RESP_F_* */
	__u16 attr;		    /* bit i: the aggregate at depth i + 1 is an attribute */
};

struct resp_framer {
	struct wire_calls calls; /* first: wire_calls_first */
	struct resp_dir dir[2];	 /* [WIRE_TO_SERVER], [WIRE_TO_CLIENT] */
	__u8 fenced;		 /* a command that leaves replies written: see resp_fence */
	__u8 pad[7];
};

/* Eight bytes as one word, in memory order: a name's first eight bytes. */
#define RESP_W8(a, b, c, d, e, f, g, h)                                                          \
	((__u64)(a) | (__u64)(b) << 8 | (__u64)(c) << 16 | (__u64)(d) << 24 | (__u64)(e) << 32 | \
	 (__u64)(f) << 40 | (__u64)(g) << 48 | (__u64)(h) << 56)

WIRE_INLINE void resp_framer_init(struct resp_framer *f)
{
	__builtin_memset(f, 0, sizeof(*f));
}

/*
 * After this command replies no longer answer commands one for one:
 * (P|S)SUBSCRIBE's messages, MONITOR's feed, a replica's stream.
 */
WIRE_INLINE int resp_leaves_replies(__u64 name, __u32 len)
{
	return (len == 9 && name == RESP_W8('S', 'U', 'B', 'S', 'C', 'R', 'I', 'B')) ||
	       (len == 10 && name == RESP_W8('P', 'S', 'U', 'B', 'S', 'C', 'R', 'I')) ||
	       (len == 10 && name == RESP_W8('S', 'S', 'U', 'B', 'S', 'C', 'R', 'I')) ||
	       (len == 7 && name == RESP_W8('M', 'O', 'N', 'I', 'T', 'O', 'R', 0)) ||
	       (len == 4 && name == RESP_W8('S', 'Y', 'N', 'C', 0, 0, 0, 0)) ||
	       (len == 5 && name == RESP_W8('P', 'S', 'Y', 'N', 'C', 0, 0, 0));
}

/* One more byte of a command's name, upper case, kept while among the first eight. */
WIRE_INLINE void resp_name_byte(struct resp_dir *d, __u32 at, __u8 c)
{
	if (c >= 'a' && c <= 'z')
		c -= 'a' - 'A';
	if (at < 8)
		d->name |= (__u64)c << (8 * (at & 7)); /* & 7: a byte of the word */
}

/*
 * A command after which replies stop answering commands was written: the
 * calls before it are still answered, in order, and then the connection
 * is opaque (the command's own call has no outcome). The client's bytes
 * meanwhile are a subscriber's: not framed.
 */
WIRE_INLINE __u32 resp_fence(struct resp_framer *f)
{
	if (f->calls.pending <= 1)
		return wire_opaque(&f->calls);
	f->fenced = 1;
	return 0;
}

/* A top-level frame complete: a command written, or a reply read. */
WIRE_INLINE __u32 resp_frame_done(struct resp_framer *f, struct resp_dir *d, __u32 dir)
{
	__u8 outcome = WIRE_OK;

	d->state = RS_TYPE;
	if (dir == WIRE_TO_SERVER) {
		if (!(d->flags & RESP_F_CALL))
			return 0; /* "*0", "*-1": Redis runs nothing, answers nothing */
		d->flags &= ~RESP_F_CALL;
		if (resp_leaves_replies(d->name, d->namelen))
			return resp_fence(f);
		return 0;
	}
	if (d->top == '>')
		return 0; /* RESP3 push: not an answer */
	if (d->top == '-' || d->top == '!')
		outcome = WIRE_CALLEE_ERROR;
	else if (d->flags & RESP_F_NESTED_ERR)
		outcome = WIRE_PARTIAL;
	if (f->fenced && f->calls.pending == 2) /* the last before the fence */
		return wire_call_end(&f->calls, outcome) | wire_opaque(&f->calls);
	return wire_call_end(&f->calls, outcome);
}

/*
 * An element complete: counted in its aggregate, and each aggregate it
 * completes in its own, up the stack. An attribute complete is no element
 * of its parent: the element it describes comes next.
 */
WIRE_INLINE __u32 resp_elem_done(struct resp_framer *f, struct resp_dir *d, __u32 dir)
{
	__u32 i;

	d->state = RS_TYPE;
	for (i = 0; i <= RESP_MAX_DEPTH; i++) {
		__u32 lvl;

		if (!d->depth)
			return resp_frame_done(f, d, dir);
		lvl = (d->depth - 1) & (RESP_MAX_DEPTH - 1); /* mask: depth <= RESP_MAX_DEPTH */
		if (--d->left[lvl])
			return 0;
		d->depth--;
		if (d->attr & (1u << lvl)) {
			d->attr &= ~(1u << lvl);
			return 0;
		}
	}
	return 0;
}

/* A length or count line complete (its LF): what it opens. */
WIRE_INLINE __u32 resp_num_done(struct resp_framer *f, struct resp_dir *d, __u32 dir)
{
	__u8 t = d->type;
	__u64 n = d->acc;

	if (d->flags & RESP_F_NEG) {
		if (n != 1)
			return wire_lost(&f->calls);
		return resp_elem_done(f, d, dir); /* -1: a RESP2 null */
	}
	if (t == '$' || t == '!' || t == '=') {
		if (n > RESP_MAX_BULK)
			return wire_lost(&f->calls);
		d->remaining = n;
		d->state = n ? RS_BULK : RS_DATA_CR;
		if (dir == WIRE_TO_SERVER && (d->flags & RESP_F_WANT_NAME)) {
			d->flags &= ~RESP_F_WANT_NAME;
			d->namelen = (__u32)n;
			if (n)
				d->state = RS_NAME;
		}
		return 0;
	}
	/* An aggregate: '*', '%', '~', '>', '|'. */
	if (n > RESP_MAX_COUNT)
		return wire_lost(&f->calls);
	if (t == '%' || t == '|')
		n *= 2; /* a map's entries, an attribute's: key and value */
	if (!n) {
		if (t == '|') {
			d->state = RS_TYPE;
			return 0;
		}
		return resp_elem_done(f, d, dir);
	}
	if (d->depth >= RESP_MAX_DEPTH)
		return wire_lost(&f->calls);
	d->left[d->depth & (RESP_MAX_DEPTH - 1)] = (__u32)n; /* mask: depth < RESP_MAX_DEPTH */
	if (t == '|')
		d->attr |= 1u << (d->depth & (RESP_MAX_DEPTH - 1));
	d->depth++;
	d->state = RS_TYPE;
	if (dir == WIRE_TO_SERVER && d->depth == 1) {
		d->flags |= RESP_F_CALL | RESP_F_WANT_NAME;
		d->name = 0;
		d->namelen = 0;
		return wire_call_start(&f->calls);
	}
	return 0;
}

/* A type byte: a frame's or an element's start. */
WIRE_INLINE __u32 resp_type_byte(struct resp_framer *f, struct resp_dir *d, __u32 dir, __u8 c)
{
	d->type = c;
	d->line = 0;
	d->acc = 0;
	d->flags &= ~(RESP_F_NEG | RESP_F_DIGIT);
	if (dir == WIRE_TO_SERVER) {
		/* Commands: an array of bulk strings, or an inline line. */
		if (!d->depth && c != '*') {
			d->state = RS_INLINE;
			d->name = 0;
			d->namelen = 0;
			d->flags &= ~RESP_F_WORD_END;
			return 0;
		}
		if (d->depth && c != '$')
			return wire_lost(&f->calls);
		d->state = RS_NUM;
		return 0;
	}
	if (!d->depth) {
		d->top = c;
		d->flags &= ~RESP_F_NESTED_ERR;
	} else if (c == '-' || c == '!') {
		d->flags |= RESP_F_NESTED_ERR;
	}
	switch (c) {
	case '+':
	case '-':
	case ':':
	case '_':
	case ',':
	case '#':
	case '(':
		d->state = RS_LINE;
		return 0;
	case '$':
	case '!':
	case '=':
	case '*':
	case '%':
	case '~':
	case '>':
	case '|':
		d->state = RS_NUM;
		return 0;
	}
	return wire_lost(&f->calls);
}

/* A byte of an inline command (a line of words, "PING\r\n"), the type byte first. */
WIRE_INLINE __u32 resp_inline_byte(struct resp_framer *f, struct resp_dir *d, __u8 c)
{
	__u32 ev;

	if (c == '\n') {
		d->state = RS_TYPE;
		if (!d->namelen)
			return 0; /* a blank line: Redis runs nothing, answers nothing */
		ev = wire_call_start(&f->calls);
		if (ev == WIRE_EV_CALL_START && resp_leaves_replies(d->name, d->namelen))
			ev |= resp_fence(f);
		return ev;
	}
	if (++d->line > RESP_MAX_INLINE)
		return wire_lost(&f->calls);
	if (c == ' ' || c == '\t' || c == '\r') {
		if (d->namelen)
			d->flags |= RESP_F_WORD_END;
		return 0;
	}
	if (!(d->flags & RESP_F_WORD_END)) {
		resp_name_byte(d, d->namelen, c);
		d->namelen++;
	}
	return 0;
}

/* Feed one byte of direction dir. Never called where resp_skipping() holds. */
WIRE_INLINE __u32 resp_step(struct resp_framer *f, __u32 dir, __u8 c)
{
	struct resp_dir *d = &f->dir[dir & 1]; /* & 1: one of two directions */

	dir &= 1;
	if (f->calls.state != WIRE_OPEN || (f->fenced && dir == WIRE_TO_SERVER))
		return 0;
	switch (d->state) {
	case RS_TYPE: {
		__u32 ev = resp_type_byte(f, d, dir, c);

		/* An inline command's first byte is a byte of its line too. */
		if (ev || d->state != RS_INLINE)
			return ev;
		return resp_inline_byte(f, d, c);
	}
	case RS_LINE:
		if (c == '\r') {
			d->state = RS_LF;
			return 0;
		}
		if (c == '\n' || ++d->line > RESP_MAX_LINE)
			return wire_lost(&f->calls);
		return 0;
	case RS_NUM:
		if (c == '\r' && (d->flags & RESP_F_DIGIT)) {
			d->state = RS_LF;
			return 0;
		}
		if (c == '-' && !(d->flags & (RESP_F_NEG | RESP_F_DIGIT))) {
			d->flags |= RESP_F_NEG;
			return 0;
		}
		/* Not a digit: junk, or RESP3's streamed "$?" (no server sends it). */
		if (c < '0' || c > '9')
			return wire_lost(&f->calls);
		d->flags |= RESP_F_DIGIT;
		d->acc = d->acc * 10 + (c - '0');
		if (d->acc > RESP_MAX_BULK) /* both limits; the checks that matter come after */
			return wire_lost(&f->calls);
		return 0;
	case RS_LF:
		if (c != '\n')
			return wire_lost(&f->calls);
		if (d->type == '$' || d->type == '!' || d->type == '=' || d->type == '*' ||
		    d->type == '%' || d->type == '~' || d->type == '>' || d->type == '|')
			return resp_num_done(f, d, dir);
		return resp_elem_done(f, d, dir);
	case RS_NAME:
		resp_name_byte(d, d->namelen - (__u32)d->remaining, c);
		if (!--d->remaining)
			d->state = RS_DATA_CR;
		else if (d->namelen - d->remaining >= 8)
			d->state = RS_BULK; /* the rest of a long name: skipped */
		return 0;
	case RS_DATA_CR:
		if (c != '\r')
			return wire_lost(&f->calls);
		d->state = RS_DATA_LF;
		return 0;
	case RS_DATA_LF:
		if (c != '\n')
			return wire_lost(&f->calls);
		return resp_elem_done(f, d, dir);
	case RS_INLINE:
		return resp_inline_byte(f, d, c);
	}
	return wire_lost(&f->calls);
}

/* In a state where bytes of dir are skipped by count rather than stepped. */
WIRE_INLINE int resp_skipping(const struct resp_framer *f, __u32 dir)
{
	return f->dir[dir & 1].state == RS_BULK; /* & 1: one of two directions */
}

/* Skip up to avail bulk bytes of dir; returns how many. No event ends a bulk's bytes. */
WIRE_INLINE __u64 resp_skip(struct resp_framer *f, __u32 dir, __u64 avail, __u32 *ev)
{
	struct resp_dir *d = &f->dir[dir & 1]; /* & 1: one of two directions */
	__u64 n = wire_take(&d->remaining, avail);

	*ev = 0;
	if (!d->remaining)
		d->state = RS_DATA_CR;
	return n;
}

/* The connection ended: the calls it left unanswered (wire_close). */
WIRE_INLINE __u32 resp_close(struct resp_framer *f)
{
	return wire_close(&f->calls);
}

/*
 * Is this Redis? w holds the first eight bytes the client wrote (memory
 * order, zeros past n): a command array, "*<count>\r\n" (a count of one to
 * five digits, not starting with 0), as every client library writes.
 */
WIRE_INLINE int resp_detect(__u64 w, __u32 n)
{
	__u32 i;

	if (n < 4 || wire_byte(w, 0) != '*' || wire_byte(w, 1) < '1' || wire_byte(w, 1) > '9')
		return 0;
	for (i = 2; i < 7; i++) {
		__u8 c = wire_byte(w, i);

		if (c == '\r')
			return i + 1 < n && wire_byte(w, i + 1) == '\n';
		if (c < '0' || c > '9')
			return 0;
	}
	return 0;
}

#ifndef __bpf__
static inline __u32 resp_step_any(void *f, __u32 dir, __u8 c)
{
	return resp_step(f, dir, c);
}

static inline __u64 resp_skip_any(void *f, __u32 dir, __u64 avail, __u32 *ev)
{
	return resp_skip(f, dir, avail, ev);
}

static inline int resp_skipping_any(const void *f, __u32 dir)
{
	return resp_skipping(f, dir);
}

static const struct wire_ops resp_ops = { resp_step_any, resp_skip_any, resp_skipping_any,
					  wire_calls_first };

/* User space: a buffer of direction dir, as the BPF side feeds it (wire_feed). */
static inline __u64 resp_feed(struct resp_framer *f, __u32 dir, const __u8 *buf, __u64 len,
			      wire_event_fn fn, void *ctx)
{
	return wire_feed(&resp_ops, f, dir, buf, len, fn, ctx);
}
#endif

#endif /* CLAIMD_RESP_PARSE_H */
