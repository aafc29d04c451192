/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * HTTP/1.x message framing, one byte at a time.
 *
 * One parser for every side: the BPF programs feed it the bytes a socket
 * syscall moved, user-space tests and fuzzers feed it buffers. It keeps only
 * what framing needs (a few counters, no copy of the data), so it survives
 * messages split anywhere across reads, finds each message of a pipelined
 * stream, and never mistakes a body for a message start: bodies are skipped
 * by length (http_skip), not scanned. It reports message starts (method and
 * a hash of the target for requests, the status for responses), the end of
 * the header block (with the x-error-claim value seen, and for requests the
 * hashes of a request id and of the user agent they carry), and message
 * ends.
 *
 * Written for the verifier: no pointers kept, no unbounded loops, every
 * array index masked. Nothing here reads past the byte it is handed.
 */
#ifndef CLAIMD_HTTP_PARSE_H
#define CLAIMD_HTTP_PARSE_H

#ifdef __bpf__
#define HTTP_INLINE static __always_inline
#else
#include <linux/types.h>
#define HTTP_INLINE static inline
#endif

/* Longest head (request/status line plus headers) framed; longer is an error. */
#define HTTP_MAX_HEAD	65536
#define HTTP_MAX_METHOD 10
#define HTTP_MAX_LENGTH (1ULL << 40) /* larger Content-Length or chunk: not trusted */
#define HTTP_FNV_OFFSET 2166136261u
#define HTTP_FNV_PRIME	16777619u

enum http_kind {
	HTTP_KIND_REQUEST = 0,
	HTTP_KIND_RESPONSE = 1,
};

enum http_method {
	HTTP_M_NONE = 0,
	HTTP_M_GET,
	HTTP_M_HEAD,
	HTTP_M_POST,
	HTTP_M_PUT,
	HTTP_M_DELETE,
	HTTP_M_PATCH,
	HTTP_M_OPTIONS,
	HTTP_M_CONNECT,
	HTTP_M_TRACE,
	HTTP_M_OTHER, /* a well-formed token that is none of the above */
	HTTP_M__COUNT,
};

enum http_claim {
	HTTP_CLAIM_NONE = 0,
	HTTP_CLAIM_CLAIMED = 1,
	HTTP_CLAIM_UNCLAIMED = 2,
};

enum http_state {
	HS_START = 0,	 /* between messages */
	HS_REQ_METHOD,	 /* method token */
	HS_REQ_TARGET,	 /* request target, hashed */
	HS_REQ_VERSION,	 /* "HTTP/1.x" then end of line */
	HS_REQ_LINE_CR,	 /* CR seen after the version */
	HS_RESP_VERSION, /* "HTTP/1.x " */
	HS_RESP_STATUS,	 /* three digits */
	HS_RESP_REASON,	 /* rest of the status line */
	HS_HDR_LINE,	 /* start of a header line */
	HS_HDR_NAME,	 /* inside a header name */
	HS_HDR_VALUE,	 /* inside the value of a header we read */
	HS_HDR_SKIP,	 /* rest of a header line we ignore */
	HS_HDR_END_CR,	 /* CR at the start of a line: the head ends */
	HS_BODY_LEN,	 /* body of known length: skipped by http_skip */
	HS_BODY_EOF,	 /* body runs until the connection closes */
	HS_CHUNK_SIZE,	 /* hex size of the next chunk */
	HS_CHUNK_EXT,	 /* rest of a chunk-size line */
	HS_CHUNK_DATA,	 /* chunk data: skipped by http_skip */
	HS_CHUNK_END,	 /* CRLF after chunk data */
	HS_TRAILER,	 /* start of a trailer line after the last chunk */
	HS_TRAILER_SKIP, /* rest of a trailer line */
	HS_TRAILER_CR,	 /* CR at the start of a trailer line */
	HS_UPGRADED,	 /* 101 or CONNECT: no longer HTTP */
	HS_LOST,	 /* not HTTP, or framing lost: everything is ignored */
	HS__COUNT,
};

/* Events, a bit mask returned by http_step / http_skip. */
#define HTTP_EV_START	 0x01 /* request line or status line complete */
#define HTTP_EV_HEAD_END 0x02 /* header block complete, body mode known */
#define HTTP_EV_END	 0x04 /* message complete (no body, or body done) */
#define HTTP_EV_ERROR	 0x08 /* malformed: the framer is now HS_LOST */
#define HTTP_EV_RESYNC	 0x10 /* malformed while seeking: back to HS_START */

/* http_framer.flags */
#define HTTP_F_HAVE_LEN 0x01 /* Content-Length seen */
#define HTTP_F_CHUNKED	0x02 /* Transfer-Encoding: chunked */
#define HTTP_F_SEEK	0x04 /* joined mid-stream: junk resyncs instead of losing */
/*
 * Read a request's ids and user agent (HTTP_HDR_USER_AGENT and after);
 * without it their lines are skipped as any other's. Set by the framer's
 * owner, kept across messages.
 */
#define HTTP_F_IDS 0x08

/*
 * Header names we read, recognised by an FNV-1a hash of their bytes OR 0x20
 * (lower case, for letters) and their length: one multiply per name byte
 * instead of a character table per candidate. The unit tests check the
 * constants against http_hdr_hash().
 */
#define HTTP_HDR_CONTENT_LENGTH	    0
#define HTTP_HDR_TRANSFER_ENCODING  1
#define HTTP_HDR_ERROR_CLAIM	    2
#define HTTP_HDR_USER_AGENT	    3
#define HTTP_HDR_TRACEPARENT	    4 /* W3C trace context: its trace-id is the id */
#define HTTP_HDR_B3_TRACE_ID	    5 /* x-b3-traceid */
#define HTTP_HDR_REQUEST_ID	    6 /* x-request-id */
#define HTTP_HDR_COUNT		    7 /* also: none of them */
#define HTTP_HDR_NAME_MAX	    18
#define HTTP_HASH_CONTENT_LENGTH    0x4df9451du /* "content-length", 14 bytes */
#define HTTP_HASH_TRANSFER_ENCODING 0xddb4744cu /* "transfer-encoding", 17 bytes */
#define HTTP_HASH_ERROR_CLAIM	    0x40fd8ad1u /* "x-error-claim", 13 bytes */
#define HTTP_HASH_USER_AGENT	    0x24259beeu /* "user-agent", 10 bytes */
#define HTTP_HASH_TRACEPARENT	    0x6c0b151eu /* "traceparent", 11 bytes */
#define HTTP_HASH_B3_TRACE_ID	    0xbbe2f824u /* "x-b3-traceid", 12 bytes */
#define HTTP_HASH_REQUEST_ID	    0xe2c21457u /* "x-request-id", 12 bytes */
/* After eight bytes, a name that is none of these prefixes is not ours. */
#define HTTP_HASH8_CONTENT  0xcb4e713du /* "content-" */
#define HTTP_HASH8_TRANSFER 0xe2857f86u /* "transfer" */
#define HTTP_HASH8_X_ERROR  0x3e2342ffu /* "x-error-" */
#define HTTP_HASH8_USER_AGE 0x5b32f5f4u /* "user-age" */
#define HTTP_HASH8_TRACEPAR 0xd6f50889u /* "tracepar" */
#define HTTP_HASH8_X_B3_TRA 0x0da38279u /* "x-b3-tra" */
#define HTTP_HASH8_X_REQUES 0x975d6db5u /* "x-reques" */

