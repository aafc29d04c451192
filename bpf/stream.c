// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c. Feeding the bytes a syscall moved through the
 * connection's HTTP framer. Bytes are copied from user memory a window at a
 * time into scratch (per CPU; per thread for the TLS probes, which can be
 * preempted) and stepped through http_step()
 * (headers/http_parse.h) by scan_window(); bodies are skipped by count
 * without being read. Each framing event is handed to on_events(), which
 * opens and closes ingresses and egresses. Work per syscall is bounded: what
 * does not fit is counted, and the framing is lost rather than guessed: it
 * heals at the next message start (conn_lost).
 *
 * The verifier: on_events, conn_lost, scan_window and feed_segment are
 * global functions, checked once each with opaque arguments; their loops
 * are may_goto loops (loop.bpf.h), which it checks until their state
 * repeats. So are the functions that open and close requests and calls
 * (ingress.c), called from many places and from loops over a queue:
 * checked where each was called, they took tp_io_x to 920,000
 * instructions of the verifier's million (tests/bpf/test_stack.c holds
 * every program to half).
 *
 * Two bounds shape the frames. The deepest chain of calls is seven
 * frames of the kernel's eight (MAX_CALL_FRAMES): a program, iov_step,
 * feed_segment, on_events or conn_lost, egress_close, verdict_of,
 * verdict_step ("the call stack of 8 frames is too deep", clang 14, Linux
 * 6.18, when a frame more was in the chain). And a chain's frames share 512
 * bytes of stack: the kernel gives a tracepoint's program a stack of its
 * own where it needs more, but not a uprobe's, which can be preempted
 * (Linux 6.18.44). The TLS probes' deepest chain (the program,
 * feed_segment, conn_lost or on_events, ingress_close, count_edges,
 * count_step) takes about 410 bytes now, 100 to spare. Kernels before 6.13
 * hold tp_io_x's to 512 too: 40 bytes to spare (tests/bpf/test_stack.c
 * checks every program so). Hence frames beside each other rather than
 * under: on_events opens the next pipelined request after ingress_close
 * returns; a framing error goes to conn_lost beside on_events; egress_open,
 * whose call log spills registers, is a frame of its own; a call that ends
 * outside any request is counted in egress_count_outside, beside verdict_of.
 */

#define FEED_ROUNDS 256 /* windows, skips and events per buffer */
/*
 * iovec entries framed per vectored syscall. Servers write a head a line
 * per entry (8-30 entries) and bodies in many pieces; a segment costs about
 * what a read(2) of the same bytes does (docs/performance.md has the
 * figures). Past the bound, bytes known to be body are skipped by count and
 * anything else loses the framing, which heals at the next message start.
 */
#define FEED_SEGMENTS 64

static __always_inline struct http_framer *io_framer(struct claimd_conn *c, struct io *io)
{
	return io->dir == DIR_RX ? &c->rx : &c->tx;
}

/*
 * A message may begin at io's bytes on c: if it is a request (read on an
 * inbound connection, written on an outbound one), its start is now. The
 * other direction's starts are never read: no clock for them.
 */
static __always_inline void request_may_begin(struct claimd_conn *c, struct io *io)
{
	if (io->dir == DIR_RX && c->role == CLAIMD_ROLE_INBOUND)
		c->rx_first_ns = io_now(io);
	else if (io->dir == DIR_TX && c->role == CLAIMD_ROLE_OUTBOUND)
		c->tx_first_ns = io_now(io);
}

/* A request line was read on an inbound connection. */
static __always_inline void request_in(struct claimd_conn *c, struct io *io)
{
	struct claimd_pending p = {
		.start_ns = c->rx_first_ns,
		.tid = io->tid,
		.target_hash = c->rx.hash,
		.method = c->rx.method,
		.slot = CLAIMD_NO_SLOT,
	};
	int first = !c->count && !c->extra;

	fifo_push(c, &p);
	if (first)
		ingress_open(c, io, &p);
}

