/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the request/response framers of database and cache protocols share
 * (headers/resp_parse.h for Redis, pgwire_parse.h for PostgreSQL,
 * mysql_parse.h for MySQL and MariaDB): the events they report, the
 * outcome of a call, and the count of calls written and not yet answered
 * that pairs replies with calls in order (FIFO), pipelines included.
 *
 * Each framer sees the client's side of one connection, both directions:
 * what the client writes (WIRE_TO_SERVER) and what it reads
 * (WIRE_TO_CLIENT), a syscall's bytes at a time. A call starts when the
 * client writes a command, query or COM_* packet and ends when the reply
 * that answers it is complete; its outcome is WIRE_OK or a callee failure:
 * an error reply, the connection's end before the answer (WIRE_RESET). A
 * timeout is the caller's to judge: a call still pending when it gives up.
 *
 * Like http_parse.h: no pointers kept, bounded loops, compiled unchanged
 * by BPF and user space.
 */
#ifndef CLAIMD_WIRE_PARSE_H
#define CLAIMD_WIRE_PARSE_H

#ifdef __bpf__
#define WIRE_INLINE static __always_inline
#else
#include <linux/types.h>
#define WIRE_INLINE static inline
#endif

/* Direction of the bytes, from the client's side of the connection. */
#define WIRE_TO_SERVER 0 /* the client writes them */
#define WIRE_TO_CLIENT 1 /* the client reads them */

/* Events, a bit mask returned by the framers' step and skip functions. */
#define WIRE_EV_CALL_START 0x01 /* the client wrote a call's first byte (pending grew) */
#define WIRE_EV_CALL_END   0x02 /* the oldest pending call was answered: calls.outcome */
#define WIRE_EV_ERROR	   0x04 /* framing lost (malformed, a length that lies): WIRE_LOST */
#define WIRE_EV_OPAQUE	   0x08 /* TLS or a stream that is not request/reply follows */

/* The outcome of the call a WIRE_EV_CALL_END (or wire_close) ended. */
enum wire_outcome {
	WIRE_OK = 0,
	WIRE_CALLEE_ERROR = 1, /* an error reply: Redis -ERR or !, PG E, MySQL ERR */
	WIRE_PARTIAL = 2,      /* a reply that is not an error, an error inside it (EXEC) */
	WIRE_RESET = 3,	       /* the connection ended before the answer */
	WIRE_OUTCOME__COUNT,
};

/* wire_calls.state: the connection as a whole. */
enum wire_conn_state {
	WIRE_OPEN = 0,	 /* framed */
	WIRE_OPAQUE = 1, /* TLS negotiated, or a stream we do not pair (pub/sub) */
	WIRE_LOST = 2,	 /* malformed or hostile input: nothing more is framed */
};

/*
 * More calls in flight than this is not a client waiting for answers (a
 * bulk load without reads, or bytes we mistook): framing is given up.
 */
#define WIRE_MAX_PENDING (1u << 20)

struct wire_calls {
	__u32 pending; /* calls written and not yet answered */
	__u8 state;    /* enum wire_conn_state */
	__u8 outcome;  /* enum wire_outcome of the call that ended last */
	__u8 failed;   /* the oldest pending call had an error reply before its end */
	__u8 pad;
};

WIRE_INLINE __u32 wire_lost(struct wire_calls *c)
{
	c->state = WIRE_LOST;
	return WIRE_EV_ERROR;
}

WIRE_INLINE __u32 wire_opaque(struct wire_calls *c)
{
	c->state = WIRE_OPAQUE;
	return WIRE_EV_OPAQUE;
}

WIRE_INLINE __u32 wire_call_start(struct wire_calls *c)
{
	if (c->pending >= WIRE_MAX_PENDING)
		return wire_lost(c);
	c->pending++;
	return WIRE_EV_CALL_START;
}

/*
 * The oldest pending call answered, with outcome unless an error reply
 * came before its end (c->failed). An answer to no call: we missed the
 * call, or the bytes are not what we took them for; pairing any later
 * reply would be a guess, so framing is lost.
 */
WIRE_INLINE __u32 wire_call_end(struct wire_calls *c, __u8 outcome)
{
	if (!c->pending)
		return wire_lost(c);
	c->pending--;
	c->outcome = c->failed ? WIRE_CALLEE_ERROR : outcome;
	c->failed = 0;
	return WIRE_EV_CALL_END;
}

/*
 * The connection ended (a close, a reset). Returns how many calls it left
 * unanswered, each a callee failure: the oldest with c->outcome
 * (WIRE_CALLEE_ERROR when an error reply had begun its answer: a fatal
 * error the server closes after), the others WIRE_RESET.
 */
WIRE_INLINE __u32 wire_close(struct wire_calls *c)
{
	__u32 n = c->pending;

	c->outcome = c->failed ? WIRE_CALLEE_ERROR : WIRE_RESET;
	c->pending = 0;
	c->failed = 0;
	return n;
}

/* Up to avail bytes of *remaining consumed at once; returns how many. */
WIRE_INLINE __u64 wire_take(__u64 *remaining, __u64 avail)
{
	__u64 n = *remaining < avail ? *remaining : avail;

	*remaining -= n;
	return n;
}

/* Byte i (0..7) of the word w, bytes in memory order. */
WIRE_INLINE __u8 wire_byte(__u64 w, __u32 i)
{
	return (__u8)(w >> (8 * (i & 7))); /* & 7: a byte of the word */
}

#ifndef __bpf__
/*
 * User space (tests, fuzzers, claimd): feed a buffer of one direction the
 * way the BPF side does, bytes stepped one by one where the framer reads
 * them, skipped by count where it does not, and nothing once the
 * connection is opaque or lost. The framer's own three functions are
 * passed in (its struct wire_calls first in it); fn sees every event. Returns bytes consumed.
 */
typedef void (*wire_event_fn)(void *ctx, __u32 dir, __u32 ev);

struct wire_ops {
	__u32 (*step)(void *framer, __u32 dir, __u8 c);
	__u64 (*skip)(void *framer, __u32 dir, __u64 avail, __u32 *ev);
	int (*skipping)(const void *framer, __u32 dir);
	const struct wire_calls *(*calls)(const void *framer);
};

/* Every framer keeps its struct wire_calls first: its calls, whichever it is. */
static inline const struct wire_calls *wire_calls_first(const void *framer)
{
	return framer;
}

static inline __u64 wire_feed(const struct wire_ops *ops, void *framer, __u32 dir, const __u8 *buf,
			      __u64 len, wire_event_fn fn, void *ctx)
{
	__u64 off = 0;

	while (off < len && ops->calls(framer)->state == WIRE_OPEN) {
		__u32 ev = 0;

		if (ops->skipping(framer, dir))
			off += ops->skip(framer, dir, len - off, &ev);
		else
			ev = ops->step(framer, dir, buf[off++]);
		if (ev && fn)
			fn(ctx, dir, ev);
	}
	return ops->calls(framer)->state == WIRE_OPEN ? off : len;
}
#endif

#endif /* CLAIMD_WIRE_PARSE_H */