struct http_framer {
	__u64 acc;	 /* method bytes, name hash, Content-Length or chunk size */
	__u64 remaining; /* body or chunk bytes still to skip */
	__u32 hash;	 /* FNV-1a of the request target */
	__u32 head;	 /* bytes of the current head so far */
	__u16 status;	 /* response status */
	__u8 state;	 /* enum http_state */
	__u8 kind;	 /* enum http_kind */
	__u8 method;	 /* request: parsed; response: method answered (HEAD matters) */
	__u8 pos;	 /* position inside a literal or token */
	__u8 hdr;	 /* header index (HTTP_HDR_*) while in a value */
	__u8 flags;	 /* HTTP_F_* */
	__u8 claim;	 /* enum http_claim of the current response */
	__u8 sub;	 /* value sub-state: which literal is being matched */
	__u8 id_kind;	 /* the header id_hash came from: HTTP_HDR_*, 0 none */
	__u8 pad;
	/*
	 * A request's id, as it carries one: the FNV-1a of traceparent's
	 * trace-id, else of x-b3-traceid's value, else of x-request-id's; 0
	 * none. The same request relayed by a proxy, or a call an instrumented
	 * service makes for it, carries the same.
	 */
	__u32 id_hash;
	__u32 ua_hash; /* FNV-1a of its User-Agent value; 0 none */
	__u32 pad2;
};

HTTP_INLINE void http_framer_init(struct http_framer *f, __u8 kind, int seek)
{
	__builtin_memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->state = HS_START;
	if (seek)
		f->flags = HTTP_F_SEEK;
}

