// SPDX-License-Identifier: GPL-2.0
/*
 * The shared HTTP/1.x framer (headers/http_parse.h), driven through
 * http_feed() the way the BPF side drives it: request lines, methods and
 * target hashes; status lines and body framing (Content-Length, chunks, the
 * connection's end, the statuses and the HEAD answers that have no body);
 * x-error-claim; pipelined messages; the same events whatever the split of
 * the input across feeds; malformed input, which loses the stream for good
 * (or, for a framer that joined mid-stream, resyncs); and a seeded random
 * run over junk and mutated messages that checks the framer's invariants
 * after every feed.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_parse.h"
#include "test_progs.h"

/* A string literal as (buffer, length), NUL bytes inside included. */
#define MSG(s) (s), sizeof(s) - 1

/* Table shorthands. */
#define REQ	  HTTP_KIND_REQUEST
#define RESP	  HTTP_KIND_RESPONSE
#define POST_LINE "POST / HTTP/1.1\r\n"
#define OK_LINE	  "HTTP/1.1 200 OK\r\n"

#define TRACE_EVENTS 64
#define TRACE_MSGS   16

/* What the framer reported during feeds, and what it looked like then. */
struct trace {
	__u8 answer[TRACE_MSGS]; /* in: method a response start answers (0: none) */
	int nev;
	__u32 ev[TRACE_EVENTS];
	int starts, head_ends, ends, errors, resyncs;
	__u16 status[TRACE_MSGS]; /* at each EV_START */
	__u8 method[TRACE_MSGS];
	__u32 hash[TRACE_MSGS];
	__u8 claim[TRACE_MSGS]; /* at each EV_HEAD_END */
	int bad;		/* events seen with the framer in a state they rule out */
};

static void on_event(void *ctx, struct http_framer *f, __u32 ev)
{
	struct trace *t = ctx;

	if (t->nev < TRACE_EVENTS)
		t->ev[t->nev] = ev;
	t->nev++;
	if (ev & HTTP_EV_START) {
		int i = t->starts++;

		/* What the kernel does: a response learns the method it answers. */
		if (f->kind == HTTP_KIND_RESPONSE && i < TRACE_MSGS && t->answer[i])
			f->method = t->answer[i];
		if (i < TRACE_MSGS) {
			t->status[i] = f->status;
			t->method[i] = f->method;
			t->hash[i] = f->hash;
		}
		if (f->state != HS_HDR_LINE && f->state != HS_RESP_REASON)
			t->bad++;
		if ((f->flags & HTTP_F_SEEK) || f->claim != HTTP_CLAIM_NONE)
			t->bad++;
		if (ev != HTTP_EV_START)
			t->bad++;
	}
	if (ev & HTTP_EV_HEAD_END) {
		if (t->head_ends < TRACE_MSGS)
			t->claim[t->head_ends] = f->claim;
		t->head_ends++;
	}
	if (ev & HTTP_EV_END) {
		t->ends++;
		if (f->state != HS_START)
			t->bad++;
	}
	if (ev & HTTP_EV_ERROR) {
		t->errors++;
		if (f->state != HS_LOST || ev != HTTP_EV_ERROR)
			t->bad++;
	}
	if (ev & HTTP_EV_RESYNC) {
		t->resyncs++;
		if (f->state != HS_START || ev != HTTP_EV_RESYNC)
			t->bad++;
	}
}

/* Feeds buf in pieces of at most chunk bytes (0: in one piece). */
static bool feed_pieces(struct http_framer *f, const void *buf, size_t len, size_t chunk,
			struct trace *t)
{
	const __u8 *p = buf;
	size_t off = 0;
	bool all = true;

	do {
		size_t n = len - off;

		if (chunk && chunk < n)
			n = chunk;
		if (http_feed(f, p + off, n, on_event, t) != n)
			all = false;
		off += n;
	} while (off < len);
	return all;
}

/* A fresh framer fed buf in one piece; the caller looks at f and t after. */
static void run(struct http_framer *f, __u8 kind, const void *buf, size_t len, struct trace *t)
{
	http_framer_init(f, kind, 0);
	ASSERT_TRUE(feed_pieces(f, buf, len, 0, t), "feed consumes the buffer");
	ASSERT_EQ(t->bad, 0, "framer consistent at each event");
}

static bool same_trace(const struct trace *a, const struct trace *b)
{
	int i;

	if (a->nev != b->nev || a->starts != b->starts || a->head_ends != b->head_ends ||
	    a->ends != b->ends || a->errors != b->errors || a->resyncs != b->resyncs ||
	    a->bad != b->bad)
		return false;
	for (i = 0; i < a->nev && i < TRACE_EVENTS; i++)
		if (a->ev[i] != b->ev[i])
			return false;
	for (i = 0; i < a->starts && i < TRACE_MSGS; i++)
		if (a->status[i] != b->status[i] || a->method[i] != b->method[i] ||
		    a->hash[i] != b->hash[i])
			return false;
	for (i = 0; i < a->head_ends && i < TRACE_MSGS; i++)
		if (a->claim[i] != b->claim[i])
			return false;
	return true;
}

static __u32 last_event(const struct trace *t)
{
	return t->nev > 0 && t->nev <= TRACE_EVENTS ? t->ev[t->nev - 1] : 0;
}

/* Checks the events seen, in order, against want[0..n). */
static void expect_events(const struct trace *t, const __u32 *want, int n, const char *what)
{
	int i;

	if (!ASSERT_EQ(t->nev, n, what))
		return;
	for (i = 0; i < n; i++)
		ASSERT_EQ(t->ev[i], want[i], what);
}

