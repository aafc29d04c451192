// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's framing loop against byte-by-byte stepping: scan_window()
 * (bpf/scan.c, the code tp_io_x runs, compiled into bpf/parsebench.bpf.c)
 * run with BPF_PROG_TEST_RUN over message heads cut at every length, so
 * that the window ends at every byte of them, and over random heads: start
 * lines, a Content-Length line and a head's end, each most often in the
 * form a one-step path takes, else near it. Where the kernel's loop stops, the framer it
 * leaves and the events it saw must be exactly what http_step() gives over
 * the same bytes. The user-space twin of the fast paths (http_feed) has its
 * own test (tests/unit/test_http_parse.c); this one covers what only the
 * kernel does: words loaded from the window, and loaded back from its end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "http_parse.h"
#include "parsebench.skel.h"
#include "test_progs.h"

static int runs;

/* One run of the kernel's loop over msg[0, len): 0, or -1 (the run failed). */
static int kernel_scan(struct parsebench_bpf *s, const char *msg, size_t len, __u8 kind, int seek)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = 1, .data_in = pkt, .data_size_in = sizeof(pkt));

	memset(s->bss->sample, 0, sizeof(s->bss->sample));
	memcpy(s->bss->sample, msg, len);
	s->bss->sample_len = len;
	s->bss->sample_kind = kind;
	s->bss->sample_seek = seek;
	s->bss->sample_gen++;
	runs++;
	if (bpf_prog_test_run_opts(bpf_program__fd(s->progs.parse_bench), &o) || o.retval)
		return -1;
	return 0;
}

/*
 * Does the kernel's run over msg[0, len) agree with stepping? NULL, or what
 * differs.
 */
static const char *scan_differs(struct parsebench_bpf *s, const char *msg, size_t len, __u8 kind,
				int seek)
{
	struct http_framer ref;
	__u32 pos, ev = 0, i;

	if (kernel_scan(s, msg, len, kind, seek))
		return "the test run failed";
	pos = s->bss->out_pos;
	if (pos > len)
		return "stopped past the bytes";
	http_framer_init(&ref, kind, seek);
	/* The benchmark's loop goes on after a resync, as stepping does. */
	for (i = 0; i < pos; i++)
		ev |= http_step(&ref, (__u8)msg[i]);
	if (memcmp(&ref, &s->bss->out_framer, sizeof(ref)))
		return "a different framer";
	if (ev != s->bss->out_events)
		return "different events";
	/* Stopped early: only at a body, a loss, or after events (its calls are bounded). */
	if (pos < len && !http_skipping(&ref) && !http_swallowing(&ref) && !ev)
		return "stopped inside a head";
	return NULL;
}

/* Every cut of msg, as both kinds' framers would see it when it is theirs. */
static void check_cuts(struct parsebench_bpf *s, const char *msg)
{
	__u8 kind = strncmp(msg, "HTTP/", 5) ? HTTP_KIND_REQUEST : HTTP_KIND_RESPONSE;
	size_t len = strlen(msg), cut;
	char what[160];
	int seek;

	for (seek = 0; seek < 2; seek++) {
		for (cut = 1; cut <= len; cut++) {
			const char *why = scan_differs(s, msg, cut, kind, seek);

			if (why) {
				snprintf(what, sizeof(what),
					 "%s (%zu of %zu bytes, seek %d): %.60s", why, cut, len,
					 seek, msg);
				ASSERT_TRUE(0, what);
				return;
			}
		}
	}
}

static __u64 rng = 0x9e3779b97f4a7c15ULL;

static __u32 rnd_below(__u32 n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (__u32)(rng % n);
}

/*
 * A Content-Length line, most often the form the one-step path takes, else
 * one near it: the name's case, the spaces, the digits' count, the line's
 * end, a byte changed.
 */
static size_t rnd_length_line(char *out)
{
	static const char *const names[] = {
		"Content-Length", "content-length", "CONTENT-LENGTH",
		"Content-Lengtx", "Content_Length", "Content-Lengths"
	};
	static const char *const seps[] = { ": ", ": ", ":", ":  ", ":\t", " : " };
	static const char *const ends[] = { "\r\n", "\r\n", "\n", " \r\n", "\r\r\n", "x\r\n" };
	size_t n = 0;
	__u32 digits = rnd_below(9), i;

	n += sprintf(out + n, "%s%s", names[rnd_below(3) ? 0 : rnd_below(6)],
		     seps[rnd_below(2) ? 0 : rnd_below(6)]);
	for (i = 0; i < digits; i++)
		out[n++] = '0' + rnd_below(10);
	n += sprintf(out + n, "%s", ends[rnd_below(2) ? 0 : rnd_below(6)]);
	if (!rnd_below(4))
		out[rnd_below(n)] = "0:\r\n \t9/;"[rnd_below(10)];
	out[n] = 0;
	return n;
}

