// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of a BPF compile unit (observer.bpf.c, parsebench.bpf.c), named
 * .c as such: the framer's inner loop over a window of bytes copied from
 * user memory, headers/http_parse.h stepped a token at a time where its
 * eight-byte fast paths apply, a byte at a time elsewhere. Nothing here
 * looks a map up: the benchmark compiles exactly this.
 */

struct scan_state {
	struct http_framer *f;
	struct scan_buf *buf;
	__u32 len; /* valid bytes in buf */
	__u32 ev;
};

/*
 * One step: a fast path of http_word() (a method, a request target, a
 * version, a status, the name of a header we read, a line being skipped)
 * over the eight bytes at the position, else byte by byte until one may
 * apply again. Every step takes at least one byte. The position lives in
 * the map (scan_buf.pos): a growing position in the loop's own state kept
 * the verifier from ever converging ("BPF program is too large", clang 14,
 * Linux 6.18).
 */
static long scan_word(__u64 i, void *data)
{
	struct scan_state *s = data;
	struct http_framer *f = s->f;
	struct scan_buf *b = s->buf;
	__u32 pos = b->pos, idx, j, n;

	if (pos >= s->len)
		return 1;
	idx = pos & (SCAN_WINDOW - 1);
	/*
	 * clang 14 drops the mask once it knows pos <= 504 in 32 bits; the
	 * verifier then sees an unbounded 64-bit index ("unbounded memory
	 * access"). The barrier keeps the masked value.
	 */
	barrier_var(idx);
	if (pos + 8 <= s->len && idx <= SCAN_WINDOW - 8 && http_wants_word(f)) {
		n = http_word(f, *(__u64 *)&b->data[idx]);
		if (n) {
			b->pos = pos + n;
			return 0;
		}
	}
#pragma clang loop unroll(disable)
	for (j = 0; j < 8; j++) {
		__u32 ev;

		if (pos >= s->len)
			break;
		ev = http_step(f, b->data[pos & (SCAN_WINDOW - 1)]);
		pos++;
		if (ev || http_skipping(f) || http_swallowing(f)) {
			b->pos = pos;
			s->ev = ev;
			return 1;
		}
		if (http_wants_word(f))
			break;
	}
	b->pos = pos;
	return 0;
}

/*
 * Step the framer over buf[start, len) until a framing event or a change to
 * skipping. Returns the position reached, with the events in bits 16 and up.
 */
__noinline __u32 scan_window(struct http_framer *f, struct scan_buf *buf, __u32 start, __u32 len)
{
	struct scan_state s = { .f = f, .buf = buf, .len = len };
	__u32 stop;

	if (!f || !buf || start >= len || len > SCAN_WINDOW)
		return start;
	buf->pos = start;
	/* Every step takes a byte at least: SCAN_WINDOW steps reach the end. */
	bpf_loop(SCAN_WINDOW, scan_word, &s, 0);
	stop = buf->pos;
	if (stop > len)
		stop = len;
	return stop | (s.ev << 16);
}

/* Copy n (<= SCAN_WINDOW) bytes of user memory into buf; 0 on a fault. */
__noinline __u32 read_window(struct scan_buf *buf, __u64 uptr, __u32 n)
{
	if (!buf || !n || n > SCAN_WINDOW)
		return 0;
	if (bpf_probe_read_user(buf->data, n, (const void *)uptr))
		return 0;
	return n;
}