static __u32 fnv1a(const char *s)
{
	__u32 h = HTTP_FNV_OFFSET;

	while (*s)
		h = (h ^ (__u8)*s++) * HTTP_FNV_PRIME;
	return h;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void test_http_parse_request(void)
{
	static const __u32 one_msg[] = { HTTP_EV_START, HTTP_EV_HEAD_END | HTTP_EV_END };
	static const __u32 two_msgs[] = { HTTP_EV_START, HTTP_EV_HEAD_END | HTTP_EV_END,
					  HTTP_EV_START, HTTP_EV_HEAD_END | HTTP_EV_END };
	struct http_framer f;
	struct trace t;
	char buf[256];
	int n;

	if (test__start_subtest("methods")) {
		static const struct {
			const char *name;
			__u8 method;
		} m[] = {
			{ "GET", HTTP_M_GET },
			{ "HEAD", HTTP_M_HEAD },
			{ "POST", HTTP_M_POST },
			{ "PUT", HTTP_M_PUT },
			{ "DELETE", HTTP_M_DELETE },
			{ "PATCH", HTTP_M_PATCH },
			{ "OPTIONS", HTTP_M_OPTIONS },
			{ "CONNECT", HTTP_M_CONNECT },
			{ "TRACE", HTTP_M_TRACE },
			{ "PROPFIND", HTTP_M_OTHER },
			{ "M", HTTP_M_OTHER },
			{ "GE", HTTP_M_OTHER },
			{ "GETS", HTTP_M_OTHER },
			{ "PUTT", HTTP_M_OTHER },
			{ "POSTS", HTTP_M_OTHER },
			{ "DELETES", HTTP_M_OTHER },
			{ "OPTION", HTTP_M_OTHER },
			{ "ABCDEFGHIJ", HTTP_M_OTHER }, /* HTTP_MAX_METHOD letters */
		};
		size_t i;

		for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
			n = snprintf(buf, sizeof(buf), "%s /index.html HTTP/1.1\r\nHost: x\r\n\r\n",
				     m[i].name);
			memset(&t, 0, sizeof(t));
			run(&f, HTTP_KIND_REQUEST, buf, n, &t);
			expect_events(&t, one_msg, 2, m[i].name);
			ASSERT_EQ(t.method[0], m[i].method, m[i].name);
			ASSERT_EQ(f.state, HS_START, m[i].name);
		}
	}
	if (test__start_subtest("target_hash")) {
		__u32 a, b;

		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST,
		    MSG("GET /a HTTP/1.1\r\n\r\nGET /a HTTP/1.1\r\n\r\n"
			"GET /b HTTP/1.1\r\n\r\nPOST /a HTTP/1.1\r\n\r\n"
			"GET /a?x=1 HTTP/1.1\r\n\r\n"),
		    &t);
		ASSERT_EQ(t.starts, 5, "five requests");
		a = t.hash[0];
		ASSERT_EQ(a, fnv1a("/a"), "FNV-1a of the target");
		ASSERT_EQ(t.hash[1], a, "same target, same hash");
		ASSERT_NEQ(t.hash[2], a, "other target, other hash");
		ASSERT_EQ(t.hash[2], fnv1a("/b"), "FNV-1a of /b");
		ASSERT_EQ(t.hash[3], a, "method not hashed");
		ASSERT_EQ(t.hash[4], fnv1a("/a?x=1"), "query hashed");

		/* A long target with every byte a target may hold. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST,
		    MSG("GET http://h:80/p%20q/~!$&'()*+,;=@[]\x80\xff HTTP/1.1\r\n\r\n"), &t);
		b = t.hash[0];
		ASSERT_EQ(t.starts, 1, "odd bytes in target");
		ASSERT_EQ(b, fnv1a("http://h:80/p%20q/~!$&'()*+,;=@[]\x80\xff"),
			  "hash of odd bytes");
	}
	if (test__start_subtest("versions")) {
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST, MSG("GET / HTTP/1.0\r\n\r\n"), &t);
		expect_events(&t, one_msg, 2, "HTTP/1.0");
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST, MSG("GET / HTTP/1.1\r\n\r\n"), &t);
		expect_events(&t, one_msg, 2, "HTTP/1.1");
	}
	if (test__start_subtest("bare_lf")) {
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST, MSG("GET /lf HTTP/1.1\nHost: x\n\n"), &t);
		expect_events(&t, one_msg, 2, "LF only");
		ASSERT_EQ(t.hash[0], fnv1a("/lf"), "target");

		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST,
		    MSG("POST / HTTP/1.1\nContent-Length: 3\n\nabcGET /2 HTTP/1.1\r\nA: b\n\r\n"),
		    &t);
		ASSERT_EQ(t.starts, 2, "LF and CRLF mixed, with a body");
		ASSERT_EQ(t.method[1], HTTP_M_GET, "second is GET");
		ASSERT_EQ(t.errors, 0, "no error");
		ASSERT_EQ(f.state, HS_START, "between messages");
	}
	if (test__start_subtest("leading_blank_lines")) {
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST,
		    MSG("\r\n\n\r\n\nGET / HTTP/1.1\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\n\r\n"), &t);
		expect_events(&t, two_msgs, 4, "blank lines before and between");
		ASSERT_EQ(f.state, HS_START, "between messages");
		ASSERT_EQ(f.head, 0, "no head counted");
	}
	if (test__start_subtest("content_length_pipelined")) {
		static const __u32 want[] = { HTTP_EV_START, HTTP_EV_HEAD_END, HTTP_EV_END,
					      HTTP_EV_START, HTTP_EV_HEAD_END | HTTP_EV_END };

		/* The body is a request line: skipped by count, never scanned. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST,
		    MSG("POST /submit HTTP/1.1\r\nHost: a\r\ncontent-LENGTH: 19\r\n\r\n"
			"GET /x HTTP/1.1\r\n\r\n"
			"GET /second HTTP/1.1\r\n\r\n"),
		    &t);
		expect_events(&t, want, 5, "POST with body, then GET");
		ASSERT_EQ(t.method[0], HTTP_M_POST, "POST");
		ASSERT_EQ(t.method[1], HTTP_M_GET, "GET");
		ASSERT_EQ(t.hash[1], fnv1a("/second"), "the real second request");
		ASSERT_EQ(f.state, HS_START, "between messages");

		/* Body split from its head: the framer waits in HS_BODY_LEN. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST, MSG("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123"),
		    &t);
		ASSERT_EQ(f.state, HS_BODY_LEN, "in the body");
		ASSERT_EQ(f.remaining, 6, "6 bytes to go");
		ASSERT_TRUE(http_in_message(&f), "in a message");
		ASSERT_EQ(http_close(&f), 0, "closed mid-body: not a clean end");
	}
	if (test__start_subtest("content_length_zero")) {
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST,
		    MSG("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\nGET / HTTP/1.1\r\n\r\n"), &t);
		expect_events(&t, two_msgs, 4, "empty body ends at the head");

		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST,
		    MSG("POST / HTTP/1.1\r\nContent-Length: 0000\r\n\r\nGET / HTTP/1.1\r\n\r\n"),
		    &t);
		expect_events(&t, two_msgs, 4, "zeros");
	}
	if (test__start_subtest("chunked_body")) {
		static const __u32 want[] = { HTTP_EV_START, HTTP_EV_HEAD_END, HTTP_EV_END,
					      HTTP_EV_START, HTTP_EV_HEAD_END | HTTP_EV_END };

		/* Chunk data that looks like requests: 0x10 bytes are a request line. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST,
		    MSG("POST /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
			"10\r\nGET / HTTP/1.1\r\n\r\n"
			"5;ext=1\r\nhello\r\n"
			"A\nGET / HTTP\n"
			"0\r\nTrailer: GET / HTTP/1.1\r\n\r\n"
			"GET /next HTTP/1.1\r\n\r\n"),
		    &t);
		expect_events(&t, want, 5, "chunks never scanned");
		ASSERT_EQ(t.method[0], HTTP_M_POST, "POST");
		ASSERT_EQ(t.hash[1], fnv1a("/next"), "the real next request");
		ASSERT_EQ(f.state, HS_START, "between messages");

		/* Chunked wins over Content-Length. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST,
		    MSG("POST / HTTP/1.1\r\nContent-Length: 100\r\n"
			"Transfer-Encoding: CHUNKED\r\n\r\n"
			"3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n"),
		    &t);
		expect_events(&t, want, 5, "chunked and Content-Length");
	}
	if (test__start_subtest("head_limit")) {
		/* A head of exactly HTTP_MAX_HEAD bytes is framed; one more is not. */
		static const char pre[] = "GET / HTTP/1.1\r\nX: ", post[] = "\r\n\r\n";
		size_t fill = HTTP_MAX_HEAD - (sizeof(pre) - 1) - (sizeof(post) - 1);
		char *big = malloc(HTTP_MAX_HEAD + 1);
		size_t len;

		if (!ASSERT_OK_PTR(big, "malloc"))
			return;
		for (int extra = 0; extra <= 1; extra++) {
			memcpy(big, pre, sizeof(pre) - 1);
			memset(big + sizeof(pre) - 1, 'a', fill + extra);
			memcpy(big + sizeof(pre) - 1 + fill + extra, post, sizeof(post) - 1);
			len = HTTP_MAX_HEAD + extra;
			memset(&t, 0, sizeof(t));
			run(&f, HTTP_KIND_REQUEST, big, len, &t);
			ASSERT_EQ(t.starts, 1, "request line framed");
			ASSERT_EQ(t.errors, extra,
				  extra ? "one byte too long" : "exactly the limit");
			ASSERT_EQ(t.ends, !extra, "message end");
			ASSERT_EQ(f.state, extra ? HS_LOST : HS_START, "state");
			ASSERT_LE(f.head, HTTP_MAX_HEAD + 1, "head bounded");
		}
		free(big);
	}
}

/*
 * The same messages, split in two at every index and fed in pieces of 1 to
 * 17 bytes: the same events, and the same framer at the end, as one feed
 * that saw the starts it expects.
 */
static void check_splits(__u8 kind, const char *msg, size_t len, const __u8 *answer, int starts)
{
	struct http_framer whole, f;
	struct trace ref, t;
	char what[64];
	size_t i;

	memset(&ref, 0, sizeof(ref));
	if (answer)
		memcpy(ref.answer, answer, TRACE_MSGS);
	run(&whole, kind, msg, len, &ref);
	ASSERT_EQ(ref.starts, starts, "message starts in one feed");

	for (i = 0; i <= len; i++) {
		http_framer_init(&f, kind, 0);
		memset(&t, 0, sizeof(t));
		memcpy(t.answer, ref.answer, TRACE_MSGS);
		http_feed(&f, (const __u8 *)msg, i, on_event, &t);
		http_feed(&f, (const __u8 *)msg + i, len - i, on_event, &t);
		snprintf(what, sizeof(what), "split at %zu of %zu", i, len);
		if (!ASSERT_TRUE(same_trace(&t, &ref), what) ||
		    !ASSERT_FALSE(memcmp(&f, &whole, sizeof(f)), what))
			return;
	}
	for (i = 1; i <= 17; i++) {
		http_framer_init(&f, kind, 0);
		memset(&t, 0, sizeof(t));
		memcpy(t.answer, ref.answer, TRACE_MSGS);
		feed_pieces(&f, msg, len, i, &t);
		snprintf(what, sizeof(what), "pieces of %zu bytes", i);
		if (!ASSERT_TRUE(same_trace(&t, &ref), what) ||
		    !ASSERT_FALSE(memcmp(&f, &whole, sizeof(f)), what))
			return;
	}
}

