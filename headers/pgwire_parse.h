/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * PostgreSQL frontend/backend protocol (version 3) framing, one byte at a
 * time, for the client's side of a connection: what the client writes
 * (frontend messages) and what it reads (backend messages). Every message
 * is a type byte and a 4-byte big-endian length (the startup message and
 * its kin have no type byte); bodies are skipped by that length.
 *
 * Calls, each answered by one ReadyForQuery ('Z'), in order:
 * - a simple query ('Q'), a function call ('F');
 * - an extended-protocol batch: Parse, Bind, Describe, Execute, Close,
 *   Flush up to and with the Sync that ends it (a Sync alone is a batch
 *   too); pipelined batches are answered in order;
 * - the startup exchange (the login): from the startup message through the
 *   authentication to the first 'Z'. It is a call because the client waits
 *   on it and the server can refuse it (a wrong password, too many
 *   connections: SQLSTATE 53300), a failure of the dependency. The
 *   password messages in it start nothing; an ErrorResponse in it ends it
 *   failed, as the server closes then. pg_framer.login says the call that
 *   ended last was the login.
 * An ErrorResponse ('E') fails the oldest call pending; its 'Z' ends it
 * (after an error in a batch the server skips to its Sync, and answers
 * that one 'Z'). NoticeResponse, NotificationResponse and ParameterStatus
 * end nothing.
 *
 * SSLRequest and GSSENCRequest are answered by one byte: 'S' (or 'G')
 * means TLS (GSSAPI encryption) follows, the connection is opaque; 'N'
 * means the startup goes on in the clear. A CancelRequest is no call.
 * Lengths that lie (below 4, above 1 GiB; a startup message longer than
 * the server's 10000 bytes; a ReadyForQuery not 5 bytes long), a type
 * byte no message has, or a startup code of another protocol version lose
 * framing.
 */
#ifndef CLAIMD_PGWIRE_PARSE_H
#define CLAIMD_PGWIRE_PARSE_H

#include "wire_parse.h"

#define PG_MAX_MSG	(1u << 30) /* the server's own limit on a message */
#define PG_MAX_STARTUP	10000	   /* MAX_STARTUP_PACKET_LENGTH */
#define PG_CODE_STARTUP 196608u	   /* protocol 3.0 */
#define PG_CODE_CANCEL	80877102u
#define PG_CODE_SSL	80877103u
#define PG_CODE_GSSENC	80877104u
#define PG_READY_LEN	5 /* ReadyForQuery: its length and the status byte */

enum pg_state {
	PG_TYPE = 0, /* a message's type byte */
	PG_LEN,	     /* its length's four bytes */
	PG_CODE,     /* a startup-form message's code's four bytes */
	PG_BODY,     /* its body: skipped by pg_skip */
	PG__COUNT,
};

/* pg_framer.phase */
enum pg_phase {
	PG_PH_STARTUP = 0, /* the client's next message is startup-form (no type byte) */
	PG_PH_LOGIN,	   /* the startup message sent: the login call pending */
	PG_PH_READY,	   /* queries */
};

struct pg_dir {
	__u64 remaining; /* body bytes still to skip */
	__u32 len;	 /* the current message's length, itself included */
	__u32 code;	 /* a startup-form message's code */
	__u8 state;	 /* enum pg_state */
	__u8 type;	 /* the current message's type byte (0: startup form) */
	__u8 pos;	 /* bytes of the length or code read */
	__u8 pad;
};

struct pg_framer {
	struct wire_calls calls; /* first: wire_calls_first */
	struct pg_dir dir[2];	 /* [WIRE_TO_SERVER], [WIRE_TO_CLIENT] */
	__u8 phase;		 /* enum pg_phase */
	__u8 batch;		 /* an extended-protocol batch is open (no Sync yet) */
	__u8 ssl;		 /* 'S' or 'G' awaited: an SSLRequest or GSSENCRequest sent */
	__u8 login;		 /* the call that ended last was the login */
};

WIRE_INLINE void pg_framer_init(struct pg_framer *f)
{
	__builtin_memset(f, 0, sizeof(*f));
}

/* A frontend message's type byte: one the protocol has. */
WIRE_INLINE int pg_frontend_type(__u8 t)
{
	switch (t) {
	case 'B': /* Bind */
	case 'C': /* Close */
	case 'c': /* CopyDone */
	case 'd': /* CopyData */
	case 'D': /* Describe */
	case 'E': /* Execute */
	case 'f': /* CopyFail */
	case 'F': /* FunctionCall */
	case 'H': /* Flush */
	case 'P': /* Parse */
	case 'p': /* PasswordMessage, SASL responses, GSS */
	case 'Q': /* Query */
	case 'S': /* Sync */
	case 'X': /* Terminate */
		return 1;
	}
	return 0;
}

/* A backend message's type byte: one the protocol has. */
WIRE_INLINE int pg_backend_type(__u8 t)
{
	switch (t) {
	case 'R': /* Authentication* */
	case 'K': /* BackendKeyData */
	case '2': /* BindComplete */
	case '3': /* CloseComplete */
	case 'C': /* CommandComplete */
	case 'd': /* CopyData */
	case 'c': /* CopyDone */
	case 'G': /* CopyInResponse */
	case 'H': /* CopyOutResponse */
	case 'W': /* CopyBothResponse */
	case 'D': /* DataRow */
	case 'I': /* EmptyQueryResponse */
	case 'E': /* ErrorResponse */
	case 'V': /* FunctionCallResponse */
	case 'v': /* NegotiateProtocolVersion */
	case 'n': /* NoData */
	case 'N': /* NoticeResponse */
	case 'A': /* NotificationResponse */
	case 't': /* ParameterDescription */
	case 'S': /* ParameterStatus */
	case '1': /* ParseComplete */
	case 's': /* PortalSuspended */
	case 'Z': /* ReadyForQuery */
	case 'T': /* RowDescription */
		return 1;
	}
	return 0;
}

/* A frontend message's header read: the call it starts, if any. */
WIRE_INLINE __u32 pg_frontend_msg(struct pg_framer *f, __u8 t)
{
	switch (t) {
	case 'Q':
	case 'F':
		return wire_call_start(&f->calls);
	case 'P':
	case 'B':
	case 'D':
	case 'E':
	case 'C':
	case 'H':
		if (f->batch)
			return 0;
		f->batch = 1;
		return wire_call_start(&f->calls);
	case 'S':
		if (f->batch) {
			f->batch = 0;
			return 0;
		}
		return wire_call_start(&f->calls); /* a Sync alone: answered by a 'Z' too */
	}
	return 0; /* password, copy data, Terminate: no call */
}

/* A startup-form message's header read (length and code). */
WIRE_INLINE __u32 pg_startup_msg(struct pg_framer *f, struct pg_dir *d)
{
	switch (d->code) {
	case PG_CODE_STARTUP:
		f->phase = PG_PH_LOGIN;
		return wire_call_start(&f->calls);
	case PG_CODE_SSL:
	case PG_CODE_GSSENC:
		if (d->len != 8)
			return wire_lost(&f->calls);
		f->ssl = d->code == PG_CODE_SSL ? 'S' : 'G';
		return 0;
	case PG_CODE_CANCEL:
		if (d->len != 16)
			return wire_lost(&f->calls);
		return 0;
	}
	return wire_lost(&f->calls); /* protocol 2, or not PostgreSQL */
}

/* A whole message read (its body skipped): a backend message's effect. */
WIRE_INLINE __u32 pg_msg_done(struct pg_framer *f, struct pg_dir *d, __u32 dir)
{
	d->state = PG_TYPE;
	d->pos = 0;
	if (dir == WIRE_TO_SERVER)
		return 0;
	if (d->type == 'E') {
		if (f->phase == PG_PH_LOGIN) {
			/* Refused at login: the server closes, no 'Z' comes. */
			f->phase = PG_PH_READY;
			f->login = 1;
			return wire_call_end(&f->calls, WIRE_CALLEE_ERROR);
		}
		if (f->calls.pending)
			f->calls.failed = 1;
		return 0;
	}
	if (d->type != 'Z')
		return 0;
	f->login = f->phase == PG_PH_LOGIN;
	f->phase = PG_PH_READY;
	return wire_call_end(&f->calls, WIRE_OK);
}

/* A message's header complete (its length read, and a startup's code). */
WIRE_INLINE __u32 pg_header_done(struct pg_framer *f, struct pg_dir *d, __u32 dir)
{
	__u32 ev = 0;

	if (d->type) {
		if (d->len < 4 || d->len > PG_MAX_MSG)
			return wire_lost(&f->calls);
		if (d->type == 'Z' && dir == WIRE_TO_CLIENT && d->len != PG_READY_LEN)
			return wire_lost(&f->calls);
		d->remaining = d->len - 4;
		if (dir == WIRE_TO_SERVER)
			ev = pg_frontend_msg(f, d->type);
	} else {
		d->remaining = d->len - 8;
		ev = pg_startup_msg(f, d);
	}
	if (ev & WIRE_EV_ERROR)
		return ev;
	if (!d->remaining)
		return ev | pg_msg_done(f, d, dir);
	d->state = PG_BODY;
	return ev;
}

/* A message's first byte. */
WIRE_INLINE __u32 pg_type_byte(struct pg_framer *f, struct pg_dir *d, __u32 dir, __u8 c)
{
	d->pos = 0;
	d->len = 0;
	d->code = 0;
	if (dir == WIRE_TO_SERVER && f->phase == PG_PH_STARTUP) {
		/* Startup form: no type byte, this is the length's first. */
		d->type = 0;
		d->len = c;
		d->pos = 1;
		d->state = PG_LEN;
		return 0;
	}
	if (dir == WIRE_TO_CLIENT && f->ssl) {
		/* The one-byte answer to SSLRequest or GSSENCRequest. */
		if (c == f->ssl)
			return wire_opaque(&f->calls);
		if (c == 'N') {
			f->ssl = 0;
			return 0;
		}
		f->ssl = 0; /* an ErrorResponse (an old server): read as one */
	}
	if (dir == WIRE_TO_SERVER ? !pg_frontend_type(c) : !pg_backend_type(c))
		return wire_lost(&f->calls);
	d->type = c;
	d->state = PG_LEN;
	return 0;
}

/* Feed one byte of direction dir. Never called where pg_skipping() holds. */
WIRE_INLINE __u32 pg_step(struct pg_framer *f, __u32 dir, __u8 c)
{
	struct pg_dir *d = &f->dir[dir & 1]; /* & 1: one of two directions */

	dir &= 1;
	if (f->calls.state != WIRE_OPEN)
		return 0;
	switch (d->state) {
	case PG_TYPE:
		return pg_type_byte(f, d, dir, c);
	case PG_LEN:
		d->len = (d->len << 8) | c;
		if (++d->pos < 4)
			return 0;
		if (!d->type) {
			if (d->len < 8 || d->len > PG_MAX_STARTUP)
				return wire_lost(&f->calls);
			d->state = PG_CODE;
			d->pos = 0;
			return 0;
		}
		return pg_header_done(f, d, dir);
	case PG_CODE:
		d->code = (d->code << 8) | c;
		if (++d->pos < 4)
			return 0;
		return pg_header_done(f, d, dir);
	}
	return wire_lost(&f->calls);
}

/* In a state where bytes of dir are skipped by count rather than stepped. */
WIRE_INLINE int pg_skipping(const struct pg_framer *f, __u32 dir)
{
	return f->dir[dir & 1].state == PG_BODY; /* & 1: one of two directions */
}

/* Skip up to avail body bytes of dir; returns how many, *ev the message's end's events. */
WIRE_INLINE __u64 pg_skip(struct pg_framer *f, __u32 dir, __u64 avail, __u32 *ev)
{
	struct pg_dir *d = &f->dir[dir & 1]; /* & 1: one of two directions */
	__u64 n = wire_take(&d->remaining, avail);

	*ev = 0;
	if (!d->remaining)
		*ev = pg_msg_done(f, d, dir & 1);
	return n;
}

/* The connection ended: the calls it left unanswered (wire_close). */
WIRE_INLINE __u32 pg_close(struct pg_framer *f)
{
	return wire_close(&f->calls);
}

/* A 4-byte big-endian value at byte i (0 or 4) of w. */
WIRE_INLINE __u32 pg_be32(__u64 w, __u32 i)
{
	return (__u32)wire_byte(w, i) << 24 | (__u32)wire_byte(w, i + 1) << 16 |
	       (__u32)wire_byte(w, i + 2) << 8 | wire_byte(w, i + 3);
}

/*
 * Is this PostgreSQL? w holds the first eight bytes the client wrote
 * (memory order, zeros past n): a startup message's length and protocol
 * 3.0, or an SSLRequest, GSSENCRequest or CancelRequest.
 */
WIRE_INLINE int pg_detect(__u64 w, __u32 n)
{
	__u32 len = pg_be32(w, 0), code = pg_be32(w, 4);

	if (n < 8)
		return 0;
	if (code == PG_CODE_STARTUP)
		return len > 8 && len <= PG_MAX_STARTUP;
	if (code == PG_CODE_SSL || code == PG_CODE_GSSENC)
		return len == 8;
	return code == PG_CODE_CANCEL && len == 16;
}

#ifndef __bpf__
static inline __u32 pg_step_any(void *f, __u32 dir, __u8 c)
{
	return pg_step(f, dir, c);
}

static inline __u64 pg_skip_any(void *f, __u32 dir, __u64 avail, __u32 *ev)
{
	return pg_skip(f, dir, avail, ev);
}

static inline int pg_skipping_any(const void *f, __u32 dir)
{
	return pg_skipping(f, dir);
}

static const struct wire_ops pg_ops = { pg_step_any, pg_skip_any, pg_skipping_any,
					wire_calls_first };

/* User space: a buffer of direction dir, as the BPF side feeds it (wire_feed). */
static inline __u64 pg_feed(struct pg_framer *f, __u32 dir, const __u8 *buf, __u64 len,
			    wire_event_fn fn, void *ctx)
{
	return wire_feed(&pg_ops, f, dir, buf, len, fn, ctx);
}
#endif

#endif /* CLAIMD_PGWIRE_PARSE_H */
