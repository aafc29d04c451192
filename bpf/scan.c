// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of a BPF compile unit (observer.bpf.c, parsebench.bpf.c), named
 * .c as such: the framer's inner loop over a window of bytes copied from
 * user memory, headers/http_parse.h stepped a token at a time where its
 * eight-byte fast paths apply, a byte at a time elsewhere. Nothing here
 * looks a map up: the benchmark compiles exactly this (with loop.bpf.h).
 */

/* Eight-byte words of a line being skipped taken in one step: 64 bytes. */
#define SCAN_SKIP_WORDS 8

/*
 * The eight bytes at at (< len, where 8 <= len), zeros past len: loaded to
 * end at len where the window ends sooner (a head's last line, written
 * apart from its body), and shifted down.
 */
static __always_inline __u64 scan_word_upto(const struct scan_buf *buf, __u32 at, __u32 len)
{
	__u32 drop = at + 8 > len ? at + 8 - len : 0, i = (at - drop) & (SCAN_WINDOW - 1);

	/* Kept masked: clang 14 drops the mask otherwise (scan_window's note). */
	barrier_var(i);
	if (i > SCAN_WINDOW - 8)
		return 0;
	/* drop is at most 7 (at < len); masked, the shift is plainly below 64 (64 is undefined). */
	return scan_word_at(buf, i) >> (8 * (drop & 7));
}

/*
 * A Content-Length line at pos whose first eight bytes are w, taken whole
 * (http_length_line) with the two words after them. Returns its length, or
 * 0.
 */
static __always_inline __u32 scan_length_line(struct http_framer *f, struct scan_buf *buf,
					      __u32 pos, __u32 len, __u64 w)
{
	if (len - pos < 19)
		return 0;
	return http_length_line(f, w, scan_word_upto(buf, pos + 8, len),
				scan_word_upto(buf, pos + 16, len));
}

/*
 * The rest of a request line after its target, or a status line through
 * its code, at pos in one step (http_request_end, http_status_start).
 * Returns the bytes taken with the line's event in bits 16 and up, or 0.
 */
static __always_inline __u32 scan_start_line(struct http_framer *f, struct scan_buf *buf, __u32 pos,
					     __u32 len)
{
	__u32 idx = pos & (SCAN_WINDOW - 1), r;
	__u64 w, w2;

	/* Kept masked: clang 14 drops the mask otherwise (scan_window's note). */
	barrier_var(idx);
	if (pos + 11 > len || idx > SCAN_WINDOW - 8)
		return 0;
	w = scan_word_at(buf, idx);
	w2 = scan_word_upto(buf, pos + 8, len);
	r = http_request_end(f, w, w2);
	return r ? r : http_status_start(f, w, w2);
}

/*
 * A header line at pos (the framer at HS_HDR_LINE) taken whole: a
 * Content-Length line (scan_length_line), or one whose name is none we
 * read (http_line_skip), ruled out by its first eight bytes or by the
 * sixteen after them where those begin one of ours (Content-Type). Its
 * line end is sought a word at a time after its first eight bytes, up to
 * SCAN_SKIP_WORDS words; one in the window's last seven bytes is left to
 * the steps. Returns the line's length, or 0 (a name we read, a line end
 * past the words or the window: the steps take it). The verifier bounds
 * this shape: loading the loop's last word back from the window's end, or
 * the Content-Length words loaded once for both questions, took tp_io_x
 * past its limit of 1,000,000 instructions.
 */
static __always_inline __u32 scan_line(struct http_framer *f, struct scan_buf *buf, __u32 pos,
				       __u32 len)
{
	__u32 idx = pos & (SCAN_WINDOW - 1), k, kind, n;
	__u64 w, w2 = 0, w3 = 0;

	/* Kept masked: clang 14 drops the mask otherwise (scan_window's note). */
	barrier_var(idx);
	if (pos + 8 >= len || idx > SCAN_WINDOW - 8)
		return 0;
	w = scan_word_at(buf, idx);
	kind = http_line_kind_of(f, w);
	if (kind == HTTP_HDR_CONTENT_LENGTH) {
		n = scan_length_line(f, buf, pos, len, w);
		if (n)
			return n;
	}
	if (kind == HTTP_LINE_STEP)
		return 0;
	if (kind != HTTP_LINE_OTHER) {
		w2 = scan_word_upto(buf, pos + 8, len);
		if (pos + 16 < len)
			w3 = scan_word_upto(buf, pos + 16, len);
		if (!http_line_not_ours(f, w, w2, w3))
			return 0;
	}
	for (k = 1; k <= SCAN_SKIP_WORDS; k++) {
		__u32 at = pos + 8 * k, i = at & (SCAN_WINDOW - 1);
		__u64 m;

		/* Kept masked: scan_window's note. */
		barrier_var(i);
		if (at + 8 > len || i > SCAN_WINDOW - 8)
			return 0;
		m = http_word_eq(scan_word_at(buf, i), '\n');
		if (m)
			return http_line_skip(f, 8 * k + http_word_first(m) + 1);
	}
	return 0;
}