void test_http_parse_split(void)
{
	static const char req_pair[] =
		"POST /submit HTTP/1.1\r\nHost: a\r\nContent-Length: 19\r\n\r\n"
		"GET /x HTTP/1.1\r\n\r\n"
		"GET /second HTTP/1.1\r\n\r\n";
	static const char req_chunked[] = "PUT /c HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"
					  "10\r\nGET / HTTP/1.1\r\n\r\n0\r\nX: y\r\n\r\n"
					  "\r\nDELETE /d HTTP/1.1\nContent-Length: 1\n\nZ";
	static const char resp_three[] =
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
		"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
		"3\r\nabc\r\n0\r\n\r\n"
		"HTTP/1.1 503 Service Unavailable\r\n"
		"x-error-claim: claimed\r\nContent-Length: 0\r\n\r\n";
	static const char resp_interim[] =
		"HTTP/1.1 100 Continue\r\n\r\n"
		"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
		"HTTP/1.0 502 Bad Gateway\r\nX-Error-Claim: unclaimed\r\n\r\n"
		"tail swallowed HTTP/1.1 200 OK\r\n\r\n";
	static const char resp_bad[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
				       "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n";
	static const __u8 head_first[TRACE_MSGS] = { 0, HTTP_M_HEAD };

	if (test__start_subtest("request_single"))
		check_splits(HTTP_KIND_REQUEST, MSG("GET /only HTTP/1.1\r\nHost: h\r\n\r\n"), NULL,
			     1);
	if (test__start_subtest("request_pipelined"))
		check_splits(HTTP_KIND_REQUEST, MSG(req_pair), NULL, 2);
	if (test__start_subtest("request_chunked"))
		check_splits(HTTP_KIND_REQUEST, MSG(req_chunked), NULL, 2);
	if (test__start_subtest("response_single"))
		check_splits(HTTP_KIND_RESPONSE, MSG("HTTP/1.1 503 Unavailable\r\n\r\n"), NULL, 1);
	if (test__start_subtest("response_pipelined"))
		check_splits(HTTP_KIND_RESPONSE, MSG(resp_three), NULL, 3);
	if (test__start_subtest("response_interim_head_eof"))
		check_splits(HTTP_KIND_RESPONSE, MSG(resp_interim), head_first, 3);
	if (test__start_subtest("response_error"))
		check_splits(HTTP_KIND_RESPONSE, MSG(resp_bad), NULL, 2);
}

void test_http_parse_response(void)
{
	static const __u32 body_msg[] = { HTTP_EV_START, HTTP_EV_HEAD_END, HTTP_EV_END };
	struct http_framer f;
	struct trace t;
	char buf[512];
	int n;

	if (test__start_subtest("status")) {
		static const struct {
			const char *line;
			__u16 status;
		} s[] = {
			{ "HTTP/1.1 200 OK\r\n", 200 },
			{ "HTTP/1.1 404 Not Found\r\n", 404 },
			{ "HTTP/1.0 503 Service Unavailable\r\n", 503 },
			{ "HTTP/1.1 302\r\n", 302 },
			{ "HTTP/1.1 500\n", 500 },
			{ "HTTP/1.1 599 Whatever \x01\x80\xff\r\n", 599 },
			{ "HTTP/1.1 999 X\r\n", 999 },
		};
		size_t i;

		for (i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
			n = snprintf(buf, sizeof(buf), "%sContent-Length: 1\r\n\r\nx", s[i].line);
			memset(&t, 0, sizeof(t));
			run(&f, HTTP_KIND_RESPONSE, buf, n, &t);
			expect_events(&t, body_msg, 3, s[i].line);
			ASSERT_EQ(t.status[0], s[i].status, s[i].line);
			ASSERT_EQ(f.state, HS_START, s[i].line);
		}
	}
	if (test__start_subtest("status_line_split")) {
		static const char msg[] =
			"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n";
		char what[32];
		size_t i;

		for (i = 0; i <= sizeof(msg) - 1; i++) {
			http_framer_init(&f, HTTP_KIND_RESPONSE, 0);
			memset(&t, 0, sizeof(t));
			http_feed(&f, (const __u8 *)msg, i, on_event, &t);
			if (i < 13)
				ASSERT_EQ(t.starts, 0, "no start before the status ends");
			http_feed(&f, (const __u8 *)msg + i, sizeof(msg) - 1 - i, on_event, &t);
			snprintf(what, sizeof(what), "split at %zu", i);
			ASSERT_EQ(t.starts, 1, what);
			ASSERT_EQ(t.status[0], 503, what);
			ASSERT_EQ(t.ends, 1, what);
			ASSERT_EQ(f.state, HS_START, what);
		}
	}
	if (test__start_subtest("length_body_not_scanned")) {
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 OK\r\nContent-Length: 19\r\n\r\n"
			"HTTP/1.1 200 OK\r\n\r\n"
			"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"),
		    &t);
		ASSERT_EQ(t.starts, 2, "body not a response");
		ASSERT_EQ(t.status[0], 200, "first");
		ASSERT_EQ(t.status[1], 201, "the real next response");
		ASSERT_EQ(t.ends, 2, "both ended");
		ASSERT_EQ(f.state, HS_START, "between messages");
	}
	if (test__start_subtest("eof_body")) {
		static const __u32 want[] = { HTTP_EV_START, HTTP_EV_HEAD_END };

		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n"
			"body HTTP/1.1 200 OK\r\n\r\n"),
		    &t);
		ASSERT_TRUE(feed_pieces(&f, MSG("more HTTP/1.1 500 X\r\nContent-Length: 0\r\n\r\n"),
					0, &t),
			    "swallowed");
		expect_events(&t, want, 2, "one response, body to the end");
		ASSERT_EQ(f.state, HS_BODY_EOF, "body runs to the close");
		ASSERT_TRUE(http_in_message(&f), "in a message");
		ASSERT_EQ(http_close(&f), HTTP_EV_END, "close ends it");
		ASSERT_EQ(f.state, HS_START, "then between messages");
		ASSERT_EQ(http_close(&f), 0, "close between messages: nothing");

		/* HTTP/1.1 without a length, and "chunked, gzip": the close ends them too. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE, MSG("HTTP/1.1 200 OK\r\nServer: x\r\n\r\nabc"), &t);
		ASSERT_EQ(f.state, HS_BODY_EOF, "HTTP/1.1, no length");
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n"),
		    &t);
		ASSERT_EQ(f.state, HS_BODY_EOF, "chunked not last");

		/* Cut off in the head: close is not a clean end. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE, MSG("HTTP/1.1 200 OK\r\nContent-"), &t);
		ASSERT_TRUE(http_in_message(&f), "in the head");
		ASSERT_EQ(http_close(&f), 0, "cut short");
	}
	if (test__start_subtest("chunked")) {
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			"1a\r\nHTTP/1.1 503 Unavailable\r\n\r\n"
			"C;name=\"v\"\r\nHTTP/1.1 503\r\n"
			"0\r\n\r\n"
			"HTTP/1.1 204 No Content\r\n\r\n"),
		    &t);
		ASSERT_EQ(t.starts, 2, "chunk data not a response");
		ASSERT_EQ(t.status[0], 200, "first");
		ASSERT_EQ(t.status[1], 204, "the real next response");
		ASSERT_EQ(t.ends, 2, "both ended");
		ASSERT_EQ(t.errors, 0, "no error");

		/* Transfer codings: chunked must be the last one. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), &t);
		ASSERT_EQ(f.state, HS_CHUNK_SIZE, "gzip, chunked");
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 OK\r\ntransfer-encoding:Chunked\r\n\r\n"), &t);
		ASSERT_EQ(f.state, HS_CHUNK_SIZE, "Chunked");
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunkedx\r\n\r\n"), &t);
		ASSERT_EQ(f.state, HS_BODY_EOF, "chunkedx");
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE, MSG("HTTP/1.1 200 OK\r\nX-Encoding: chunked\r\n\r\n"),
		    &t);
		ASSERT_EQ(f.state, HS_BODY_EOF, "other header");
	}
	if (test__start_subtest("no_body_statuses")) {
		static const int statuses[] = { 204, 304, 102, 103 };
		size_t i;

		for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
			n = snprintf(buf, sizeof(buf),
				     "HTTP/1.1 %d X\r\nContent-Length: 50\r\n"
				     "Transfer-Encoding: chunked\r\n\r\n"
				     "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
				     statuses[i]);
			memset(&t, 0, sizeof(t));
			run(&f, HTTP_KIND_RESPONSE, buf, n, &t);
			ASSERT_EQ(t.starts, 2, "no body");
			ASSERT_EQ(t.status[0], statuses[i], "status");
			ASSERT_EQ(t.status[1], 200, "next response");
			ASSERT_EQ(f.state, HS_START, "between messages");
		}
		/* The same with 200: the next response is body. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 X\r\nContent-Length: 50\r\n\r\n"
			"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
		    &t);
		ASSERT_EQ(t.starts, 1, "200 has a body");
		ASSERT_EQ(f.state, HS_BODY_LEN, "in it");
		ASSERT_EQ(f.remaining, 50 - 38, "what is left of it");
	}
	if (test__start_subtest("head_response")) {
		static const char msg[] = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
					  "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

		memset(&t, 0, sizeof(t));
		t.answer[0] = HTTP_M_HEAD;
		run(&f, HTTP_KIND_RESPONSE, MSG(msg), &t);
		ASSERT_EQ(t.starts, 2, "HEAD answer has no body");
		ASSERT_EQ(t.method[0], HTTP_M_HEAD, "answered HEAD");
		ASSERT_EQ(t.status[1], 404, "next response");
		ASSERT_EQ(t.method[1], HTTP_M_NONE, "method reset at the next start");
		ASSERT_EQ(t.ends, 2, "both ended");

		memset(&t, 0, sizeof(t));
		t.answer[0] = HTTP_M_GET;
		run(&f, HTTP_KIND_RESPONSE, MSG(msg), &t);
		ASSERT_EQ(t.starts, 1, "GET answer has its body");
		ASSERT_EQ(f.state, HS_BODY_LEN, "in it");
	}
	if (test__start_subtest("continue_then_ok")) {
		static const __u32 want[] = { HTTP_EV_START, HTTP_EV_HEAD_END | HTTP_EV_END,
					      HTTP_EV_START, HTTP_EV_HEAD_END, HTTP_EV_END };

		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 100 Continue\r\n\r\n"
			"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
		    &t);
		expect_events(&t, want, 5, "interim then final");
		ASSERT_EQ(t.status[0], 100, "100 first");
		ASSERT_EQ(t.status[1], 200, "200 then");
	}
	if (test__start_subtest("upgrade")) {
		static const __u32 want[] = { HTTP_EV_START, HTTP_EV_HEAD_END };

		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
			"Content-Length: 10\r\n\r\n\x81\x05hello"),
		    &t);
		expect_events(&t, want, 2, "101");
		ASSERT_EQ(f.state, HS_UPGRADED, "upgraded");
		/* The 101 answers its request; 100 and 103 do not, 200 up does. */
		ASSERT_TRUE(http_final_status(t.status[0]), "101: the answer");
		ASSERT_FALSE(http_final_status(100), "100: interim");
		ASSERT_FALSE(http_final_status(103), "103: interim");
		ASSERT_TRUE(http_final_status(200) && http_final_status(204) &&
				    http_final_status(503),
			    "200 up: the answer");
		ASSERT_FALSE(http_in_message(&f), "not in a message");
		ASSERT_TRUE(feed_pieces(&f, MSG("HTTP/1.1 200 OK\r\n\r\n"), 0, &t), "swallowed");
		ASSERT_EQ(t.nev, 2, "no events after");
		ASSERT_EQ(http_close(&f), 0, "close: nothing");

		/* A 2xx answer to CONNECT is a tunnel; a 407 is not. */
		memset(&t, 0, sizeof(t));
		t.answer[0] = HTTP_M_CONNECT;
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 Connection established\r\n\r\n\x16\x03\x01"), &t);
		ASSERT_EQ(f.state, HS_UPGRADED, "CONNECT 200");
		ASSERT_EQ(t.errors, 0, "tunnel bytes not parsed");
		memset(&t, 0, sizeof(t));
		t.answer[0] = HTTP_M_CONNECT;
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 407 Proxy Auth\r\nContent-Length: 0\r\n\r\n"), &t);
		ASSERT_EQ(f.state, HS_START, "CONNECT 407");
	}
	if (test__start_subtest("claim")) {
		static const struct {
			const char *line;
			__u8 claim;
		} c[] = {
			{ "x-error-claim: claimed\r\n", HTTP_CLAIM_CLAIMED },
			{ "x-error-claim: unclaimed\r\n", HTTP_CLAIM_UNCLAIMED },
			{ "X-Error-Claim: UnClaimed\r\n", HTTP_CLAIM_UNCLAIMED },
			{ "X-ERROR-CLAIM:CLAIMED\r\n", HTTP_CLAIM_CLAIMED },
			{ "x-error-claim: \t claimed \t\r\n", HTTP_CLAIM_CLAIMED },
			{ "x-error-claim: claimed\n", HTTP_CLAIM_CLAIMED },
			{ "x-error-claim: garbage\r\n", HTTP_CLAIM_NONE },
			{ "x-error-claim: claimedx\r\n", HTTP_CLAIM_NONE },
			{ "x-error-claim: unclaimedx\r\n", HTTP_CLAIM_NONE },
			{ "x-error-claim: xclaimed\r\n", HTTP_CLAIM_NONE },
			{ "x-error-claim: claim\r\n", HTTP_CLAIM_NONE },
			{ "x-error-claim: un\r\n", HTTP_CLAIM_NONE },
			{ "x-error-claim: \r\n", HTTP_CLAIM_NONE },
			{ "x-error-claims: claimed\r\n", HTTP_CLAIM_NONE },
			{ "x-error-clai: claimed\r\n", HTTP_CLAIM_NONE },
			{ "y-error-claim: claimed\r\n", HTTP_CLAIM_NONE },
			{ "X-Other: x-error-claim: claimed\r\n", HTTP_CLAIM_NONE },
			{ " x-error-claim: claimed\r\n", HTTP_CLAIM_NONE }, /* folded line */
		};
		size_t i;

		for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
			n = snprintf(buf, sizeof(buf),
				     "HTTP/1.1 503 X\r\nA: b\r\n%sContent-Length: 0\r\n\r\n",
				     c[i].line);
			memset(&t, 0, sizeof(t));
			run(&f, HTTP_KIND_RESPONSE, buf, n, &t);
			ASSERT_EQ(t.head_ends, 1, c[i].line);
			ASSERT_EQ(t.claim[0], c[i].claim, c[i].line);
			ASSERT_EQ(t.errors, 0, c[i].line);
		}
		/* The value is read by the end of its line, before the head ends. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE, MSG("HTTP/1.1 503 X\r\nx-error-claim: unclaimed\r\n"),
		    &t);
		ASSERT_EQ(f.claim, HTTP_CLAIM_UNCLAIMED, "at the end of its line");
	}
	if (test__start_subtest("claim_reset")) {
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 503 X\r\nx-error-claim: claimed\r\nContent-Length: 0\r\n\r\n"
			"HTTP/1.1 503 X\r\nContent-Length: 0\r\n\r\n"
			"HTTP/1.1 502 X\r\nx-error-claim: unclaimed\r\n\r\n"),
		    &t);
		ASSERT_EQ(t.head_ends, 3, "three heads");
		ASSERT_EQ(t.claim[0], HTTP_CLAIM_CLAIMED, "first claimed");
		ASSERT_EQ(t.claim[1], HTTP_CLAIM_NONE, "second: not inherited");
		ASSERT_EQ(t.claim[2], HTTP_CLAIM_UNCLAIMED, "third unclaimed");
	}
	if (test__start_subtest("pipelined_three")) {
		static const __u32 want[] = { HTTP_EV_START, HTTP_EV_HEAD_END, HTTP_EV_END,
					      HTTP_EV_START, HTTP_EV_HEAD_END, HTTP_EV_END,
					      HTTP_EV_START, HTTP_EV_HEAD_END, HTTP_EV_END };

		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
			"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
			"3\r\nabc\r\n0\r\n\r\n"
			"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy"),
		    &t);
		expect_events(&t, want, 9, "three responses");
		ASSERT_EQ(t.status[0], 200, "first");
		ASSERT_EQ(t.status[1], 404, "second");
		ASSERT_EQ(t.status[2], 503, "third");
		ASSERT_EQ(f.state, HS_START, "between messages");
	}
}

void test_http_parse_malformed(void)
{
	struct http_framer f;
	struct trace t;

	if (test__start_subtest("not_http")) {
		/* Nothing here is a message start: lost before any EV_START. */
		static const struct {
			__u8 kind;
			const char *msg;
			size_t len;
			const char *what;
		} c[] = {
			{ REQ, MSG("\x00\x01\x02\xfe\xff\x80 junk"), "binary junk" },
			{ RESP, MSG("\x00\x01\x02\xfe\xff\x80 junk"), "binary junk" },
			{ REQ, MSG("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"),
			  "TLS ClientHello" },
			{ RESP, MSG("\x16\x03\x03\x00\x5d\x02\x00\x00\x59\x03\x03"),
			  "TLS ServerHello" },
			{ REQ, MSG("SSH-2.0-OpenSSH_9.6\r\n"), "SSH banner" },
			{ RESP, MSG("SSH-2.0-OpenSSH_9.6\r\n"), "SSH banner" },
			{ REQ, MSG("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), "HTTP/2 preface" },
			{ RESP, MSG("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), "HTTP/2 preface" },
			{ REQ, MSG("get / HTTP/1.1\r\n\r\n"), "lowercase method" },
			{ REQ, MSG("Get / HTTP/1.1\r\n\r\n"), "mixed-case method" },
			{ REQ, MSG("ABCDEFGHIJK / HTTP/1.1\r\n\r\n"), "11-letter method" },
			{ REQ, MSG("GETGETGETGETGETGETGETGET / HTTP/1.1\r\n\r\n"), "long method" },
			{ REQ, MSG("M-SEARCH * HTTP/1.1\r\n\r\n"), "method with a dash" },
			{ REQ, MSG(" GET / HTTP/1.1\r\n\r\n"), "leading space" },
			{ REQ, MSG("GET  HTTP/1.1\r\n\r\n"), "empty target" },
			{ REQ, MSG("GET /\r\n"), "HTTP/0.9" },
			{ REQ, MSG("GET /\n"), "HTTP/0.9, LF" },
			{ REQ, MSG("GET / \r\n\r\n"), "no version" },
			{ REQ, MSG("GET / HTTP/2.0\r\n\r\n"), "version 2" },
			{ REQ, MSG("GET / HTTP/1.2\r\n\r\n"), "version 1.2" },
			{ REQ, MSG("GET / http/1.1\r\n\r\n"), "lowercase version" },
			{ REQ, MSG("GET / HTTP/1.1 \r\n\r\n"), "space after version" },
			{ REQ, MSG("GET / HTTP/1.1\rX\n\r\n"), "CR without LF" },
			{ REQ, MSG("GET / HTTP/1.1x\r\n\r\n"), "junk after version" },
			{ REQ, MSG("GET /a b HTTP/1.1\r\n\r\n"), "space in target" },
			{ REQ, MSG("GET /a\tb HTTP/1.1\r\n\r\n"), "tab in target" },
			{ REQ, MSG("GET /a\x7f HTTP/1.1\r\n\r\n"), "DEL in target" },
			{ REQ, MSG("HTTP/1.1 200 OK\r\n\r\n"), "response to a request framer" },
			{ RESP, MSG("GET / HTTP/1.1\r\n\r\n"), "request to a response framer" },
			{ RESP, MSG("HTTP/1.1 20 OK\r\n\r\n"), "two-digit status" },
			{ RESP, MSG("HTTP/1.1 2000 OK\r\n\r\n"), "four-digit status" },
			{ RESP, MSG("HTTP/1.1 099 X\r\n\r\n"), "status below 100" },
			{ RESP, MSG("HTTP/1.1 2x0 OK\r\n\r\n"), "letter in status" },
			{ RESP, MSG("HTTP/1.1  200 OK\r\n\r\n"), "two spaces" },
			{ RESP, MSG("HTTP/1.1 200\tOK\r\n\r\n"), "tab after status" },
			{ RESP, MSG("HTTP/2 200\r\n\r\n"), "HTTP/2" },
			{ RESP, MSG("HTTP/1.1\r\n\r\n"), "no status" },
			{ RESP, MSG("http/1.1 200 OK\r\n\r\n"), "lowercase version" },
			{ RESP, MSG("HTTPS/1.1 200 OK\r\n\r\n"), "HTTPS" },
			{ REQ, MSG("\0GET / HTTP/1.1\r\n\r\n"), "NUL first" },
			{ RESP, MSG("\0HTTP/1.1 200 OK\r\n\r\n"), "NUL first" },
			{ REQ, MSG("G\0T / HTTP/1.1\r\n\r\n"), "NUL in method" },
			{ REQ, MSG("GET /a\0b HTTP/1.1\r\n\r\n"), "NUL in target" },
			{ REQ, MSG("GET / HTTP/1\0.1\r\n\r\n"), "NUL in version" },
			{ REQ, MSG("GET / HTTP/1.1\0\r\n\r\n"), "NUL after version" },
			{ RESP, MSG("HTTP/1.1\000200 OK\r\n\r\n"), "NUL before status" },
			{ RESP, MSG("HTTP/1.1 2\0\0 OK\r\n\r\n"), "NUL in status" },
			{ RESP, MSG("HTTP/1.1 200\0OK\r\n\r\n"), "NUL after status" },
		};
		size_t i;

		for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
			memset(&t, 0, sizeof(t));
			run(&f, c[i].kind, c[i].msg, c[i].len, &t);
			ASSERT_EQ(t.nev, 1, c[i].what);
			ASSERT_EQ(t.ev[0], HTTP_EV_ERROR, c[i].what);
			ASSERT_EQ(t.starts, 0, c[i].what);
			ASSERT_EQ(f.state, HS_LOST, c[i].what);
		}
	}
	if (test__start_subtest("bad_framing")) {
		/* A good start line, then headers or body that lose the framing. */
		static const struct {
			__u8 kind;
			const char *msg;
			size_t len;
			const char *what;
		} c[] = {
			{ REQ, MSG(POST_LINE "Content-Length: 12abc\r\n\r\n"),
			  "letters in Content-Length" },
			{ REQ, MSG(POST_LINE "Content-Length: abc\r\n\r\n"),
			  "Content-Length all letters" },
			{ RESP, MSG(OK_LINE "Content-Length: 0x10\r\n\r\n"), "hex Content-Length" },
			{ RESP, MSG(OK_LINE "Content-Length: -1\r\n\r\n"),
			  "negative Content-Length" },
			{ RESP, MSG(OK_LINE "Content-Length: 1 2\r\n\r\n"), "two numbers" },
			{ RESP, MSG(OK_LINE "Content-Length: 5\0\r\n\r\n"),
			  "NUL in Content-Length" },
			{ RESP, MSG(OK_LINE "Content-Length: 99999999999999999999\r\n\r\n"),
			  "huge Content-Length" },
			{ RESP, MSG(OK_LINE "Content-Length: 1099511627777\r\n\r\n"),
			  "over HTTP_MAX_LENGTH" },
			{ REQ, MSG(POST_LINE "\rX"), "CR then not LF ending the head" },
			{ RESP, MSG(OK_LINE "Transfer-Encoding: chunked\r\n\r\nzz\r\n"),
			  "chunk size not hex" },
			{ RESP, MSG(OK_LINE "Transfer-Encoding: chunked\r\n\r\n\r\n"),
			  "empty chunk size" },
			{ RESP, MSG(OK_LINE "Transfer-Encoding: chunked\r\n\r\n 5\r\n"),
			  "space before chunk size" },
			{ RESP,
			  MSG(OK_LINE "Transfer-Encoding: chunked\r\n\r\n0000000000000005\r\n"),
			  "16 hex digits" },
			{ RESP, MSG(OK_LINE "Transfer-Encoding: chunked\r\n\r\n10000000001\r\n"),
			  "chunk over HTTP_MAX_LENGTH" },
			{ RESP, MSG(OK_LINE "Transfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n"),
			  "chunk overruns" },
			{ RESP, MSG(OK_LINE "Transfer-Encoding: chunked\r\n\r\n5\0\r\n"),
			  "NUL in chunk size" },
			{ RESP, MSG(OK_LINE "Transfer-Encoding: chunked\r\n\r\n0\r\n\rX"),
			  "trailer CR without LF" },
		};
		size_t i;

		for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
			memset(&t, 0, sizeof(t));
			run(&f, c[i].kind, c[i].msg, c[i].len, &t);
			ASSERT_EQ(t.starts, 1, c[i].what);
			ASSERT_EQ(t.errors, 1, c[i].what);
			ASSERT_EQ(last_event(&t), HTTP_EV_ERROR, c[i].what);
			ASSERT_EQ(t.ends, 0, c[i].what);
			ASSERT_EQ(f.state, HS_LOST, c[i].what);
		}
	}
	if (test__start_subtest("limits_accepted")) {
		/* The largest values the framer takes, next to the ones above. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 OK\r\nContent-Length: 1099511627776\r\n\r\n"), &t);
		ASSERT_EQ(f.state, HS_BODY_LEN, "HTTP_MAX_LENGTH body");
		ASSERT_EQ(f.remaining, HTTP_MAX_LENGTH, "to skip");
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			"00000000000000F\r\n"),
		    &t);
		ASSERT_EQ(f.state, HS_CHUNK_DATA, "15 hex digits");
		ASSERT_EQ(f.remaining, 15, "chunk to skip");
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			"10000000000\r\n"),
		    &t);
		ASSERT_EQ(f.remaining, HTTP_MAX_LENGTH, "HTTP_MAX_LENGTH chunk");
	}
	if (test__start_subtest("nul_in_header")) {
		/* Not Content-Length: the head ends there, and GET is the next request. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST,
		    MSG("POST / HTTP/1.1\r\nContent-Length\0: 5\r\n\r\nGET / HTTP/1.1\r\n\r\n"),
		    &t);
		ASSERT_EQ(t.starts, 2, "NUL-padded name is not Content-Length");
		ASSERT_EQ(t.errors, 0, "no error");
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 OK\r\nTransfer-Encoding\0: chunked\r\n"
			"x-error-claim\0: claimed\r\nContent-Length: 0\r\n\r\n"),
		    &t);
		ASSERT_EQ(t.claim[0], HTTP_CLAIM_NONE, "NUL-padded name is not x-error-claim");
		ASSERT_EQ(f.state, HS_START, "NUL-padded name is not Transfer-Encoding");
		/* Elsewhere in a header line, a NUL is just a byte to skip. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 200 OK\r\nX\0: \0\r\nx-error-claim: claimed\0\r\n"
			"Content-Length: 0\r\n\r\n"),
		    &t);
		ASSERT_EQ(t.ends, 1, "message ends");
		ASSERT_EQ(t.claim[0], HTTP_CLAIM_NONE, "claimed followed by NUL");
	}
	if (test__start_subtest("huge_header_line")) {
		size_t len = 1 << 20;
		char *big = malloc(len);
		double t0;

		if (!ASSERT_OK_PTR(big, "malloc"))
			return;
		memcpy(big, "GET / HTTP/1.1\r\nX-Big: ", 23);
		memset(big + 23, 'v', len - 23);
		memcpy(big + len - 4, "\r\n\r\n", 4);
		t0 = now_s();
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST, big, len, &t);
		ASSERT_EQ(t.starts, 1, "request line framed");
		ASSERT_EQ(t.errors, 1, "head too long");
		ASSERT_EQ(f.state, HS_LOST, "lost");
		ASSERT_EQ(f.head, HTTP_MAX_HEAD + 1, "stopped one past the limit");

		/* The same, a KiB at a time: stops at the limit, not at the end. */
		memset(&t, 0, sizeof(t));
		http_framer_init(&f, HTTP_KIND_RESPONSE, 0);
		memcpy(big, "HTTP/1.1 200 OK\r\nX-Big:", 23);
		for (size_t off = 0; off < len && !t.errors; off += 1024)
			http_feed(&f, (const __u8 *)big + off, 1024, on_event, &t);
		ASSERT_EQ(t.errors, 1, "response head too long");
		ASSERT_EQ(f.state, HS_LOST, "lost");
		ASSERT_LT(now_s() - t0, 2.0, "seconds for 2 MiB of header");
		free(big);
	}
	if (test__start_subtest("lost_is_final")) {
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_REQUEST, MSG("\x16\x03\x01"), &t);
		ASSERT_EQ(f.state, HS_LOST, "lost");
		ASSERT_TRUE(feed_pieces(&f, MSG("GET / HTTP/1.1\r\n\r\n"), 0, &t), "consumed");
		ASSERT_TRUE(feed_pieces(&f, MSG("\r\n\r\nGET / HTTP/1.1\r\n\r\n"), 1, &t),
			    "consumed byte by byte");
		ASSERT_EQ(t.nev, 1, "no events after the error");
		ASSERT_EQ(f.state, HS_LOST, "still lost");
		ASSERT_FALSE(http_in_message(&f), "not in a message");
		ASSERT_EQ(http_close(&f), 0, "close: nothing");

		/* Lost after good messages: the good ones were reported. */
		memset(&t, 0, sizeof(t));
		run(&f, HTTP_KIND_RESPONSE,
		    MSG("HTTP/1.1 204 X\r\n\r\nJUNK HTTP/1.1 200 OK\r\n\r\n"), &t);
		ASSERT_EQ(t.starts, 1, "one good response");
		ASSERT_EQ(t.errors, 1, "then lost");
		ASSERT_EQ(f.state, HS_LOST, "lost");
	}
}