static __always_inline __u8 lost_bit(const struct io *io)
{
	return io->dir == DIR_RX ? CLAIMD_LOST_RX : CLAIMD_LOST_TX;
}

/*
 * The framing of io's direction of c is lost (junk, a bound exceeded, bytes
 * claimd cannot see). A connection that never carried HTTP is left alone:
 * not ours. Any other seeks the next message start at the start of a later
 * syscall's bytes, and until then every byte moved on it makes the ingress
 * of the thread that moved it unknown. What the lost bytes may have held is
 * settled now: calls waiting for an answer on it end with their outcome
 * unknown; responses being written on it leave their requests unknown.
 * Pipelined requests written inside one lost stretch stay a risk: their
 * answers would be paired with later requests (docs/architectures.md).
 */
__noinline int conn_lost(struct claimd_conn *c, struct io *io)
{
	struct http_framer *f;

	if (!c || !io)
		return 0;
	f = io_framer(c, io);
	if (!(c->flags & CLAIMD_CONN_HTTP)) {
		if (f->flags & HTTP_F_SEEK) {
			f->state = HS_START;
			f->head = 0;
		} else {
			f->state = HS_LOST;
		}
		return 0;
	}
	http_framer_init(f, f->kind, 1);
	if (!(c->lost & lost_bit(io)))
		stat_inc(CLAIMD_ST_FRAMING_LOST);
	c->lost |= lost_bit(io);
	ingress_taint(io, CLAIMD_IN_BLIND);
	if (c->role == CLAIMD_ROLE_OUTBOUND && io->dir == DIR_RX)
		egress_lose_all(c, io);
	else if (c->role == CLAIMD_ROLE_INBOUND && io->dir == DIR_TX)
		ingress_lose_all(c, io);
	return 0;
}

/*
 * The framing events ev of io's direction of c, but for an error, which
 * framing_events() takes.
 */
__noinline int on_events(struct claimd_conn *c, struct io *io, __u32 ev)
{
	struct http_framer *f;
	int inbound;

	if (!c || !io)
		return 0;
	f = io_framer(c, io);
	inbound = c->role == CLAIMD_ROLE_INBOUND;
	/* Seeking after a loss: already counted as lost. */
	if ((ev & HTTP_EV_RESYNC) && !(c->lost & lost_bit(io)))
		stat_inc(CLAIMD_ST_PARSE_RESYNC);
	if (ev & HTTP_EV_START) {
		if (c->lost & lost_bit(io)) {
			c->lost &= ~lost_bit(io);
			stat_inc(CLAIMD_ST_FRAMING_HEALED);
		}
		c->flags |= CLAIMD_CONN_HTTP;
		if (f->kind == HTTP_KIND_REQUEST) {
			if (inbound)
				request_in(c, io);
			else {
				egress_open(c, io);
				egress_open_show(c, io->key.tgid);
				egress_early_take(c, io);
			}
		} else if (http_final_status(f->status)) {
			struct claimd_pending *head = fifo_peek(c);

			/* A response to HEAD has no body, whatever its headers say. */
			if (head)
				f->method = head->method;
			if (inbound) {
				ingress_close(c, io, f->status, 0);
				/* The next pipelined request is served by this thread now. */
				head = fifo_peek(c);
				if (head)
					ingress_open(c, io, head);
			} else
				egress_answered(c, io, f->status);
		}
	}
	if ((ev & HTTP_EV_HEAD_END) && !inbound && f->kind == HTTP_KIND_RESPONSE &&
	    http_final_status(f->status))
		egress_answer_done(c, io);
	/* An event loop's request or call: keyed by what its head carries (keyed.c). */
	if ((ev & HTTP_EV_HEAD_END) && f->kind == HTTP_KIND_REQUEST && (f->flags & HTTP_F_IDS))
		keyed_head(c, io);
	/* 101, or a tunnel: what follows in both directions is not HTTP. */
	if ((ev & HTTP_EV_HEAD_END) && f->state == HS_UPGRADED) {
		c->rx.state = HS_UPGRADED;
		c->tx.state = HS_UPGRADED;
	}
	if (ev & HTTP_EV_END) {
		/* The next message may begin in this same buffer. */
		request_may_begin(c, io);
	}
	return 0;
}

