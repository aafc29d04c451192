// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c: calls to databases and caches. An outbound
 * connection's first bytes say what it speaks (wire_told): a Redis command
 * array, a PostgreSQL startup message (or SSLRequest), a MySQL or MariaDB
 * server's greeting read before the client wrote anything. Such a
 * connection's bytes then go through its framer (headers/resp_parse.h,
 * pgwire_parse.h, mysql_parse.h, kept in wire_conns) instead of the HTTP
 * one, and its calls are calls as HTTP ones are: each begins in the log
 * of the request its thread serves (egress_log) and waits on the
 * connection's queue, replies answer them in order (pipelines included),
 * and each ends with its outcome (outcome_wire_end, headers/outcome.h):
 * an answer, an error reply (a callee failure), the connection's end
 * (io_failed: a transport failure). A call has no method and a target of
 * its own: no other call is taken for its retry.
 *
 * A connection whose framing is lost (bytes that lie, a buffer claimd
 * cannot read) or left (TLS negotiated, a subscription) ends the calls
 * waiting on it with their outcome unknown, and from then on is opaque:
 * a request that moves bytes on it is unknown when it fails, as for any
 * protocol claimd does not frame (stream.c, conn_taint_io). A connection
 * joined mid-stream (a TCP one seeded or rejoined) is never told: opaque.
 */

#define WIRE_ROUNDS 256 /* events, skips and windows per syscall buffer */

/* The framing's walk through the window (buf) of one segment, a byte a step. */
struct wire_walk {
	struct wire_conn *w;
	struct scan_buf *buf;
	__u32 dir; /* WIRE_TO_SERVER or WIRE_TO_CLIENT */
	__u32 ev;  /* the event that stopped the walk */
};

/*
 * One step of each framer: skip bytes by count where it skips, else the
 * next byte of the window. Stops (1) at an event, at the window's end, at
 * the segment's end. Positions are in the window's map (buf), where the
 * verifier does not follow their values.
 */
#define WIRE_WALK_STEP(name, fr)                                                           \
	static long name##_walk(__u64 i, void *data)                                       \
	{                                                                                  \
		struct wire_walk *k = data;                                                \
		struct scan_buf *b = k->buf;                                               \
		__u32 dir = k->dir & 1;                                                    \
		__u64 off = b->off, len = b->len;                                          \
                                                                                           \
		if (off >= len || k->w->f.calls.state != WIRE_OPEN)                        \
			return 1;                                                          \
		if (name##_skipping(&k->w->f.fr, dir)) {                                   \
			b->off = off + name##_skip(&k->w->f.fr, dir, len - off, &k->ev);   \
			return k->ev != 0;                                                 \
		}                                                                          \
		if (off >= b->wbase + b->wlen)                                             \
			return 1;                                                          \
		/* masked: an index into the window the verifier cannot bound otherwise */ \
		k->ev = name##_step(&k->w->f.fr, dir,                                      \
				    b->data[(off - b->wbase) & (SCAN_WINDOW - 1)]);        \
		b->off = off + 1;                                                          \
		return k->ev != 0;                                                         \
	}

WIRE_WALK_STEP(resp, resp)
WIRE_WALK_STEP(pg, pg)
WIRE_WALK_STEP(mysql, my)

/*
 * The walk of one framer through the window, to its next event (returned,
 * 0 for none): a global function each, which the verifier checks once,
 * apart from the calls the events make.
 */