void test_http_parse_seek(void)
{
	static const __u32 one_msg[] = { HTTP_EV_START, HTTP_EV_HEAD_END | HTTP_EV_END };
	struct http_framer f;
	struct trace t;

	if (test__start_subtest("junk_resyncs")) {
		static const char junk[] = "\x16\x03\x01junk\r\nGET / HTTP/1.1\r\n\r\n";

		http_framer_init(&f, HTTP_KIND_REQUEST, 1);
		ASSERT_TRUE(f.flags & HTTP_F_SEEK, "seeking");
		memset(&t, 0, sizeof(t));
		ASSERT_EQ(http_feed(&f, (const __u8 *)junk, sizeof(junk) - 1, on_event, &t),
			  sizeof(junk) - 1, "whole buffer consumed");
		ASSERT_EQ(t.nev, 1, "one event");
		ASSERT_EQ(t.ev[0], HTTP_EV_RESYNC, "resync");
		ASSERT_EQ(t.starts, 0, "rest of the buffer dropped");
		ASSERT_EQ(f.state, HS_START, "back to the start");
		ASSERT_EQ(f.head, 0, "no head");
		ASSERT_TRUE(f.flags & HTTP_F_SEEK, "still seeking");

		memset(&t, 0, sizeof(t));
		ASSERT_TRUE(feed_pieces(&f, MSG("GET /next HTTP/1.1\r\nHost: h\r\n\r\n"), 0, &t),
			    "consumed");
		expect_events(&t, one_msg, 2, "next feed parses");
		ASSERT_EQ(t.hash[0], fnv1a("/next"), "target");
		ASSERT_FALSE(f.flags & HTTP_F_SEEK, "found: no longer seeking");

		memset(&t, 0, sizeof(t));
		ASSERT_TRUE(feed_pieces(&f, MSG("junk GET / HTTP/1.1\r\n\r\n"), 0, &t), "consumed");
		ASSERT_EQ(t.nev, 1, "one event");
		ASSERT_EQ(t.ev[0], HTTP_EV_ERROR, "junk now loses the stream");
		ASSERT_EQ(f.state, HS_LOST, "lost");
	}
	if (test__start_subtest("mid_body_join")) {
		/* Joined in the middle of a response body, then a real response. */
		http_framer_init(&f, HTTP_KIND_RESPONSE, 1);
		memset(&t, 0, sizeof(t));
		ASSERT_TRUE(feed_pieces(&f, MSG("ody of the last one</html>\r\n"), 0, &t),
			    "consumed");
		ASSERT_EQ(t.resyncs, 1, "resync");
		ASSERT_TRUE(feed_pieces(&f, MSG("HTTP/1.1 2"), 0, &t), "consumed");
		ASSERT_TRUE(f.flags & HTTP_F_SEEK, "seeking until the status line is whole");
		ASSERT_TRUE(feed_pieces(&f, MSG("00 OK\r\nContent-Length: 2\r\n\r\nok"), 0, &t),
			    "consumed");
		ASSERT_EQ(t.starts, 1, "response found");
		ASSERT_EQ(t.status[0], 200, "status");
		ASSERT_EQ(t.ends, 1, "and ended");
		ASSERT_EQ(t.resyncs, 1, "one resync only");
		ASSERT_FALSE(f.flags & HTTP_F_SEEK, "no longer seeking");
	}
	if (test__start_subtest("bad_start_line_resyncs")) {
		/* A start line that goes wrong halfway: resync, not lost. */
		http_framer_init(&f, HTTP_KIND_RESPONSE, 1);
		memset(&t, 0, sizeof(t));
		ASSERT_TRUE(feed_pieces(&f, MSG("HTTP/1.1 20"), 0, &t), "consumed");
		ASSERT_EQ(t.nev, 0, "nothing yet");
		ASSERT_GT(f.head, 0, "head counted");
		ASSERT_TRUE(feed_pieces(&f, MSG("x OK\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"), 0, &t),
			    "consumed");
		ASSERT_EQ(t.nev, 1, "one event");
		ASSERT_EQ(t.ev[0], HTTP_EV_RESYNC, "resync");
		ASSERT_EQ(f.state, HS_START, "start");
		ASSERT_EQ(f.head, 0, "head reset");
		ASSERT_EQ(t.starts, 0, "rest dropped");

		http_framer_init(&f, HTTP_KIND_REQUEST, 1);
		memset(&t, 0, sizeof(t));
		ASSERT_TRUE(feed_pieces(&f, MSG("GET /\r\n"), 0, &t), "consumed");
		ASSERT_EQ(t.resyncs, 1, "HTTP/0.9 resyncs");
		ASSERT_EQ(f.state, HS_START, "start");
	}
	if (test__start_subtest("good_first")) {
		/* Seek mode on a stream that starts cleanly: no resync at all. */
		http_framer_init(&f, HTTP_KIND_REQUEST, 1);
		memset(&t, 0, sizeof(t));
		ASSERT_TRUE(feed_pieces(&f, MSG("\r\nGET / HTTP/1.1\r\n\r\n"), 0, &t), "consumed");
		expect_events(&t, one_msg, 2, "clean start");
		ASSERT_FALSE(f.flags & HTTP_F_SEEK, "no longer seeking");
		ASSERT_EQ(t.resyncs, 0, "no resync");

		/* Start lines ended by a bare LF end the seek too. */
		http_framer_init(&f, HTTP_KIND_REQUEST, 1);
		memset(&t, 0, sizeof(t));
		ASSERT_TRUE(feed_pieces(&f, MSG("GET / HTTP/1.0\n"), 0, &t), "consumed");
		ASSERT_EQ(t.starts, 1, "request, LF");
		ASSERT_FALSE(f.flags & HTTP_F_SEEK, "request, LF: no longer seeking");
		http_framer_init(&f, HTTP_KIND_RESPONSE, 1);
		memset(&t, 0, sizeof(t));
		ASSERT_TRUE(feed_pieces(&f, MSG("HTTP/1.0 200\n"), 0, &t), "consumed");
		ASSERT_EQ(t.starts, 1, "response, LF");
		ASSERT_FALSE(f.flags & HTTP_F_SEEK, "response, LF: no longer seeking");
	}
}