/*
 * Framing events, as the framer returned them. An error loses the framing
 * here, beside on_events() rather than under it: conn_lost() settles the
 * calls waiting on the connection, a chain of frames as deep as an
 * answer's, and the two together would pass the kernel's 512 bytes of stack.
 */
static __always_inline void framing_events(struct claimd_conn *c, struct io *io, __u32 ev)
{
	if (ev & HTTP_EV_ERROR) {
		stat_inc(CLAIMD_ST_PARSE_ERRORS);
		conn_lost(c, io);
		return;
	}
	on_events(c, io, ev);
}

/*
 * Feed buf->len bytes of user memory at buf->ubuf; returns how many were
 * framed. One may_goto loop (loop.bpf.h): each round skips body bytes by
 * count, or copies the next window of user memory when the position left
 * the one held, and scans it up to the next framing event, which goes to
 * framing_events(). The segment, the position and the window live in the
 * map (scan_buf), as the scan's own position does, so the loop's state
 * repeats for the verifier (and a fifth argument, the segment's length
 * passed apart, met "verifier bug: backtracking call unexpected regs" on
 * Linux 6.18). FEED_ROUNDS bounds the rounds: a syscall's events, skips
 * and windows.
 */
__noinline __u64 feed_segment(struct claimd_conn *c, struct io *io, struct scan_buf *buf)
{
	struct http_framer *f;
	__u64 ubuf, len;

	if (!c || !io || !buf)
		return 0;
	ubuf = buf->ubuf;
	len = buf->len;
	f = io_framer(c, io);
	if (f->state == HS_START)
		request_may_begin(c, io);
	buf->off = 0;
	buf->wbase = 0;
	buf->wlen = 0;
	buf->rounds = 0;
	while (can_loop) {
		__u64 off = buf->off, wbase = buf->wbase;
		__u32 wlen = buf->wlen, ev = 0;

		if (off >= len || buf->rounds++ >= FEED_ROUNDS)
			break;
		if (http_skipping(f)) {
			off += http_skip(f, len - off, &ev);
		} else if (http_swallowing(f)) {
			buf->off = len;
			break;
		} else {
			__u32 r;

			if (off < wbase || off >= wbase + wlen) {
				__u64 w = len - off;

				wlen = w > SCAN_WINDOW ? SCAN_WINDOW : w;
				if (bpf_probe_read_user(buf->data, wlen,
							(const void *)(ubuf + off)))
					break; /* fault: left to feed_unframed */
				wbase = off;
				buf->wbase = wbase;
				buf->wlen = wlen;
			}
			r = scan_window(f, buf, off - wbase, wlen);
			/* scan_window answers in one word: position in bits 0-15, events above. */
			off = wbase + (r & 0xffff);
			ev = r >> 16;
		}
		buf->off = off;
		if (ev) {
			framing_events(c, io, ev);
			if (ev & (HTTP_EV_RESYNC | HTTP_EV_ERROR)) {
				/* Seeking: try again at the next syscall's buffer. */
				buf->off = len;
				break;
			}
		}
	}
	return buf->off;
}

/*
 * After io's bytes on c: bytes moved while this direction seeks a message
 * start (whose, claimd cannot tell), or on an outbound connection that is
 * not HTTP (a database, a cache: a call whose failures are not seen), mark
 * the ingress io's thread serves (ingress_taint). An outbound connection
 * is not HTTP when its first bytes were not, or, joined mid-stream (seeded:
 * a pool opened before claimd started), while bytes move on it and none
 * has begun an HTTP message yet: an upload's body at the join may make one
 * request so, unknown rather than claimed.
 */