HTTP_INLINE __u8 http_lower(__u8 c)
{
	return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

/* Character of a literal value we match: "chunked", "claimed", "unclaimed". */
#define HTTP_LIT_CHUNKED   0
#define HTTP_LIT_CLAIMED   1
#define HTTP_LIT_UNCLAIMED 2
/* clang-format off: one line per character reads best */
HTTP_INLINE __u8 http_lit_char(__u32 lit, __u32 pos)
{
	/* "claimed" is "unclaimed" without its first two letters. */
	if (lit == HTTP_LIT_UNCLAIMED) {
		if (pos == 0)
			return 'u';
		if (pos == 1)
			return 'n';
		pos -= 2;
		lit = HTTP_LIT_CLAIMED;
	}
	if (lit == HTTP_LIT_CLAIMED) {
		switch (pos) {
		case 0:
			return 'c';
		case 1:
			return 'l';
		case 2:
			return 'a';
		case 3:
			return 'i';
		case 4:
			return 'm';
		case 5:
			return 'e';
		case 6:
			return 'd';
		}
		return 0;
	}
	switch (pos) {
	case 0:
		return 'c';
	case 1:
		return 'h';
	case 2:
		return 'u';
	case 3:
		return 'n';
	case 4:
		return 'k';
	case 5:
		return 'e';
	case 6:
		return 'd';
	}
	return 0;
}
/* clang-format on */

HTTP_INLINE __u8 http_method_of(__u64 token, __u32 len)
{
	/* token holds the method's bytes, first byte most significant. */
	switch (len) {
	case 3:
		if (token == 0x474554) /* GET */
			return HTTP_M_GET;
		if (token == 0x505554) /* PUT */
			return HTTP_M_PUT;
		break;
	case 4:
		if (token == 0x48454144) /* HEAD */
			return HTTP_M_HEAD;
		if (token == 0x504f5354) /* POST */
			return HTTP_M_POST;
		break;
	case 5:
		if (token == 0x5041544348ULL) /* PATCH */
			return HTTP_M_PATCH;
		if (token == 0x5452414345ULL) /* TRACE */
			return HTTP_M_TRACE;
		break;
	case 6:
		if (token == 0x44454c455445ULL) /* DELETE */
			return HTTP_M_DELETE;
		break;
	case 7:
		if (token == 0x4f5054494f4e53ULL) /* OPTIONS */
			return HTTP_M_OPTIONS;
		if (token == 0x434f4e4e454354ULL) /* CONNECT */
			return HTTP_M_CONNECT;
		break;
	}
	return HTTP_M_OTHER;
}

/* Malformed input: lost for good, unless the framer joined mid-stream. */
HTTP_INLINE __u32 http_fail(struct http_framer *f)
{
	if (f->flags & HTTP_F_SEEK) {
		f->state = HS_START;
		f->head = 0;
		return HTTP_EV_RESYNC;
	}
	f->state = HS_LOST;
	return HTTP_EV_ERROR;
}

/* The message ended: ready for the next one. */
HTTP_INLINE __u32 http_finish(struct http_framer *f)
{
	f->state = HS_START;
	f->head = 0;
	f->remaining = 0;
	return HTTP_EV_END;
}

/*
 * Does a response with this status answer its request? 1xx are interim
 * (100 Continue, 103 Early Hints), but for 101 Switching Protocols: the
 * answer, after which the connection carries another protocol (a
 * WebSocket's frames, HTTP/2).
 */
HTTP_INLINE int http_final_status(__u32 status)
{
	return status >= 200 || status == 101;
}

/* Header block complete: decide how the body is framed. */
HTTP_INLINE __u32 http_head_end(struct http_framer *f)
{
	__u32 ev = HTTP_EV_HEAD_END;

	if (f->kind == HTTP_KIND_RESPONSE) {
		if (f->status == 101) {
			f->state = HS_UPGRADED;
			return ev;
		}
		if (f->status < 200 || f->status == 204 || f->status == 304 ||
		    f->method == HTTP_M_HEAD)
			return ev | http_finish(f);
		if (f->method == HTTP_M_CONNECT && f->status < 300) {
			f->state = HS_UPGRADED;
			return ev;
		}
	}
	if (f->flags & HTTP_F_CHUNKED) {
		f->state = HS_CHUNK_SIZE;
		f->acc = 0;
		f->pos = 0;
		return ev;
	}
	if (f->flags & HTTP_F_HAVE_LEN) {
		if (f->remaining == 0)
			return ev | http_finish(f);
		f->state = HS_BODY_LEN;
		return ev;
	}
	if (f->kind == HTTP_KIND_RESPONSE) {
		f->state = HS_BODY_EOF;
		return ev;
	}
	return ev | http_finish(f);
}

HTTP_INLINE __u32 http_start_message(struct http_framer *f, __u8 c)
{
	f->acc = 0;
	f->remaining = 0;
	f->hash = HTTP_FNV_OFFSET;
	f->head = 1;
	f->status = 0;
	f->pos = 1;
	f->hdr = 0;
	f->claim = HTTP_CLAIM_NONE;
	f->id_hash = 0;
	f->id_kind = 0;
	f->ua_hash = 0;
	f->flags &= HTTP_F_SEEK | HTTP_F_IDS;
	f->method = HTTP_M_NONE; /* a response learns it from its request */
	if (f->kind == HTTP_KIND_REQUEST) {
		if (c < 'A' || c > 'Z')
			return http_fail(f);
		f->acc = c;
		f->state = HS_REQ_METHOD;
		return 0;
	}
	if (c != 'H')
		return http_fail(f);
	f->state = HS_RESP_VERSION;
	return 0;
}

/* "HTTP/1.x" at pos 0..7: returns 1 while c matches. */
/* clang-format off: one line per character reads best */
HTTP_INLINE int http_version_char(__u32 pos, __u8 c)
{
	switch (pos) {
	case 0:
		return c == 'H';
	case 1:
		return c == 'T';
	case 2:
		return c == 'T';
	case 3:
		return c == 'P';
	case 4:
		return c == '/';
	case 5:
		return c == '1';
	case 6:
		return c == '.';
	case 7:
		return c == '0' || c == '1';
	}
	return 0;
}
/* clang-format on */

/* The rest of this header line is not ours: one canonical state, however reached. */
HTTP_INLINE void http_skip_header_line(struct http_framer *f)
{
	f->state = HS_HDR_SKIP;
	f->acc = 0;
	f->pos = 0;
	f->hdr = 0;
	f->sub = 0;
}

/* The hash of a header name byte, as HTTP_HASH_* are computed. */
HTTP_INLINE __u32 http_hdr_hash(__u32 h, __u8 c)
{
	return (h ^ (c | 0x20)) * HTTP_FNV_PRIME;
}

HTTP_INLINE __u32 http_header_name_byte(struct http_framer *f, __u8 c)
{
	__u32 pos = f->pos;
	__u32 h = (__u32)f->acc;
	int ids = f->flags & HTTP_F_IDS;

	if (c == ':') {
		f->hdr = HTTP_HDR_COUNT;
		if (pos == 14 && h == HTTP_HASH_CONTENT_LENGTH)
			f->hdr = HTTP_HDR_CONTENT_LENGTH;
		else if (pos == 17 && h == HTTP_HASH_TRANSFER_ENCODING)
			f->hdr = HTTP_HDR_TRANSFER_ENCODING;
		else if (pos == 13 && h == HTTP_HASH_ERROR_CLAIM)
			f->hdr = HTTP_HDR_ERROR_CLAIM;
		else if (ids && pos == 10 && h == HTTP_HASH_USER_AGENT)
			f->hdr = HTTP_HDR_USER_AGENT;
		else if (ids && pos == 11 && h == HTTP_HASH_TRACEPARENT)
			f->hdr = HTTP_HDR_TRACEPARENT;
		else if (ids && pos == 12 && h == HTTP_HASH_B3_TRACE_ID)
			f->hdr = HTTP_HDR_B3_TRACE_ID;
		else if (ids && pos == 12 && h == HTTP_HASH_REQUEST_ID)
			f->hdr = HTTP_HDR_REQUEST_ID;
		if (f->hdr == HTTP_HDR_COUNT) {
			http_skip_header_line(f);
			return 0;
		}
		f->state = HS_HDR_VALUE;
		f->acc = 0;
		f->pos = 0;
		f->sub = 0xff; /* value not started */
		return 0;
	}
	if (c == '\n' || c == '\r') {
		/* A line with no colon: tolerated, ignored. */
		if (c == '\n')
			f->state = HS_HDR_LINE;
		else
			http_skip_header_line(f);
		return 0;
	}
	/* Longer than any name we read, or a NUL: not ours. */
	if (pos >= HTTP_HDR_NAME_MAX || !c) {
		http_skip_header_line(f);
		return 0;
	}
	h = http_hdr_hash(h, c);
	/* Decided as early as http_line_word() decides it: both paths agree. */
	if (pos + 1 == 8 && h != HTTP_HASH8_CONTENT && h != HTTP_HASH8_TRANSFER &&
	    h != HTTP_HASH8_X_ERROR &&
	    !(ids && (h == HTTP_HASH8_USER_AGE || h == HTTP_HASH8_TRACEPAR ||
		      h == HTTP_HASH8_X_B3_TRA || h == HTTP_HASH8_X_REQUES))) {
		http_skip_header_line(f);
		return 0;
	}
	f->acc = h;
	f->pos = pos + 1;
	return 0;
}

/*
 * A value hashed whole (an id, the user agent): its bytes from the first
 * that is not a blank to the line's end; of traceparent's, only the
 * trace-id, between its first two dashes (sub counts them). At its end the
 * hash is kept: an id over one of lower rank (HTTP_HDR_REQUEST_ID lowest).
 */
HTTP_INLINE void http_hashed_value_byte(struct http_framer *f, __u8 c, int end)
{
	__u32 h;

	if (f->sub == 0xfe)
		return; /* kept already; the line's LF is the caller's */
	if (end) {
		h = f->sub == 0xff ? HTTP_FNV_OFFSET : (__u32)f->acc;
		h = h ?: 1;
		if (f->hdr == HTTP_HDR_USER_AGENT)
			f->ua_hash = h;
		else if (!f->id_kind || f->hdr <= f->id_kind) {
			f->id_hash = h;
			f->id_kind = f->hdr;
		}
		f->sub = 0xfe;
		return;
	}
	if (f->sub == 0xff) { /* before the value */
		if (c == ' ' || c == '\t')
			return;
		f->sub = 0;
		f->acc = HTTP_FNV_OFFSET;
	}
	if (f->hdr == HTTP_HDR_TRACEPARENT) {
		if (c == '-') {
			if (f->sub < 8)
				f->sub++;
			return;
		}
		if (f->sub != 1)
			return;
	}
	f->acc = ((__u32)f->acc ^ c) * HTTP_FNV_PRIME;
}

HTTP_INLINE __u32 http_header_value_byte(struct http_framer *f, __u8 c)
{
	__u8 lc = http_lower(c);
	int eol = c == '\n';
	int end = eol || c == '\r' || c == ' ' || c == '\t' || c == ',' || c == ';';

	switch (f->hdr) {
	case HTTP_HDR_CONTENT_LENGTH:
		if (c >= '0' && c <= '9') {
			if (f->sub == 1) /* digits after a space: "12 34" */
				return http_fail(f);
			f->acc = f->acc * 10 + (c - '0');
			if (f->acc > HTTP_MAX_LENGTH)
				return http_fail(f);
			f->sub = 0;
			f->pos = 1;
			break;
		}
		if (!end)
			return http_fail(f);
		if (f->pos) {
			f->remaining = f->acc;
			f->flags |= HTTP_F_HAVE_LEN;
			f->sub = 1;
		}
		break;
	case HTTP_HDR_TRANSFER_ENCODING:
		/* Looks for "chunked"; restarts the match on any other letter. */
		if (lc && lc == http_lit_char(HTTP_LIT_CHUNKED, f->pos)) {
			f->pos++;
			if (f->pos == 7)
				f->flags |= HTTP_F_CHUNKED;
		} else if (f->pos != 7 || !end) {
			f->pos = lc == 'c' ? 1 : 0;
			if (f->flags & HTTP_F_CHUNKED)
				f->flags &= ~HTTP_F_CHUNKED; /* "chunked, gzip": not last */
		}
		break;
	case HTTP_HDR_ERROR_CLAIM:
		if (f->sub == 0xff) { /* before the value */
			if (c == ' ' || c == '\t')
				break;
			if (lc == 'c')
				f->sub = HTTP_LIT_CLAIMED;
			else if (lc == 'u')
				f->sub = HTTP_LIT_UNCLAIMED;
			else
				f->sub = 0xfe; /* unknown value: ignored */
			f->pos = 1;
			break;
		}
		if (f->sub == 0xfe)
			break;
		if (end) {
			__u32 want = f->sub == HTTP_LIT_CLAIMED ? 7 : 9;

			if (f->pos == want)
				f->claim = f->sub == HTTP_LIT_CLAIMED ? HTTP_CLAIM_CLAIMED
								      : HTTP_CLAIM_UNCLAIMED;
			f->sub = 0xfe;
			break;
		}
		if (lc && lc == http_lit_char(f->sub, f->pos))
			f->pos++;
		else
			f->sub = 0xfe;
		break;
	default: /* a value hashed whole */
		http_hashed_value_byte(f, c, eol || c == '\r');
		break;
	}
	if (eol)
		f->state = HS_HDR_LINE;
	return 0;
}

HTTP_INLINE __u32 http_chunk_size_byte(struct http_framer *f, __u8 c)
{
	__u8 lc = http_lower(c);
	__u32 v;

	if (c >= '0' && c <= '9')
		v = c - '0';
	else if (lc >= 'a' && lc <= 'f')
		v = lc - 'a' + 10;
	else if (c == '\n' || c == '\r' || c == ';' || c == ' ' || c == '\t') {
		if (!f->pos)
			return http_fail(f);
		f->state = HS_CHUNK_EXT;
		if (c == '\n')
			goto line_end;
		return 0;
	} else {
		return http_fail(f);
	}
	if (f->pos >= 15)
		return http_fail(f);
	f->acc = (f->acc << 4) | v;
	f->pos++;
	return 0;
line_end:
	if (f->acc == 0) {
		f->state = HS_TRAILER;
		return 0;
	}
	if (f->acc > HTTP_MAX_LENGTH)
		return http_fail(f);
	f->remaining = f->acc;
	f->state = HS_CHUNK_DATA;
	return 0;
}

/* Feed one byte. Never called in the skip states (HS_BODY_LEN, HS_CHUNK_DATA). */
HTTP_INLINE __u32 http_step(struct http_framer *f, __u8 c)
{
	__u32 pos = f->pos;

	if (f->state < HS_BODY_LEN && f->state != HS_START) {
		if (++f->head > HTTP_MAX_HEAD)
			return http_fail(f);
	}

	switch (f->state) {
	case HS_START:
		if (c == '\r' || c == '\n')
			return 0; /* blank lines between messages are allowed */
		return http_start_message(f, c);
	case HS_REQ_METHOD:
		if (c == ' ') {
			f->method = http_method_of(f->acc, pos);
			f->state = HS_REQ_TARGET;
			f->pos = 0;
			return 0;
		}
		if (c < 'A' || c > 'Z' || pos >= HTTP_MAX_METHOD)
			return http_fail(f);
		if (pos < 8)
			f->acc = (f->acc << 8) | c;
		f->pos = pos + 1;
		return 0;
	case HS_REQ_TARGET:
		if (c == ' ') {
			if (!pos)
				return http_fail(f);
			f->state = HS_REQ_VERSION;
			f->pos = 0;
			return 0;
		}
		if (c == '\r' || c == '\n' || c < 0x21 || c == 0x7f)
			return http_fail(f);
		f->hash = (f->hash ^ c) * HTTP_FNV_PRIME;
		f->pos = 1;
		return 0;
	case HS_REQ_VERSION:
		if (pos == 8) {
			if (c == '\r') {
				f->state = HS_REQ_LINE_CR;
				return 0;
			}
			if (c == '\n') {
				f->state = HS_HDR_LINE;
				f->flags &= ~HTTP_F_SEEK;
				return HTTP_EV_START;
			}
			return http_fail(f);
		}
		if (!http_version_char(pos, c))
			return http_fail(f);
		f->pos = pos + 1;
		return 0;
	case HS_REQ_LINE_CR:
		if (c != '\n')
			return http_fail(f);
		f->state = HS_HDR_LINE;
		f->flags &= ~HTTP_F_SEEK;
		return HTTP_EV_START;
	case HS_RESP_VERSION:
		if (pos == 8) {
			if (c != ' ')
				return http_fail(f);
			f->state = HS_RESP_STATUS;
			f->pos = 0;
			return 0;
		}
		if (!http_version_char(pos, c))
			return http_fail(f);
		f->pos = pos + 1;
		return 0;
	case HS_RESP_STATUS:
		if (pos < 3) {
			if (c < '0' || c > '9')
				return http_fail(f);
			f->status = f->status * 10 + (c - '0');
			f->pos = pos + 1;
			return 0;
		}
		if (f->status < 100 || (c != ' ' && c != '\r' && c != '\n'))
			return http_fail(f);
		f->state = c == '\n' ? HS_HDR_LINE : HS_RESP_REASON;
		f->flags &= ~HTTP_F_SEEK;
		return HTTP_EV_START;
	case HS_RESP_REASON:
		if (c == '\n')
			f->state = HS_HDR_LINE;
		return 0;
	case HS_HDR_LINE:
		if (c == '\r') {
			f->state = HS_HDR_END_CR;
			return 0;
		}
		if (c == '\n')
			return http_head_end(f);
		if (c == ' ' || c == '\t' || c == ':') {
			http_skip_header_line(f); /* folded line or empty name */
			return 0;
		}
		f->state = HS_HDR_NAME;
		f->pos = 0;
		f->acc = HTTP_FNV_OFFSET;
		return http_header_name_byte(f, c);
	case HS_HDR_NAME:
		return http_header_name_byte(f, c);
	case HS_HDR_VALUE:
		return http_header_value_byte(f, c);
	case HS_HDR_SKIP:
		if (c == '\n')
			f->state = HS_HDR_LINE;
		return 0;
	case HS_HDR_END_CR:
		if (c != '\n')
			return http_fail(f);
		return http_head_end(f);
	case HS_CHUNK_SIZE:
		return http_chunk_size_byte(f, c);
	case HS_CHUNK_EXT:
		if (c != '\n')
			return 0;
		if (f->acc == 0) {
			f->state = HS_TRAILER;
			return 0;
		}
		if (f->acc > HTTP_MAX_LENGTH)
			return http_fail(f);
		f->remaining = f->acc;
		f->state = HS_CHUNK_DATA;
		return 0;
	case HS_CHUNK_END:
		if (c == '\r')
			return 0;
		if (c != '\n')
			return http_fail(f);
		f->state = HS_CHUNK_SIZE;
		f->acc = 0;
		f->pos = 0;
		return 0;
	case HS_TRAILER:
		if (c == '\r') {
			f->state = HS_TRAILER_CR;
			return 0;
		}
		if (c == '\n')
			return http_finish(f);
		f->state = HS_TRAILER_SKIP;
		return 0;
	case HS_TRAILER_SKIP:
		if (c == '\n')
			f->state = HS_TRAILER;
		return 0;
	case HS_TRAILER_CR:
		if (c != '\n')
			return http_fail(f);
		return http_finish(f);
	}
	/* HS_BODY_EOF, HS_UPGRADED, HS_LOST: the byte is not ours to frame. */
	return 0;
}

/* In a state that only looks for the end of the line. */
HTTP_INLINE int http_skipping_line(const struct http_framer *f)
{
	return f->state == HS_HDR_SKIP || f->state == HS_RESP_REASON ||
	       f->state == HS_TRAILER_SKIP || f->state == HS_CHUNK_EXT;
}

/* Index of the lowest byte of m (in memory order) with its high bit set, or 8. */
HTTP_INLINE __u32 http_word_first(__u64 m)
{
	__u32 i = 0;

	if (!m)
		return 8;
	if (!(m & 0xffffffffULL)) {
		i += 4;
		m >>= 32;
	}
	if (!(m & 0xffffULL)) {
		i += 2;
		m >>= 16;
	}
	if (!(m & 0xffULL))
		i += 1;
	return i;
}

/* High bit of each byte of w equal to c: exact up to the first one (borrows go up). */
HTTP_INLINE __u64 http_word_eq(__u64 w, __u8 c)
{
	const __u64 ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	__u64 x = w ^ (ones * c);

	return (x - ones) & ~x & highs;
}

/* Index of the first byte of w equal to c (in memory order), or 8. */
HTTP_INLINE __u32 http_word_find(__u64 w, __u8 c)
{
	return http_word_first(http_word_eq(w, c));
}

/*
 * Up to eight bytes at once where only a line end matters: w holds the next
 * eight bytes, in memory order. Returns how many bytes it took, or 0: in a
 * head (a header line skipped, a status line's reason) those up to its LF
 * and the LF too, which begins the next line as in http_step(); in a body's
 * chunk lines those before the LF, which http_step() takes.
 */
HTTP_INLINE __u32 http_skip_word(struct http_framer *f, __u64 w)
{
	__u32 n;

	if (!http_skipping_line(f))
		return 0;
	n = http_word_find(w, '\n');
	if (f->state == HS_HDR_SKIP || f->state == HS_RESP_REASON) {
		__u32 take = n < 8 ? n + 1 : 8;

		/* Head bytes count against the limit, as in http_step(). */
		if (f->head + take > HTTP_MAX_HEAD)
			return 0;
		f->head += take;
		if (n < 8)
			f->state = HS_HDR_LINE;
		return take;
	}
	return n;
}

/* "HTTP/1.1" or "HTTP/1.0", little-endian. */
HTTP_INLINE int http_version_word(__u64 w)
{
	return w == 0x312e312f50545448ULL || w == 0x302e312f50545448ULL;
}

/* A response's "HTTP/1.0" or "HTTP/1.1" at once. Returns 8 or 0. */
HTTP_INLINE __u32 http_start_word(struct http_framer *f, __u64 w)
{
	if (f->state != HS_START || f->kind != HTTP_KIND_RESPONSE || !http_version_word(w))
		return 0;
	http_start_message(f, 'H');
	f->pos = 8;
	f->head = 8;
	return 8;
}

/*
 * The rest of a request line after its target at once, " HTTP/1.x\r\n"
 * (HS_REQ_TARGET, the target begun): w the next eight bytes, w2 the eight
 * after them (zeros past the bytes at hand). Returns the bytes taken with
 * the line's event (HTTP_EV_START) in bits 16 and up, or 0.
 */
HTTP_INLINE __u32 http_request_end(struct http_framer *f, __u64 w, __u64 w2)
{
	__u32 v = w2 & 0xffffff;

	if (f->state != HS_REQ_TARGET || !f->pos || w != 0x2e312f5054544820ULL /* " HTTP/1." */ ||
	    (v != 0x0a0d31 && v != 0x0a0d30) || f->head + 11 > HTTP_MAX_HEAD)
		return 0;
	f->state = HS_HDR_LINE;
	f->pos = 8;
	f->head += 11;
	f->flags &= ~HTTP_F_SEEK;
	return 11 | (HTTP_EV_START << 16);
}

/*
 * A status line through its code at once, "HTTP/1.x NNN " (HS_START, a
 * response; a code from 100): w the first eight bytes, w2 the eight after
 * them (zeros past the bytes at hand). The reason is left to the skip.
 * Returns the bytes taken with the line's event (HTTP_EV_START) in bits 16
 * and up, or 0.
 */
HTTP_INLINE __u32 http_status_start(struct http_framer *f, __u64 w, __u64 w2)
{
	__u32 d1 = (__u8)(w2 >> 8) - '0', d2 = (__u8)(w2 >> 16) - '0', d3 = (__u8)(w2 >> 24) - '0';

	if (f->state != HS_START || f->kind != HTTP_KIND_RESPONSE || !http_version_word(w) ||
	    (__u8)w2 != ' ' || d1 - 1 > 8 || d2 > 9 || d3 > 9 || (__u8)(w2 >> 32) != ' ')
		return 0;
	http_start_message(f, 'H');
	f->status = d1 * 100 + d2 * 10 + d3;
	f->state = HS_RESP_REASON;
	f->pos = 3;
	f->head = 13;
	f->flags &= ~HTTP_F_SEEK;
	return 13 | (HTTP_EV_START << 16);
}

/*
 * The CRLF that ends a head, both bytes at once (HS_HDR_LINE, the caller
 * saw them): returns its events (HTTP_EV_HEAD_END and what follows), or 0
 * (the head's limit: the steps fail it).
 */
HTTP_INLINE __u32 http_head_crlf(struct http_framer *f)
{
	if (f->state != HS_HDR_LINE || f->head + 2 > HTTP_MAX_HEAD)
		return 0;
	f->head += 2;
	return http_head_end(f);
}

/*
 * A request's method and the space after it at once, when both are in w: up
 * to seven capital letters (every method we name). Returns the bytes taken,
 * or 0 (a longer token, a blank line, junk: http_step() decides).
 */
HTTP_INLINE __u32 http_method_word(struct http_framer *f, __u64 w)
{
	__u32 k = http_word_find(w, ' '), i;
	__u64 tok = 0;

	if (f->state != HS_START || f->kind != HTTP_KIND_REQUEST || !k || k > 7)
		return 0;
	for (i = 0; i < 7 && i < k; i++) {
		__u8 c = w >> (8 * i);

		if (c < 'A' || c > 'Z')
			return 0;
		tok = (tok << 8) | c;
	}
	http_start_message(f, (__u8)w);
	f->acc = tok;
	f->method = http_method_of(tok, k);
	f->state = HS_REQ_TARGET;
	f->pos = 0;
	f->head = k + 1;
	return k + 1;
}

/*
 * Request target bytes, hashed, up to the first byte that ends the target
 * or is not allowed in it (below 0x21, or DEL): http_step() takes that one.
 */
HTTP_INLINE __u32 http_target_word(struct http_framer *f, __u64 w)
{
	const __u64 lows = 0x7f7f7f7f7f7f7f7fULL, highs = 0x8080808080808080ULL;
	/* High bits: bytes at or above 0x21 (0x80 and up included), and bytes not DEL. */
	__u64 ge = (((w & lows) + 0x5f5f5f5f5f5f5f5fULL) | w) & highs;
	__u64 x = w ^ lows;
	__u64 nd = (((x & lows) + lows) | x) & highs;
	__u32 n = http_word_first(~(ge & nd) & highs), i;
	__u32 h = f->hash;

	if (!n || f->head + n > HTTP_MAX_HEAD)
		return 0;
	for (i = 0; i < 8 && i < n; i++)
		h = (h ^ (__u8)(w >> (8 * i))) * HTTP_FNV_PRIME;
	f->hash = h;
	f->pos = 1;
	f->head += n;
	return n;
}

/* A request line's "HTTP/1.x", or a status line's " NNN" after it. */
HTTP_INLINE __u32 http_line_version_word(struct http_framer *f, __u64 w)
{
	__u32 d1 = (__u8)(w >> 8) - '0', d2 = (__u8)(w >> 16) - '0', d3 = (__u8)(w >> 24) - '0';

	if (f->state == HS_REQ_VERSION) {
		if (f->pos || !http_version_word(w) || f->head + 8 > HTTP_MAX_HEAD)
			return 0;
		f->pos = 8;
		f->head += 8;
		return 8;
	}
	/* HS_RESP_VERSION at pos 8: the space and three digits; the status's end is http_step()'s. */
	if (f->pos != 8 || (__u8)w != ' ' || d1 > 9 || d2 > 9 || d3 > 9 ||
	    f->head + 4 > HTTP_MAX_HEAD)
		return 0;
	f->state = HS_RESP_STATUS;
	f->status = f->status * 1000 + d1 * 100 + d2 * 10 + d3;
	f->pos = 3;
	f->head += 4;
	return 4;
}

/* The first eight bytes of a name we read, whose hash is h8. */
HTTP_INLINE __u32 http_name_start(struct http_framer *f, __u32 h8)
{
	f->state = HS_HDR_NAME;
	f->acc = h8;
	f->pos = 8;
	f->head += 8;
	return 8;
}

/*
 * What the first eight bytes w of a header line (at HS_HDR_LINE) make of it:
 * HTTP_LINE_STEP, left to http_step() (a line end among them, a CR first:
 * the end of the head or an error, a name only alike one we read: a CR or
 * a control byte for a dash); HTTP_LINE_OTHER, a line whose name is none we
 * read, skipped to its end (one starting with blanks or ':' is skipped by
 * http_step() too); or the HTTP_HDR_* of the name it begins, exactly
 * (letters in any case, the dashes dashes): "content-", "transfer",
 * "x-error-", little-endian; OR 0x20 lowers letters.
 */
#define HTTP_LINE_STEP	HTTP_HDR_COUNT
#define HTTP_LINE_OTHER (HTTP_HDR_COUNT + 1)
HTTP_INLINE __u32 http_line_kind(__u64 w)
{
	const __u64 ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	__u64 x = w ^ (ones * '\n'), lw = w | (ones * 0x20);

	if (((x - ones) & ~x & highs) || (w & 0xff) == '\r')
		return HTTP_LINE_STEP;
	if ((w | 0x0020202020202020ULL) == 0x2d746e65746e6f63ULL)
		return HTTP_HDR_CONTENT_LENGTH;
	if ((w | 0x2020202020202020ULL) == 0x726566736e617274ULL)
		return HTTP_HDR_TRANSFER_ENCODING;
	if ((w | 0x0020202020200020ULL) == 0x2d726f7272652d78ULL)
		return HTTP_HDR_ERROR_CLAIM;
	if ((w | 0x2020200020202020ULL) == 0x6567612d72657375ULL)
		return HTTP_HDR_USER_AGENT;
	if ((w | 0x2020202020202020ULL) == 0x7261706563617274ULL)
		return HTTP_HDR_TRACEPARENT;
	if ((w | 0x2020200000200020ULL) == 0x6172742d33622d78ULL)
		return HTTP_HDR_B3_TRACE_ID;
	if ((w | 0x2020202020200020ULL) == 0x7365757165722d78ULL)
		return HTTP_HDR_REQUEST_ID;
	if (lw == 0x2d746e65746e6f63ULL || lw == 0x726566736e617274ULL ||
	    lw == 0x2d726f7272652d78ULL || lw == 0x6567612d72657375ULL ||
	    lw == 0x7261706563617274ULL || lw == 0x6172742d33622d78ULL ||
	    lw == 0x7365757165722d78ULL)
		return HTTP_LINE_STEP;
	return HTTP_LINE_OTHER;
}

/* http_line_kind() for framer f: the names only read with HTTP_F_IDS are other lines without it. */
HTTP_INLINE __u32 http_line_kind_of(const struct http_framer *f, __u64 w)
{
	__u32 kind = http_line_kind(w);

	if (kind >= HTTP_HDR_USER_AGENT && kind < HTTP_HDR_COUNT && !(f->flags & HTTP_F_IDS))
		return HTTP_LINE_OTHER;
	return kind;
}

/*
 * The first eight bytes of a header line at once: a line whose name cannot
 * be one we read (its first eight bytes, lower-cased, start none of our
 * names) is skipped without hashing it. Returns 8 when it took them, else 0
 * and the caller steps byte by byte (a name we may want, a short line, the
 * end of the head).
 */
HTTP_INLINE __u32 http_line_word(struct http_framer *f, __u64 w)
{
	__u32 kind;

	if (f->state != HS_HDR_LINE || f->head + 8 > HTTP_MAX_HEAD)
		return 0;
	kind = http_line_kind_of(f, w);
	/* A name we read goes on with its first eight bytes hashed, as http_step() would have. */
	if (kind == HTTP_HDR_CONTENT_LENGTH)
		return http_name_start(f, HTTP_HASH8_CONTENT);
	if (kind == HTTP_HDR_TRANSFER_ENCODING)
		return http_name_start(f, HTTP_HASH8_TRANSFER);
	if (kind == HTTP_HDR_ERROR_CLAIM)
		return http_name_start(f, HTTP_HASH8_X_ERROR);
	if (kind == HTTP_HDR_USER_AGENT)
		return http_name_start(f, HTTP_HASH8_USER_AGE);
	if (kind == HTTP_HDR_TRACEPARENT)
		return http_name_start(f, HTTP_HASH8_TRACEPAR);
	if (kind == HTTP_HDR_B3_TRACE_ID)
		return http_name_start(f, HTTP_HASH8_X_B3_TRA);
	if (kind == HTTP_HDR_REQUEST_ID)
		return http_name_start(f, HTTP_HASH8_X_REQUES);
	if (kind == HTTP_LINE_STEP)
		return 0;
	f->head += 8;
	http_skip_header_line(f);
	return 8;
}

/* High bit of each byte of w that ends a header name: ':', a line end, NUL. */
HTTP_INLINE __u64 http_name_ends(__u64 w)
{
	return http_word_eq(w, ':') | http_word_eq(w, '\n') | http_word_eq(w, '\r') |
	       http_word_eq(w, 0);
}

/*
 * A header line whose first eight bytes begin the name of header kind
 * ("content-", "transfer", "x-error-", and with HTTP_F_IDS "user-age",
 * "tracepar", "x-b3-tra", "x-reques"): is its name not that one all the
 * same, as the steps decide it? w2 and w3 are its next sixteen bytes (zeros
 * past the bytes at hand, which its LF comes before). Its name ends at a
 * ':' where that one's does not (http_name_len), or runs on past the
 * longest, HTTP_HDR_NAME_MAX, where the steps skip the line (unless the
 * byte there is its LF: a line without a colon, which they leave apart).
 */
/* The length of the name of header kind (HTTP_HDR_*). */
HTTP_INLINE __u32 http_name_len(__u32 kind)
{
	switch (kind) {
	case HTTP_HDR_CONTENT_LENGTH:
		return sizeof("content-length") - 1;
	case HTTP_HDR_TRANSFER_ENCODING:
		return sizeof("transfer-encoding") - 1;
	case HTTP_HDR_ERROR_CLAIM:
		return sizeof("x-error-claim") - 1;
	case HTTP_HDR_USER_AGENT:
		return sizeof("user-agent") - 1;
	case HTTP_HDR_TRACEPARENT:
		return sizeof("traceparent") - 1;
	case HTTP_HDR_B3_TRACE_ID:
		return sizeof("x-b3-traceid") - 1;
	case HTTP_HDR_REQUEST_ID:
		return sizeof("x-request-id") - 1;
	}
	return 0;
}

HTTP_INLINE int http_name_ruled_out(__u32 kind, __u64 w2, __u64 w3)
{
	__u32 i = http_word_first(http_name_ends(w2)), p = 8 + i;
	/* i is 8 when w2 holds no end: masked, the shift stays below 64 (64 is undefined in C). */
	__u8 c = w2 >> (8 * (i & 7));

	if (i == 8) {
		i = http_word_first(http_name_ends(w3));
		p = 16 + i;
		c = w3 >> (8 * (i & 7));
	}
	if (p < HTTP_HDR_NAME_MAX)
		return c == ':' && p != http_name_len(kind);
	return (__u8)(w3 >> (8 * (HTTP_HDR_NAME_MAX - 16))) != '\n';
}

/*
 * Is the header line whose first eight bytes are w, and w2 and w3 the next
 * sixteen (zeros past the bytes at hand; read only when w begins a name we
 * read), one whose name is none we read?
 */
HTTP_INLINE int http_line_not_ours(const struct http_framer *f, __u64 w, __u64 w2, __u64 w3)
{
	__u32 kind = http_line_kind_of(f, w);

	return kind == HTTP_LINE_OTHER ||
	       (kind != HTTP_LINE_STEP && http_name_ruled_out(kind, w2, w3));
}

/*
 * A whole header line at once, from HS_HDR_LINE, n its length with its LF
 * (n > 8), whose name is none we read (http_line_not_ours, the caller's
 * to ask): the framer left as the steps would have left it
 * (http_line_word(), http_name_word(), http_skip_word(), http_step()).
 * Returns n, or 0 (they decide).
 */
HTTP_INLINE __u32 http_line_skip(struct http_framer *f, __u32 n)
{
	if (f->state != HS_HDR_LINE || n <= 8 || f->head + n > HTTP_MAX_HEAD)
		return 0;
	http_skip_header_line(f);
	f->state = HS_HDR_LINE;
	f->head += n;
	return n;
}

/*
 * The value of up to eight decimal digits in w (in memory order, the first
 * one most significant) whose first n (1..8) bytes are digits: shifted up so
 * that missing leading digits read as zeros, then pairs, quads and the two
 * halves combined by three multiplies.
 */
HTTP_INLINE __u64 http_word_digits(__u64 w, __u32 n)
{
	__u64 d = (w - 0x3030303030303030ULL) & (~0ULL >> (64 - 8 * n));

	d <<= 8 * (8 - n);
	d = ((d & 0x0f0f0f0f0f0f0f0fULL) * 2561) >> 8;
	d = ((d & 0x00ff00ff00ff00ffULL) * 6553601) >> 16;
	return ((d & 0x0000ffff0000ffffULL) * 42949672960001ULL) >> 32;
}

/*
 * A whole "Content-Length: N\r\n" line at once, from HS_HDR_LINE: w the
 * line's first eight bytes, w2 the next eight, tail the eight after them
 * (zeros past the bytes at hand). The name in any case, one space, one to
 * six digits, CRLF; any other form (more spaces, a bare LF, a longer value)
 * is left to the steps. Leaves the framer exactly as the steps would have:
 * returns the line's length, or 0.
 */
HTTP_INLINE __u32 http_length_line(struct http_framer *f, __u64 w, __u64 w2, __u64 tail)
{
	const __u64 lows = 0x7f7f7f7f7f7f7f7fULL, highs = 0x8080808080808080ULL;
	/* High bits: bytes below '0', at or above ':', or at or above 0x80. */
	__u64 other = (~((tail & lows) + 0x5050505050505050ULL) |
		       ((tail & lows) + 0x4646464646464646ULL) | tail) &
		      highs;
	__u32 n = http_word_first(other), len = 16 + n + 2;
	__u64 v;

	if (f->state != HS_HDR_LINE || http_line_kind(w) != HTTP_HDR_CONTENT_LENGTH ||
	    (w2 | 0x0000202020202020ULL) != 0x203a6874676e656cULL /* "length: " */ || !n || n > 6 ||
	    ((tail >> (8 * n)) & 0xffff) != 0x0a0d || f->head + len > HTTP_MAX_HEAD)
		return 0;
	v = http_word_digits(tail, n);
	f->acc = v;
	f->remaining = v;
	f->flags |= HTTP_F_HAVE_LEN;
	f->hdr = HTTP_HDR_CONTENT_LENGTH;
	f->sub = 1;
	f->pos = 1;
	f->head += len;
	return len;
}

/*
 * A name past the eight bytes that start one we read: its next bytes up to
 * the first that ends a name (':', a line end, NUL), hashed.
 */
HTTP_INLINE __u32 http_name_word(struct http_framer *f, __u64 w)
{
	__u32 n = http_word_first(http_name_ends(w)), i;
	__u32 h = (__u32)f->acc;

	if (f->pos != 8 || !n || f->head + n > HTTP_MAX_HEAD)
		return 0;
	for (i = 0; i < 8 && i < n; i++)
		h = http_hdr_hash(h, (__u8)(w >> (8 * i)));
	f->acc = h;
	f->pos = 8 + n;
	f->head += n;
	return n;
}

/* A state where http_word() may take several bytes at once. */
HTTP_INLINE int http_wants_word(const struct http_framer *f)
{
	return http_skipping_line(f) || f->state == HS_HDR_LINE || f->state == HS_START ||
	       f->state == HS_REQ_TARGET || (f->state == HS_REQ_VERSION && !f->pos) ||
	       (f->state == HS_RESP_VERSION && f->pos == 8) ||
	       (f->state == HS_HDR_NAME && f->pos == 8);
}

/*
 * The fast paths together: takes what it can of w, the next eight bytes (in
 * memory order), and returns how many it took; 0 means step byte by byte.
 * Feeding bytes through http_word() where it takes them and http_step()
 * elsewhere gives exactly what http_step() alone gives.
 */
HTTP_INLINE __u32 http_word(struct http_framer *f, __u64 w)
{
	switch (f->state) {
	case HS_HDR_LINE:
		return http_line_word(f, w);
	case HS_HDR_NAME:
		return http_name_word(f, w);
	case HS_START:
		return f->kind == HTTP_KIND_REQUEST ? http_method_word(f, w)
						    : http_start_word(f, w);
	case HS_REQ_TARGET:
		return http_target_word(f, w);
	case HS_REQ_VERSION:
	case HS_RESP_VERSION:
		return http_line_version_word(f, w);
	}
	return http_skip_word(f, w);
}

/* In a state where bytes are skipped by count rather than fed one by one. */
HTTP_INLINE int http_skipping(const struct http_framer *f)
{
	return f->state == HS_BODY_LEN || f->state == HS_CHUNK_DATA;
}

/* In a state that swallows everything until the connection ends. */
HTTP_INLINE int http_swallowing(const struct http_framer *f)
{
	return f->state == HS_BODY_EOF || f->state == HS_UPGRADED || f->state == HS_LOST;
}

/*
 * Skip up to avail body bytes. Returns how many were consumed; *ev gets
 * HTTP_EV_END when a length-framed body finished.
 */
HTTP_INLINE __u64 http_skip(struct http_framer *f, __u64 avail, __u32 *ev)
{
	__u64 n = f->remaining < avail ? f->remaining : avail;

	*ev = 0;
	f->remaining -= n;
	if (f->remaining == 0) {
		if (f->state == HS_BODY_LEN)
			*ev = http_finish(f);
		else if (f->state == HS_CHUNK_DATA)
			f->state = HS_CHUNK_END;
	}
	return n;
}

/*
 * The connection closed. Returns HTTP_EV_END when that completed a message
 * (a body framed by the close), so the caller can tell a clean end from a
 * message cut short (http_in_message).
 */
HTTP_INLINE __u32 http_close(struct http_framer *f)
{
	if (f->state == HS_BODY_EOF)
		return http_finish(f);
	return 0;
}

/* A message has begun and not finished. */
HTTP_INLINE int http_in_message(const struct http_framer *f)
{
	return f->state != HS_START && f->state != HS_LOST && f->state != HS_UPGRADED;
}

#ifndef __bpf__
/*
 * User space (tests, fuzzers, tools): feed a whole buffer the way the BPF
 * side does: head bytes stepped one by one, bodies skipped by count, and
 * after a resync the rest of the buffer dropped. fn sees every event with
 * the framer as it is right after it (it may set f->method on a response
 * start, as the kernel does for answers to HEAD). Returns bytes consumed.
 */
typedef void (*http_event_fn)(void *ctx, struct http_framer *f, __u32 ev);

/* The eight bytes of buf at off, in memory order, zeros past len. */
static inline __u64 http_bytes_upto(const __u8 *buf, __u64 off, __u64 len)
{
	__u64 w = 0;

	if (off < len)
		__builtin_memcpy(&w, buf + off, len - off < 8 ? len - off : 8);
	return w;
}

static inline __u64 http_feed(struct http_framer *f, const __u8 *buf, __u64 len, http_event_fn fn,
			      void *ctx)
{
	__u64 off = 0;

	while (off < len) {
		__u32 ev = 0, n = 0;
		__u64 w;

		if (len - off >= 8 && http_wants_word(f)) {
			__u64 w2 = http_bytes_upto(buf, off + 8, len);
			__u64 w3 = http_bytes_upto(buf, off + 16, len);
			__u32 r;

			__builtin_memcpy(&w, buf + off, 8);
			if (f->state == HS_HDR_LINE && len - off >= 19)
				n = http_length_line(f, w, w2, w3);
			if (!n && f->state == HS_HDR_LINE && http_line_not_ours(f, w, w2, w3)) {
				const __u8 *lf = __builtin_memchr(buf + off, '\n', len - off);

				if (lf)
					n = http_line_skip(f, (__u32)(lf - (buf + off)) + 1);
			}
			if (!n) {
				r = http_request_end(f, w, w2);
				if (!r)
					r = http_status_start(f, w, w2);
				n = r & 0xffff;
				ev = r >> 16;
			}
			if (!n)
				n = http_word(f, w);
		}
		if (n) {
			off += n;
		} else if (http_skipping(f)) {
			off += http_skip(f, len - off, &ev);
		} else if (http_swallowing(f)) {
			return len;
		} else if (f->state == HS_HDR_LINE && buf[off] == '\r' && off + 1 < len &&
			   buf[off + 1] == '\n' && (ev = http_head_crlf(f))) {
			off += 2;
		} else {
			ev = http_step(f, buf[off++]);
		}
		if (ev && fn)
			fn(ctx, f, ev);
		if (ev & HTTP_EV_RESYNC)
			return len;
	}
	return off;
}
#endif

#endif /* CLAIMD_HTTP_PARSE_H */