/*
 * The random run: junk and mutated messages, fed in one piece and in random
 * pieces. The framer must stay consistent after every feed, never leave
 * HS_LOST, and (without seek, where a resync drops the rest of a feed) give
 * the same events and end in the same state however the input was split.
 */
static __u64 rng;

static __u64 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t rnd_below(size_t n)
{
	return n ? rnd() % n : 0;
}

static const char *const corpus[] = {
	"GET /a HTTP/1.1\r\nHost: x\r\n\r\n",
	"POST /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
	"PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	"HEAD / HTTP/1.0\n\n",
	"DELETE /x?y=1 HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
	"OPTIONS * HTTP/1.1\r\n\r\n",
	"CONNECT h:443 HTTP/1.1\r\n\r\n",
	"PATCH /q HTTP/1.1\r\ntransfer-encoding: gzip, chunked\r\n\r\n"
	"a;x=y\r\n0123456789\r\n0\r\nT: v\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
	"HTTP/1.1 503 X\r\nx-error-claim: claimed\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 502 X\r\nX-Error-Claim: UnClaimed\r\nContent-Length: 1\r\n\r\n!",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	"HTTP/1.1 100 Continue\r\n\r\n",
	"HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n",
	"HTTP/1.1 101 Switching\r\n\r\n",
	"HTTP/1.0 200 OK\r\n\r\nbody",
	"HTTP/1.1 404 NF\nContent-Length: 2\n\nno",
	"HTTP/1.1 200 OK\r\nContent-Length: 1099511627776\r\n\r\n",
	"\r\n\r\n",
	"GET /r/7 HTTP/1.1\r\nUser-Agent: curl/7.88.1\r\ntraceparent: "
	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n\r\n",
	"GET /r/8 HTTP/1.1\r\nx-request-id: 5f2c9a\r\nX-B3-TraceId: 80f198ee56343ba8\r\n"
	"user-agent:  a b \r\nContent-Length: 0\r\n\r\n",
	"GET /r/9 HTTP/1.1\r\nUser-Agentx: y\r\nTraceparentz: 1\r\nX-Request-Idd: 2\r\n"
	"X-B3-TraceIds: 3\r\nTRACEPARENT:00-ab-cd-01\r\n\r\n",
};