static __always_inline void conn_taint_io(struct claimd_conn *c, struct io *io)
{
	struct http_framer *f = io_framer(c, io);

	if (c->lost & lost_bit(io))
		ingress_taint(io, CLAIMD_IN_BLIND);
	else if (c->role == CLAIMD_ROLE_OUTBOUND && !(c->flags & CLAIMD_CONN_HTTP) &&
		 (f->state == HS_LOST || (f->flags & HTTP_F_SEEK)))
		ingress_taint(io, CLAIMD_IN_OPAQUE);
}

/* Bytes that could not be framed: the stream is lost unless they are all body. */
static __always_inline void feed_unframed(struct claimd_conn *c, struct io *io, __u64 n)
{
	struct http_framer *f = io_framer(c, io);
	__u32 ev = 0;

	if (!n || http_swallowing(f))
		return;
	if (http_skipping(f) && f->remaining >= n) {
		http_skip(f, n, &ev);
		if (ev)
			framing_events(c, io, ev);
		return;
	}
	stat_inc(CLAIMD_ST_PARSE_TRUNCATED);
	conn_lost(c, io);
}

static __always_inline void feed_buf(struct claimd_conn *c, struct io *io, struct scan_buf *buf,
				     __u64 ubuf, __u64 len)
{
	buf->ubuf = ubuf;
	buf->len = len;
	feed_unframed(c, io, len - feed_segment(c, io, buf));
}

struct iov_state {
	struct claimd_conn *c;
	struct io *io;
	struct scan_buf *buf;
	__u64 uiov;  /* the iovec array in user memory */
	__u64 cnt;   /* its entries */
	__u64 total; /* bytes the syscall moved, not framed yet */
};

/*
 * One iovec entry: the syscall's bytes fill the entries in order. The
 * entries come from user memory SCAN_IOV_BLOCK at a time, into the
 * scratch beside the window (scan_buf.iov): a copy costs about as much
 * for one entry as for eight (docs/performance.md), and a head written a
 * line per entry has 8 to 30 of them.
 */
static long iov_step(__u64 i, void *data)
{
	struct iov_state *s = data;
	struct scan_buf *buf = s->buf;
	const struct uiovec *v = &buf->iov[i & (SCAN_IOV_BLOCK - 1)];
	__u64 n, done;

	if (i >= s->cnt || !s->total)
		return 1;
	if (!(i & (SCAN_IOV_BLOCK - 1))) {
		__u64 left = s->cnt - i;
		__u32 want = left < SCAN_IOV_BLOCK ? (__u32)left : SCAN_IOV_BLOCK;

		if (bpf_probe_read_user(buf->iov, want * sizeof(buf->iov[0]),
					(const void *)(s->uiov + i * sizeof(buf->iov[0]))))
			return 1;
	}
	n = v->len < s->total ? v->len : s->total;
	buf->ubuf = v->base;
	buf->len = n;
	done = feed_segment(s->c, s->io, buf);
	s->total -= done;
	return done < n;
}

static __always_inline void feed_iov(struct claimd_conn *c, struct io *io, struct scan_buf *buf,
				     __u64 uiov, __u64 cnt, __u64 total)
{
	struct iov_state s = {
		.c = c, .io = io, .buf = buf, .uiov = uiov, .cnt = cnt, .total = total
	};

	bpf_loop(FEED_SEGMENTS, iov_step, &s, 0);
	feed_unframed(c, io, s.total);
}

/* Status of a response that could not be sent (client gone), or 0. */
static __always_inline __u16 peek_status(__u64 ubuf, __u64 len)
{
	__u32 zero = 0;
	struct scan_buf *buf = bpf_map_lookup_elem(&scratch, &zero);
	struct http_framer f;
	__u32 n = len < 16 ? len : 16;

	if (!buf || !n || bpf_probe_read_user(buf->data, n, (const void *)ubuf))
		return 0;
	http_framer_init(&f, HTTP_KIND_RESPONSE, 0);
	if (!((scan_window(&f, buf, 0, n) >> 16) & HTTP_EV_START))
		return 0;
	return f.status;
}
