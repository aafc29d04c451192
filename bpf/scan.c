// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of a BPF compile unit (observer.bpf.c, parsebench.bpf.c), named
 * .c as such: the framer's inner loop over a window of bytes copied from
 * user memory, headers/http_parse.h stepped eight bytes at a time. Nothing
 * here touches a map: the benchmark compiles exactly this.
 */

struct scan_state {
	struct http_framer *f;
	struct scan_buf *buf;
	__u32 start; /* first byte of buf to feed */
	__u32 len;   /* valid bytes in buf */
	__u32 stop;  /* set on exit: bytes of buf consumed */
	__u32 ev;
};

/*
 * Eight bytes per iteration: first the fast paths of http_word() (a line
 * being skipped, a header line we do not read, a status line's version),
 * then byte by byte what they left. Addressed by the loop counter, not a
 * stored position: a stored, growing position kept the verifier from ever
 * converging ("BPF program is too large", clang 14, Linux 6.18).
 */
static long scan_word(__u64 i, void *data)
{
	struct scan_state *s = data;
	__u32 base = s->start + (__u32)i * 8, j = 0, idx;

	if (base >= s->len) {
		s->stop = s->len;
		return 1;
	}
	idx = base & (SCAN_WINDOW - 1);
	/*
	 * clang 14 drops the mask once it knows base <= 504 in 32 bits; the
	 * verifier then sees an unbounded 64-bit index ("unbounded memory
	 * access"). The barrier keeps the masked value.
	 */
	barrier_var(idx);
	if (base + 8 <= s->len && idx <= SCAN_WINDOW - 8 && http_wants_word(s->f)) {
		j = http_word(s->f, *(__u64 *)&s->buf->data[idx]);
		if (j >= 8)
			return 0;
	}
#pragma clang loop unroll(disable)
	for (; j < 8; j++) {
		__u32 pos = base + j, ev;

		if (pos >= s->len) {
			s->stop = pos;
			return 1;
		}
		ev = http_step(s->f, s->buf->data[pos & (SCAN_WINDOW - 1)]);
		if (ev || http_skipping(s->f) || http_swallowing(s->f)) {
			s->ev = ev;
			s->stop = pos + 1;
			return 1;
		}
	}
	return 0;
}

/*
 * Step the framer over buf[start, len) until a framing event or a change to
 * skipping. Returns the position reached, with the events in bits 16 and up.
 */
__noinline __u32 scan_window(struct http_framer *f, struct scan_buf *buf, __u32 start, __u32 len)
{
	struct scan_state s = { .f = f, .buf = buf, .start = start, .len = len };

	if (!f || !buf || start >= len || len > SCAN_WINDOW)
		return start;
	s.stop = len;
	bpf_loop(SCAN_WINDOW / 8, scan_word, &s, 0);
	return s.stop | (s.ev << 16);
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