#define NCORPUS	     (sizeof(corpus) / sizeof(corpus[0]))
#define RAND_MAX_LEN 1024

/* A corpus message, most often one for a framer of that kind. */
static const char *rnd_corpus(__u8 kind)
{
	const char *m = corpus[rnd_below(NCORPUS)];
	int tries;

	for (tries = 0; tries < 3 && !strncmp(m, "HTTP/", 5) == (kind == REQ); tries++)
		m = corpus[rnd_below(NCORPUS)];
	return m;
}

static void rnd_message(__u8 kind, __u8 *buf, size_t *len)
{
	static const char alpha[] = "HTTP/1.0 GET 200 OK\r\n:;,-\tchunkedx-error-claim0123456789aF";
	size_t n = 0, i, k;

	switch (rnd_below(4)) {
	case 0: /* random bytes */
		n = rnd_below(257);
		for (i = 0; i < n; i++)
			buf[i] = rnd();
		break;
	case 1: /* bytes from an HTTP-ish alphabet */
		n = rnd_below(257);
		for (i = 0; i < n; i++)
			buf[i] = alpha[rnd_below(sizeof(alpha) - 1)];
		break;
	default: /* one to four messages, mutated */
		for (k = rnd_below(4) + 1; k; k--) {
			const char *m = rnd_corpus(kind);
			size_t ml = strlen(m);

			if (n + ml > RAND_MAX_LEN / 2)
				break;
			memcpy(buf + n, m, ml);
			n += ml;
		}
		for (k = rnd_below(5); k; k--) {
			size_t at = rnd_below(n + 1), cnt;
			const char *m;

			switch (rnd_below(6)) {
			case 0: /* byte replaced */
				if (at < n)
					buf[at] = alpha[rnd_below(sizeof(alpha) - 1)];
				break;
			case 1: /* bit flipped, or any byte */
				if (at < n && rnd_below(2))
					buf[at] ^= 1 << rnd_below(8);
				else if (at < n)
					buf[at] = rnd();
				break;
			case 2:
				n = at; /* truncated */
				break;
			case 3: /* range deleted */
				cnt = rnd_below(n - at + 1);
				memmove(buf + at, buf + at + cnt, n - at - cnt);
				n -= cnt;
				break;
			case 4: /* piece of another message spliced in */
				m = rnd_corpus(kind);
				i = rnd_below(strlen(m));
				cnt = rnd_below(strlen(m) - i + 1);
				if (n + cnt > RAND_MAX_LEN)
					break;
				memmove(buf + at + cnt, buf + at, n - at);
				memcpy(buf + at, m + i, cnt);
				n += cnt;
				break;
			case 5: /* byte inserted */
				if (n + 1 > RAND_MAX_LEN)
					break;
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = "\r\n :0Ha\t;,\xff\0"[rnd_below(12)];
				n++;
				break;
			}
		}
		break;
	}
	*len = n;
}

/* What must hold of any framer between feeds; NULL when it does. */
static const char *framer_broken(const struct http_framer *f, __u8 kind)
{
	if (f->state >= HS__COUNT)
		return "state out of range";
	if (f->kind != kind)
		return "kind changed";
	if (f->head > HTTP_MAX_HEAD + 1)
		return "head past the limit";
	if (f->pos > HTTP_HDR_NAME_MAX)
		return "pos out of range";
	if (f->method >= HTTP_M__COUNT)
		return "method out of range";
	if (f->claim > HTTP_CLAIM_UNCLAIMED)
		return "claim out of range";
	if (f->state == HS_HDR_VALUE && f->hdr >= HTTP_HDR_COUNT)
		return "header index out of range";
	if (http_skipping(f) && (f->remaining == 0 || f->remaining > HTTP_MAX_LENGTH))
		return "nothing or too much to skip";
	if (f->flags & ~(HTTP_F_HAVE_LEN | HTTP_F_CHUNKED | HTTP_F_SEEK))
		return "unknown flag";
	return NULL;
}