#define WIRE_WINDOW(name)                                                                    \
	__noinline __u32 name##_window(struct wire_conn *w, struct scan_buf *buf, __u32 dir) \
	{                                                                                    \
		struct wire_walk k = { .w = w, .buf = buf, .dir = dir };                     \
                                                                                             \
		if (!w || !buf)                                                              \
			return 0;                                                            \
		bpf_loop(SCAN_WINDOW, name##_walk, &k, 0);                                   \
		return k.ev;                                                                 \
	}

WIRE_WINDOW(resp)
WIRE_WINDOW(pg)
WIRE_WINDOW(mysql)

/*
 * A call begins on c: in the log of the request io's thread serves, and on
 * c's queue. A frame of its own, as stream.c's egress_open: logging a call
 * spills registers, kept off the chain that ends calls.
 */
static __noinline int wire_call_open(struct claimd_conn *c, struct io *io)
{
	struct claimd_pending p = {
		.start_ns = io_now(io),
		.tid = io->tid,
		.proto = c->proto,
	};

	/* A target of its own: no later call is taken for its retry. */
	p.target_hash = (__u32)p.start_ns | 1;
	egress_log(io, &p, &c->remote);
	fifo_push(c, &p);
	c->flags |= CLAIMD_CONN_SENT;
	stat_inc(CLAIMD_ST_WIRE_CALLS);
	return 0;
}

/*
 * The oldest call waiting on c was answered, as outcome says. Taken off
 * the queue into c->answering, the connection's own room, as an HTTP
 * answer is (egress_answered): not onto the chain's stack.
 */
static __always_inline void wire_call_answered(struct claimd_conn *c, struct io *io, __u32 outcome)
{
	struct egress_end end = { .end_ns = io_now(io) };

	if (!fifo_pop(c, &c->answering)) {
		stat_inc(CLAIMD_ST_UNMATCHED);
		return;
	}
	outcome_wire_end(outcome, &end.status, &end.flags);
	egress_close(io, &c->answering, &c->remote, &end);
}

/*
 * c's framing was lost or left: the calls waiting on it end unknown, and
 * it is opaque from now on (its framer's state stays so). A frame of its
 * own, beside the one that found it, as stream.c's conn_lost.
 */
static __noinline int wire_gone(struct claimd_conn *c, struct io *io)
{
	stat_inc(CLAIMD_ST_WIRE_LOST);
	egress_lose_all(c, io);
	return 0;
}

/*
 * The framing events ev of w's framer on c, in io: calls begin and end, or
 * the framing is gone. A global function, as stream.c's on_events: the
 * loop that finds the events is checked apart from what they do.
 */
__noinline int wire_events(struct claimd_conn *c, struct io *io, struct wire_conn *w, __u32 ev)
{
	if (!c || !io || !w)
		return 0;
	if (ev & WIRE_EV_CALL_START)
		wire_call_open(c, io);
	if (ev & WIRE_EV_CALL_END)
		wire_call_answered(c, io, w->f.calls.outcome);
	if (ev & (WIRE_EV_ERROR | WIRE_EV_OPAQUE))
		wire_gone(c, io);
	return 0;
}

/*
 * Frame the buf->len bytes at buf->ubuf of io's direction of c through
 * w's framer; the events go to the calls. Bytes it could not frame lose
 * the framing; a request that moves bytes on a connection whose framing
 * is gone is opaque. A global function, as stream.c's feed_segment, in its
 * place on the chain of frames.
 */
__noinline int wire_feed_segment(struct claimd_conn *c, struct io *io, struct scan_buf *buf,
				 struct wire_conn *w)
{
	__u32 dir;
	__u64 len;

	if (!c || !io || !buf || !w)
		return 0;
	dir = io->dir == DIR_TX ? WIRE_TO_SERVER : WIRE_TO_CLIENT;
	len = buf->len;
	buf->off = 0;
	buf->wbase = 0;
	buf->wlen = 0;
	buf->rounds = 0;
	while (can_loop) {
		__u64 off = buf->off;
		__u32 ev;

		if (off >= len || buf->rounds++ >= WIRE_ROUNDS || w->f.calls.state != WIRE_OPEN)
			break;
		if (off >= buf->wbase + buf->wlen) {
			__u64 left = len - off;
			__u32 wlen = left > SCAN_WINDOW ? SCAN_WINDOW : left;

			if (bpf_probe_read_user(buf->data, wlen, (const void *)(buf->ubuf + off)))
				break;
			buf->wbase = off;
			buf->wlen = wlen;
		}
		if (w->proto == CLAIMD_PROTO_REDIS)
			ev = resp_window(w, buf, dir);
		else if (w->proto == CLAIMD_PROTO_POSTGRES)
			ev = pg_window(w, buf, dir);
		else
			ev = mysql_window(w, buf, dir);
		if (ev)
			wire_events(c, io, w, ev);
		if (ev & (WIRE_EV_ERROR | WIRE_EV_OPAQUE))
			break;
	}
	if (w->f.calls.state == WIRE_OPEN && buf->off < len) {
		/* More than WIRE_ROUNDS, or a window that could not be read: lost. */
		w->f.calls.state = WIRE_LOST;
		wire_gone(c, io);
	}
	if (w->f.calls.state != WIRE_OPEN)
		ingress_taint(io, CLAIMD_IN_OPAQUE);
	return 0;
}

/* The framer of c (key), NULL if it has none (evicted: counted, c opaque from now on). */
static __always_inline struct wire_conn *wire_of(struct claimd_conn *c, struct claimd_conn_key *key)
{
	struct wire_conn *w = bpf_map_lookup_elem(&wire_conns, key);

	if (w && w->sk_tag == c->sk_tag)
		return w;
	stat_inc(CLAIMD_ST_WIRE_LOST);
	c->proto = CLAIMD_PROTO_OTHER;
	return NULL;
}

/*
 * May c's first bytes be told? An outbound connection seen from its start:
 * one seeded or rejoined mid-stream (its framers seek) would be guessed.
 * A Unix one has no start claimd sees (bpf/unixsock.c): told from the
 * first bytes seen, where a client writes a command whole, or reads a
 * greeting that only a connection's start has.
 */
static __always_inline int wire_may_tell(const struct claimd_conn *c)
{
	return !(c->tx.flags & HTTP_F_SEEK) || (c->flags & CLAIMD_CONN_UNIX);
}

/*
 * c's first bytes (ret of them at ubuf, moved in io's direction) were
 * moved: does it speak Redis, PostgreSQL or MySQL? Then it gets a framer
 * and 1 is returned. Asked once per connection (c->told), of an outbound
 * one whose first bytes claimd saw from its start. A function of its own:
 * its frame is off the chain that ends calls.
 */
__noinline int wire_tell(struct claimd_conn *c, struct claimd_conn_key *key, struct io *io,
			 __u64 ubuf, long ret)
{
	struct wire_conn *w;
	__u32 zero = 0;
	__u64 word = 0;
	__u32 n = ret < 8 ? ret : 8;
	__u8 proto = CLAIMD_PROTO_OTHER;

	if (!c || !key || !io)
		return 0;
	c->told = 1;
	/*
	 * Eight bytes read whatever ret is (a size the verifier knows), those
	 * past the n moved zeroed; a buffer that ends before eight is told
	 * nothing.
	 */
	if (bpf_probe_read_user(&word, sizeof(word), (const void *)ubuf))
		return 0;
	if (n < 8)
		word &= (1ULL << (8 * n)) - 1;
	if (io->dir == DIR_TX) {
		if (resp_detect(word, n))
			proto = CLAIMD_PROTO_REDIS;
		else if (pg_detect(word, n))
			proto = CLAIMD_PROTO_POSTGRES;
	} else if (mysql_detect(word, n)) {
		proto = CLAIMD_PROTO_MYSQL;
	}
	if (proto == CLAIMD_PROTO_OTHER)
		return 0;
	/* The framer's zeroed state is its start; built in the per-CPU window's place. */
	_Static_assert(sizeof(struct wire_conn) <= sizeof(struct scan_buf), "the window holds it");
	w = bpf_map_lookup_elem(&scratch, &zero);
	if (!w)
		return 0;
	__builtin_memset(w, 0, sizeof(*w));
	w->sk_tag = c->sk_tag;
	w->proto = proto;
	if (bpf_map_update_elem(&wire_conns, key, w, BPF_ANY))
		return 0;
	c->proto = proto;
	stat_inc(CLAIMD_ST_WIRE_CONNS);
	return 1;
}

/*
 * buf->len bytes moved on c (key), an outbound connection, in io, at
 * buf->ubuf when they are one buffer (else 0): its first ones tell what it
 * speaks, or that it is never told (then tp_io_x calls here no more). 0: not a database's or a cache's (the HTTP framer's); 1: one's,
 * settled here (its framing gone: the thread's request is opaque); 2:
 * one's, for wire_feed_segment to frame. A global function: tp_io_x's own
 * walk through the verifier stays as it was, and its frame is off the
 * chain that ends calls.
 */
__noinline int wire_on_io(struct claimd_conn *c, struct claimd_conn_key *key, struct io *io,
			  struct scan_buf *buf)
{
	struct wire_conn *w;
	__u64 ubuf;
	long ret;

	if (!c || !key || !io || !buf)
		return 0;
	ubuf = buf->ubuf;
	ret = buf->len;
	if (!c->told && ret > 0) {
		if (ubuf && wire_may_tell(c))
			wire_tell(c, key, io, ubuf, ret);
		else /* its first bytes unread (an iovec), or joined mid-stream: never told */
			c->told = 1;
	}
	if (c->proto < CLAIMD_PROTO_REDIS)
		return 0;
	w = wire_of(c, key);
	if (w && w->f.calls.state == WIRE_OPEN && ubuf)
		return 2;
	/* Bytes it cannot read (an iovec, a msghdr, a read that drops them): framing lost. */
	if (w && w->f.calls.state == WIRE_OPEN) {
		w->f.calls.state = WIRE_LOST;
		wire_gone(c, io);
	}
	ingress_taint(io, CLAIMD_IN_OPAQUE);
	return 1;
}