void test_scan_window(void)
{
	static const char *const heads[] = {
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.0 200 OK\r\nServer: BaseHTTP/0.6 Python/3.11.2\r\nDate: Tue, 01 Dec 2026 "
		"19:33:56 GMT\r\nContent-type: text/html\r\nContent-Length: 123\r\n\r\n",
		"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sun, 29 Nov 2026 22:08:37 "
		"GMT\r\nContent-Type: application/octet-stream\r\nContent-Length: 3\r\n"
		"Connection: keep-alive\r\n\r\nabc",
		"HTTP/1.1 503 Unavailable\r\nX-Error-Claim: unclaimed\r\ncontent-length: "
		"999999\r\n\r\n",
		"HTTP/1.1 200 OK\r\nCONTENT-LENGTH: 1234567\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length:  5\r\nContent-Length:5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\nContent-Length: 5 \r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: \r\nTransfer-Encoding: "
		"chunked\r\n\r\n0\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nContent-Length: 000012\r\n\r\n",
		"POST /submit HTTP/1.1\r\nHost: 127.0.0.1:8001\r\nContent-Length: 19\r\n\r\n"
		"0123456789abcdefghi",
		"POST /p HTTP/1.1\r\nContent-Length: 2\r\n\r\nokGET /b HTTP/1.1\r\n\r\n",
		"GET /r/123 HTTP/1.1\r\nAccept-Encoding: identity\r\nHost: 127.0.0.1:8001\r\n"
		"User-Agent: Python-urllib/3.11\r\nConnection: close\r\n\r\n",
		"GET / HTTP/1.1\r\nAbcdefg\r\nAbcdefgh\nAbcdefghi\r\nA: 1234567\r\n\r\n",
		/* Start lines and a head's end at once, and their near misses. */
		"GET / HTTP/1.0\r\n\r\nGET /x HTTP/1.1\n\r\nGET /y HTTP/1.2\r\n\r\n",
		"GET /a HTTP/1.1 \r\n\r\nGET /b  HTTP/1.1\r\n\r\nGET /c HTTP/1.1\r\r\n\r\n",
		"HTTP/1.1 099 Low\r\n\r\nHTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 \r\n\r\nHTTP/1.0 2x0 OK\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n",
		"HTTP/1.1 204 Seven7\nX: y\r\n\r\nHTTP/1.1 304 Eight888\r\n\r\n",
		"HTTP/1.1 200 A reason phrase longer than sixty-four bytes, far longer than a word"
		"\r\nServer: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: y\r\n\r\r\n",
		/* Names that begin as ours do, and are not, or are. */
		"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Range: x\r\n"
		"Content-Encoding: gzip\r\nContent-Lengt: 5\r\nContent-Lengthxyz: 5\r\n\r\n",
		"HTTP/1.1 503 x\r\nX-Error-Code: 1\r\nX-Error-Claimx: claimed\r\nx-error-claim:"
		"claimed\r\nTransfer-Foo: x\r\nTransfer-Encodings: chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Abcdefghij\nContent-Abcdefghijk\r\nContent-Abcdefghi:"
		"\r\nContent-Ty\rpe: x\r\nContent-Ty\0pe: x\r\nContent-\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: "
		"chunked\r\n\r\n0\r\n\r\n",
	};
	struct parsebench_bpf *s;
	char msg[400], line[64], what[160];
	int iter, bad = 0;
	size_t i;

	if (!test__need_root())
		return;
	s = parsebench_bpf__open_and_load();
	if (!ASSERT_OK_PTR(s, "load the framing benchmark's programs"))
		return;
	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		check_cuts(s, heads[i]);
	for (iter = 0; iter < 4000 && !bad; iter++) {
		int resp = rnd_below(2);
		size_t n = 0, len;
		const char *why;

		static const char *const starts[] = {
			"HTTP/1.1 200 OK\r\n",	"HTTP/1.0 503 Service Unavailable\r\n",
			"HTTP/1.1 404 \r\n",	"HTTP/1.1 200\r\n",
			"POST /p HTTP/1.1\r\n", "PUT /a/much/longer/target?q=1 HTTP/1.0\r\n",
			"POST /p HTTP/1.1\n",	"POST /p HTTP/1.1 \r\n",
		};

		n += sprintf(msg, "%s", starts[rnd_below(4) + (resp ? 0 : 4)]);
		static const char *const others[] = {
			"Server: x\r\n",
			"Content-Type: text/html; charset=utf-8\r\n",
			"Content-Encoding: gzip\r\n",
			"X-Error-Code: 7\r\n",
			"Content-Abcdefghij\n",
			"Transfer-Encoding: chunked\r\n",
		};

		if (rnd_below(2))
			n += sprintf(msg + n, "%s", others[rnd_below(6)]);
		rnd_length_line(line);
		n += sprintf(msg + n, "%s", line);
		if (rnd_below(2))
			n += sprintf(msg + n, "Connection: keep-alive\r\n");
		n += sprintf(msg + n, "%s%s", rnd_below(4) ? "\r\n" : "\n",
			     rnd_below(2) ? "body" : "");
		/* Most often whole, else cut anywhere: the window ends there. */
		len = rnd_below(3) ? n : rnd_below(n) + 1;
		why = scan_differs(s, msg, len, resp ? HTTP_KIND_RESPONSE : HTTP_KIND_REQUEST,
				   !rnd_below(4));
		if (why) {
			bad++;
			snprintf(what, sizeof(what), "%s (%zu of %zu bytes): %s", why, len, n,
				 line);
			ASSERT_TRUE(0, what);
		}
	}
	ASSERT_EQ(bad, 0, "random heads where the kernel disagrees");
	printf("%d kernel runs compared with stepping\n", runs);
	parsebench_bpf__destroy(s);
}