void test_http_parse_random(void)
{
	static __u8 buf[RAND_MAX_LEN];
	struct http_framer whole, f;
	struct trace ref, t;
	const char *why = NULL;
	int iter, bad = 0, bad_iter = -1, compared = 0, starts = 0, ends = 0, lost = 0;
	double t0 = now_s();
	size_t len, bytes = 0;

	rng = 0x9e3779b97f4a7c15ULL;
	for (iter = 0; iter < 20000; iter++) {
		__u8 kind = rnd_below(2), seek = rnd_below(4) == 0;
		const char *w = NULL;
		size_t off, i;

		rnd_message(kind, buf, &len);
		memset(&ref, 0, sizeof(ref));
		for (i = 0; i < TRACE_MSGS; i++)
			ref.answer[i] = rnd_below(4) == 0 ? HTTP_M_HEAD : 0;
		if (rnd_below(16) == 0)
			ref.answer[0] = HTTP_M_CONNECT;
		t = ref;

		/* In one piece. */
		http_framer_init(&whole, kind, seek);
		if (http_feed(&whole, buf, len, on_event, &ref) != len)
			w = "one feed did not consume its buffer";
		else
			w = framer_broken(&whole, kind);

		/* In random pieces, checked after each. */
		http_framer_init(&f, kind, seek);
		for (off = 0; !w && off < len;) {
			size_t n = rnd_below(4) == 0 ? len - off : rnd_below(len - off) % 64 + 1;
			int was_lost = f.state == HS_LOST, nev = t.nev;

			if (http_feed(&f, buf + off, n, on_event, &t) != n)
				w = "feed did not consume its piece";
			else if (was_lost && (f.state != HS_LOST || t.nev != nev))
				w = "left HS_LOST";
			else
				w = framer_broken(&f, kind);
			off += n;
		}
		if (!w && (ref.bad || t.bad))
			w = "inconsistent at an event";
		if (!w && !seek && (ref.resyncs || t.resyncs))
			w = "resync without seek";
		if (!w && !seek) {
			compared++;
			if (!same_trace(&ref, &t) || memcmp(&f, &whole, sizeof(f)))
				w = "pieces and one buffer disagree";
		}
		if (!w) {
			int eof = whole.state == HS_BODY_EOF;

			if (http_close(&whole) != (eof ? HTTP_EV_END : 0u) ||
			    (eof && whole.state != HS_START))
				w = "close";
		}
		bytes += len;
		starts += ref.starts;
		ends += ref.ends;
		lost += whole.state == HS_LOST;
		if (w) {
			if (!bad++) {
				why = w;
				bad_iter = iter;
			}
		}
	}
	if (!ASSERT_EQ(bad, 0, "iterations with a broken framer"))
		printf("first at iteration %d: %s\n", bad_iter, why);
	printf("%d streams, %zu bytes: %d compared split, %d starts, %d ends, %d lost, %.2f s\n",
	       iter, bytes, compared, starts, ends, lost, now_s() - t0);
	/* The run must reach deep: many messages framed, many streams lost. */
	ASSERT_GT(compared, 10000, "split comparisons");
	ASSERT_GT(starts, 5000, "message starts seen");
	ASSERT_GT(ends, 3000, "message ends seen");
	ASSERT_GT(lost, 5000, "streams lost");
	ASSERT_LT(now_s() - t0, 5.0, "seconds");
}

static __u32 name_hash(const char *name)
{
	__u32 h = HTTP_FNV_OFFSET;

	for (; *name; name++)
		h = http_hdr_hash(h, *name);
	return h;
}

/* The header-name constants are the hashes of the names they stand for. */
void test_http_parse_name_hashes(void)
{
	ASSERT_EQ(name_hash("content-length"), HTTP_HASH_CONTENT_LENGTH, "content-length");
	ASSERT_EQ(name_hash("Content-Length"), HTTP_HASH_CONTENT_LENGTH, "case-insensitive");
	ASSERT_EQ(name_hash("transfer-encoding"), HTTP_HASH_TRANSFER_ENCODING, "transfer-encoding");
	ASSERT_EQ(name_hash("x-error-claim"), HTTP_HASH_ERROR_CLAIM, "x-error-claim");
	ASSERT_EQ(name_hash("content-"), HTTP_HASH8_CONTENT, "content-");
	ASSERT_EQ(name_hash("transfer"), HTTP_HASH8_TRANSFER, "transfer");
	ASSERT_EQ(name_hash("x-error-"), HTTP_HASH8_X_ERROR, "x-error-");
	ASSERT_NEQ(name_hash("content-type"), HTTP_HASH_CONTENT_LENGTH, "another name");
	ASSERT_EQ(name_hash("user-agent"), HTTP_HASH_USER_AGENT, "user-agent");
	ASSERT_EQ(name_hash("traceparent"), HTTP_HASH_TRACEPARENT, "traceparent");
	ASSERT_EQ(name_hash("x-b3-traceid"), HTTP_HASH_B3_TRACE_ID, "x-b3-traceid");
	ASSERT_EQ(name_hash("x-request-id"), HTTP_HASH_REQUEST_ID, "x-request-id");
	ASSERT_EQ(name_hash("user-age"), HTTP_HASH8_USER_AGE, "user-age");
	ASSERT_EQ(name_hash("tracepar"), HTTP_HASH8_TRACEPAR, "tracepar");
	ASSERT_EQ(name_hash("x-b3-tra"), HTTP_HASH8_X_B3_TRA, "x-b3-tra");
	ASSERT_EQ(name_hash("x-reques"), HTTP_HASH8_X_REQUES, "x-reques");
}

/* FNV-1a of a string, as the framer hashes values and targets. */
static __u32 value_hash(const char *v)
{
	__u32 h = HTTP_FNV_OFFSET;

	for (; *v; v++)
		h = (h ^ (__u8)*v) * HTTP_FNV_PRIME;
	return h;
}

static void feed_bytes(struct http_framer *f, const __u8 *buf, size_t len, struct trace *t);

/* The head of msg framed as a request, with the ids read or not, both paths. */
static void ids_of(const char *msg, int ids, struct http_framer *out)
{
	struct http_framer slow;
	struct trace t;

	memset(&t, 0, sizeof(t));
	http_framer_init(out, REQ, 0);
	http_framer_init(&slow, REQ, 0);
	if (ids) {
		out->flags |= HTTP_F_IDS;
		slow.flags |= HTTP_F_IDS;
	}
	http_feed(out, (const __u8 *)msg, strlen(msg), on_event, &t);
	memset(&t, 0, sizeof(t));
	feed_bytes(&slow, (const __u8 *)msg, strlen(msg), &t);
	ASSERT_TRUE(!memcmp(out, &slow, sizeof(slow)), "both paths agree");
}

/*
 * A request's id (traceparent's trace-id over x-b3-traceid over
 * x-request-id) and user agent, read only with HTTP_F_IDS: what claimd
 * ties an event loop's calls to its requests by.
 */
void test_http_parse_request_ids(void)
{
	static const char tp[] =
		"GET /r/1 HTTP/1.1\r\nHost: a\r\nUser-Agent: curl/8.0\r\n"
		"traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		"\r\n\r\n";
	struct http_framer f;

	ids_of(tp, 1, &f);
	ASSERT_EQ(f.id_hash, value_hash("4bf92f3577b34da6a3ce929d0e0e4736"),
		  "traceparent: trace-id");
	ASSERT_EQ(f.id_kind, HTTP_HDR_TRACEPARENT, "from traceparent");
	ASSERT_EQ(f.ua_hash, value_hash("curl/8.0"), "user agent");
	/* Another span of the same trace (a call made for this request): the same id. */
	{
		struct http_framer g;

		ids_of("POST /up HTTP/1.1\r\nTRACEPARENT:   "
		       "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-00\r\n"
		       "Content-Length: 0\r\n\r\n",
		       1, &g);
		ASSERT_EQ(g.id_hash, f.id_hash, "the trace's id, whatever the parent");
		ASSERT_EQ(g.ua_hash, 0, "no user agent");
	}
	ids_of(tp, 0, &f);
	ASSERT_EQ(f.id_hash, 0, "without HTTP_F_IDS: no id");
	ASSERT_EQ(f.ua_hash, 0, "without HTTP_F_IDS: no user agent");

	ids_of("GET / HTTP/1.1\r\nx-request-id: abc-123\r\n\r\n", 1, &f);
	ASSERT_EQ(f.id_hash, value_hash("abc-123"), "x-request-id, whole");
	ids_of("GET / HTTP/1.1\r\nx-request-id: abc-123\r\nX-B3-TraceId: 80f198ee\r\n\r\n", 1, &f);
	ASSERT_EQ(f.id_hash, value_hash("80f198ee"), "x-b3-traceid over x-request-id");
	ids_of("GET / HTTP/1.1\r\nX-B3-TraceId: 80f198ee\r\nx-request-id: abc-123\r\n\r\n", 1, &f);
	ASSERT_EQ(f.id_hash, value_hash("80f198ee"), "in either order");
	/* A second message on the connection starts with none. */
	{
		static const char two[] = "GET /1 HTTP/1.1\r\nx-request-id: one\r\n\r\n"
					  "GET /2 HTTP/1.1\r\n\r\n";

		ids_of(two, 1, &f);
		ASSERT_EQ(f.id_hash, 0, "ids are per message");
		ASSERT_TRUE(f.flags & HTTP_F_IDS, "the flag stays");
	}
	/* Names that only begin as these do are not them. */
	ids_of("GET / HTTP/1.1\r\nUser-Agents: x\r\nX-Request-Ids: y\r\nTraceparentx: z\r\n\r\n", 1,
	       &f);
	ASSERT_EQ(f.id_hash | f.ua_hash, 0, "near names");
}