/*
 * Step the framer over buf[start, len) until a framing event or a change to
 * skipping. Returns the position reached, with the events in bits 16 and up.
 *
 * Each step is a whole header line (scan_line); the rest of a request line
 * after its target or a status line through its code (scan_start_line); a
 * fast path of http_word() (a method, a request target, a version, a
 * status, the name of a header we read) over the eight bytes at the
 * position; on a line being skipped, http_skip_word() over up to
 * SCAN_SKIP_WORDS words until the line's end and its LF; the CRLF that ends
 * a head; else one byte through http_step(). At least one byte a step, so
 * len steps reach the end. A may_goto loop (loop.bpf.h), not bpf_loop(): no
 * call per step. The position lives in the map (scan_buf.pos), so that the
 * verifier sees an unknown value at every step and the loop's state
 * repeats; its index is masked.
 */
__noinline __u32 scan_window(struct http_framer *f, struct scan_buf *buf, __u32 start, __u32 len)
{
	__u32 ev = 0, stop;

	if (!f || !buf || start >= len || len > SCAN_WINDOW)
		return start;
	buf->pos = start;
	while (can_loop) {
		__u32 pos = buf->pos, idx, k;
		__u8 c;

		if (pos >= len)
			break;
		if (http_skipping_line(f)) {
			/* The words up to the line's end: the same calls, fewer steps. */
			for (k = 0; k < SCAN_SKIP_WORDS; k++) {
				__u32 n;

				idx = pos & (SCAN_WINDOW - 1);
				barrier_var(idx); /* kept masked: the note below */
				if (pos + 8 > len || idx > SCAN_WINDOW - 8)
					break;
				n = http_skip_word(f, scan_word_at(buf, idx));
				pos += n;
				if (n < 8)
					break;
			}
			if (pos >= len) {
				buf->pos = pos;
				break;
			}
			/* A head's line ended with its LF: the next one's fast paths. */
			if (!http_skipping_line(f)) {
				buf->pos = pos;
				continue;
			}
		} else {
			idx = pos & (SCAN_WINDOW - 1);
			/*
			 * clang 14 drops the mask once it knows pos < len <=
			 * 512; the verifier then sees an unbounded 64-bit index
			 * ("unbounded memory access"). The barrier keeps the
			 * masked value.
			 */
			barrier_var(idx);
			if (f->state == HS_HDR_LINE) {
				__u32 n = scan_line(f, buf, pos, len);

				if (n) {
					buf->pos = pos + n;
					continue;
				}
			}
			if ((f->state == HS_START && f->kind == HTTP_KIND_RESPONSE) ||
			    (f->state == HS_REQ_TARGET && f->pos)) {
				__u32 r = scan_start_line(f, buf, pos, len);

				if (r) {
					buf->pos = pos + (r & 0xffff);
					ev = r >> 16;
					break;
				}
			}
			if (pos + 8 <= len && idx <= SCAN_WINDOW - 8 && http_wants_word(f)) {
				__u32 n = http_word(f, scan_word_at(buf, idx));

				if (n) {
					buf->pos = pos + n;
					continue;
				}
			}
		}
		idx = pos & (SCAN_WINDOW - 1);
		barrier_var(idx); /* kept masked: the note above */
		c = buf->data[idx];
		/* The CRLF that ends a head, at once. */
		if (c == '\r' && f->state == HS_HDR_LINE && pos + 1 < len) {
			__u32 i1 = (pos + 1) & (SCAN_WINDOW - 1);

			barrier_var(i1); /* kept masked: the note above */
			if (buf->data[i1] == '\n') {
				ev = http_head_crlf(f);
				if (ev) {
					buf->pos = pos + 2;
					break;
				}
			}
		}
		ev = http_step(f, c);
		buf->pos = pos + 1;
		if (ev || http_skipping(f) || http_swallowing(f))
			break;
	}
	stop = buf->pos;
	if (stop > len)
		stop = len;
	return stop | (ev << 16);
}