/* http_step() and http_skip() alone, the way http_feed() goes without its fast paths. */
static void feed_bytes(struct http_framer *f, const __u8 *buf, size_t len, struct trace *t)
{
	size_t off = 0;

	while (off < len) {
		__u32 ev = 0;

		if (http_skipping(f))
			off += http_skip(f, len - off, &ev);
		else if (http_swallowing(f))
			return;
		else
			ev = http_step(f, buf[off++]);
		if (ev)
			on_event(t, f, ev);
		if (ev & HTTP_EV_RESYNC)
			return;
	}
}

/*
 * The eight-byte fast paths (methods, targets, versions, status codes, the
 * names of the headers we read, skipped lines, Content-Length lines) give
 * exactly what stepping byte by byte gives: the same events, the same
 * framer after them. Near
 * misses first (a CR or a control byte where a dash is, long methods, DEL
 * in a target, a version or a status that is not one), then random streams.
 */
void test_http_parse_fast_paths(void)
{
	static const struct {
		const char *s;
		size_t len;
	} cases[] = {
		{ MSG("GET /a HTTP/1.1\r\nContent-Length: 2\r\n\r\nokGET /b HTTP/1.1\r\n\r\n") },
		{ MSG("OPTIONS * HTTP/1.1\r\nTransfer-Encoding: "
		      "chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n") },
		{ MSG("PROPFIND /dav HTTP/1.1\r\nHost: x\r\n\r\n") },
		{ MSG("get /lower HTTP/1.1\r\n\r\n") },
		{ MSG("GET /t\x7fx HTTP/1.1\r\n\r\n") },
		{ MSG("GET /t\x80\xff/long/target/with/more/than/eight/bytes HTTP/1.0\r\n\r\n") },
		{ MSG("GET /x HTTP/1.2\r\n\r\n") },
		{ MSG("GET  /x HTTP/1.1\r\n\r\n") },
		{ MSG("POST /p HTTP/1.1\r\nCONTENT-LENGTH: 3\r\n\r\nabc") },
		{ MSG("POST /p HTTP/1.1\r\ncontent\rlength: 3\r\n\r\nabc") },
		{ MSG("POST /p HTTP/1.1\r\ncontent\x0dlength: 3\r\nContent-Type: a\r\n\r\n") },
		{ MSG("POST /p HTTP/1.1\r\nContent-Lengthy: 3\r\nContent-Length\0: 1\r\n\r\nz") },
		{ MSG("POST /p HTTP/1.1\r\nTRANSFER-encoding: chunked\r\n\r\n0\r\n\r\n") },
		{ MSG("POST /p HTTP/1.1\r\ntransfer\x00encoding: chunked\r\n\r\n") },
		{ MSG("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 204 No "
		      "Content\r\n\r\n") },
		{ MSG("HTTP/1.1 503 Unavailable\r\nX-Error-Claim: unclaimed\r\nContent-Length: "
		      "0\r\n\r\n") },
		{ MSG("HTTP/1.1 503 x\r\nx\x2d"
		      "error-claim: claimed\r\nx-error\x0d"
		      "claim: u\r\n\r\n") },
		{ MSG("HTTP/1.1 2x0 OK\r\n\r\n") },
		{ MSG("HTTP/1.1  200 OK\r\n\r\n") },
		{ MSG("HTTP/1.0 099 Low\r\n\r\n") },
		{ MSG("HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx") },
		{ MSG("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 "
		      "OK\r\ncontent-length:1\r\n\r\n!") },
		/* Whole lines at once (http_line_skip): lengths around the words, bare LFs. */
		{ MSG("GET / HTTP/1.1\r\nAbcdefg\r\nAbcdefgh\nAbcdefghi\r\nA: 1234567\r\n\r\n") },
		{ MSG("GET / HTTP/1.1\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) "
		      "AppleWebKit/537.36 "
		      "(KHTML, like Gecko) Chrome/120.0 Safari/537.36\r\nHost: x\r\n\r\n") },
		{ MSG("GET / HTTP/1.1\r\nX-Odd: a\rb\r\r\nX-Nul: \0\0\r\n :folded\r\n\r\n") },
		{ MSG("HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sun, 29 Nov 2026 22:08:37 "
		      "GMT\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n") },
		/* A Content-Length line at once (http_length_line), its near misses, a head's end. */
		{ MSG("HTTP/1.0 200 OK\r\nContent-type: text/html\r\nContent-Length: "
		      "123\r\n\r\n") },
		{ MSG("POST /p HTTP/1.1\r\ncontent-length: 999999\r\nCONTENT-LENGTH: "
		      "1234567\r\n\r\n") },
		/* Lines whose names begin as ours do (http_name_ruled_out). */
		{ MSG("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Range: x\r\n"
		      "Content-Encoding: gzip\r\nContent-Lengthxyz: 5\r\nX-Error-Code: 1\r\n"
		      "X-Error-Claimx: u\r\nTransfer-Foo: x\r\nContent-Abcdefghij\n"
		      "Content-Abcdefghijk\r\nContent-Ty\0pe: x\r\nContent-Length: 2\r\n\r\nok") },
		{ MSG("HTTP/1.1 200 OK\r\nContent-Abcdefghij\n") },
		/* The names read with HTTP_F_IDS, and names that begin as they do. */
		{ MSG("GET /x HTTP/1.1\r\nUser-Agent: Mozilla/5.0 (X11) Gecko/20100101\r\n"
		      "traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n"
		      "x-request-id: 9b1d\r\nX-B3-TraceId: 463ac35c9f6413ad\r\n\r\n") },
		{ MSG("GET /x HTTP/1.1\r\nUser-Agentx: a\r\nUser-Ag: b\r\nTraceparentxyz: c\r\n"
		      "X-Request-Idx: d\r\nX-B3-TraceIdentifier: e\r\nUSER\rAGENT: f\r\n"
		      "x-b3-tra\0ceid: g\r\nuser-agent:\r\n\r\n") },
		{ MSG("HTTP/1.1 200 OK\r\nContent-Length:  5\r\n"
		      "Content-Length: 5\nContent-Length: 5 \r\n"
		      "Content-Length: \r\nContent-Length: 0a\r\n"
		      "Content-Length:5\r\n\r\nhello") },
	};
	static __u8 buf[RAND_MAX_LEN];
	struct http_framer fast, slow;
	struct trace tf, ts;
	int iter, bad = 0, bad_iter = -1;
	size_t i, len;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u8 kind = strncmp(cases[i].s, "HTTP/", 5) ? REQ : RESP;
		int seek;

		for (seek = 0; seek < 4; seek++) {
			memset(&tf, 0, sizeof(tf));
			memset(&ts, 0, sizeof(ts));
			http_framer_init(&fast, kind, seek & 1);
			http_framer_init(&slow, kind, seek & 1);
			/* And again reading ids and user agents. */
			if (seek & 2)
				fast.flags = slow.flags = fast.flags | HTTP_F_IDS;
			http_feed(&fast, (const __u8 *)cases[i].s, cases[i].len, on_event, &tf);
			feed_bytes(&slow, (const __u8 *)cases[i].s, cases[i].len, &ts);
			ASSERT_TRUE(same_trace(&tf, &ts) && !memcmp(&fast, &slow, sizeof(fast)),
				    cases[i].s);
		}
	}
	/* A skipped line that would pass the head's limit: both paths fail it the same. */
	for (i = 0; i < 3; i++) {
		static const char line[] = "Accept: text/html\r\n";

		memset(&tf, 0, sizeof(tf));
		memset(&ts, 0, sizeof(ts));
		http_framer_init(&fast, REQ, 0);
		http_framer_init(&slow, REQ, 0);
		http_feed(&fast, (const __u8 *)"GET / HTTP/1.1\r\n", 16, on_event, &tf);
		feed_bytes(&slow, (const __u8 *)"GET / HTTP/1.1\r\n", 16, &ts);
		/* The line's 19 bytes end one before, at, and one past the limit. */
		fast.head = slow.head = HTTP_MAX_HEAD - 20 + (__u32)i;
		http_feed(&fast, (const __u8 *)line, sizeof(line) - 1, on_event, &tf);
		feed_bytes(&slow, (const __u8 *)line, sizeof(line) - 1, &ts);
		ASSERT_TRUE(same_trace(&tf, &ts) && !memcmp(&fast, &slow, sizeof(fast)),
			    "a line at the head's limit");
		ASSERT_EQ(fast.state, i < 2 ? HS_HDR_LINE : HS_LOST, "the limit, exactly");
	}
	rng = 0x243f6a8885a308d3ULL;
	for (iter = 0; iter < 20000; iter++) {
		__u8 kind = rnd_below(2), seek = rnd_below(4) == 0;

		rnd_message(kind, buf, &len);
		memset(&tf, 0, sizeof(tf));
		for (i = 0; i < TRACE_MSGS; i++)
			tf.answer[i] = rnd_below(4) == 0 ? HTTP_M_HEAD : 0;
		ts = tf;
		http_framer_init(&fast, kind, seek);
		http_framer_init(&slow, kind, seek);
		if (rnd_below(2))
			fast.flags = slow.flags = fast.flags | HTTP_F_IDS;
		http_feed(&fast, buf, len, on_event, &tf);
		feed_bytes(&slow, buf, len, &ts);
		if ((!same_trace(&tf, &ts) || memcmp(&fast, &slow, sizeof(fast))) && !bad++)
			bad_iter = iter;
	}
	if (!ASSERT_EQ(bad, 0, "random streams where the fast paths disagree"))
		printf("first at iteration %d\n", bad_iter);
}
