// SPDX-License-Identifier: GPL-2.0
/*
 * The Redis framer (headers/resp_parse.h) over the client's side of a
 * connection: commands (arrays and inline lines) as calls, replies paired
 * with them in order, the outcome of each (error replies, RESP3 blob
 * errors, an error inside EXEC's array), RESP3 pushes and attributes that
 * answer nothing, the commands after which replies stop pairing (opaque),
 * the connection's end with calls pending, the hostile cases (a bulk of
 * 2^40 bytes, a count too large, nesting too deep, a line without its CR,
 * a reply to nothing), and the same events whatever the split of the
 * bytes. Then conversations recorded from a real redis-server
 * (tests/unit/vectors/README), fed as recorded, a byte at a time and in
 * odd pieces.
 */
#include <stdlib.h>
#include <string.h>

#include "resp_parse.h"
#include "test_progs.h"
#include "wire_trace.h"

static struct resp_framer fr;
static struct wire_trace tr;

static void init(void *f)
{
	resp_framer_init(f);
}

static const struct wire_subject subject = { &resp_ops, &fr, init };

#define S(x) (x), sizeof(x) - 1

#define GET_K "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
#define SET_K "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"

static const struct wire_case cases[] = {
	{ "get", S(GET_K), S("$1\r\nv\r\n"), 1, 1, 0, 0, 0, 0, 0, NULL, 0 },
	{ "get_null", S(GET_K), S("$-1\r\n"), 1, 1, 0, 0, 0, 0, 0, NULL, 0 },
	{ "error", S(GET_K), S("-WRONGTYPE Operation against a key\r\n"), 1, 0, 1, 0, 0, 0, 0, NULL,
	  0 },
	{ "pipeline", S(SET_K GET_K GET_K SET_K), S("+OK\r\n$1\r\nv\r\n-ERR x\r\n:12\r\n"), 4, 3, 1,
	  0, 0, 0, 0, NULL, 0 },
	{ "pipeline_order", S(GET_K GET_K GET_K), S("-ERR a\r\n$0\r\n\r\n-ERR b\r\n"), 3, 1, 2, 0,
	  0, 0, 0, NULL, 0 },
	{ "array", S("*4\r\n$6\r\nLRANGE\r\n$1\r\nl\r\n$1\r\n0\r\n$2\r\n-1\r\n"),
	  S("*3\r\n$1\r\na\r\n*2\r\n:1\r\n$-1\r\n*0\r\n"), 1, 1, 0, 0, 0, 0, 0, NULL, 0 },
	{ "exec_nested_error", S("*1\r\n$4\r\nEXEC\r\n"), S("*2\r\n+OK\r\n-ERR not an integer\r\n"),
	  1, 0, 0, 1, 0, 0, 0, NULL, 0 },
	{ "resp3_types", S(GET_K GET_K GET_K GET_K GET_K GET_K),
	  S("%1\r\n+a\r\n~2\r\n:1\r\n#t\r\n_\r\n,3.14\r\n(12345678901234567890\r\n"
	    "=7\r\ntxt:abc\r\n!9\r\nERR blob!\r\n"),
	  6, 5, 1, 0, 0, 0, 0, NULL, 0 },
	{ "push_not_reply", S(GET_K GET_K),
	  S(">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n$1\r\nv\r\n"
	    ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n-ERR y\r\n"),
	  2, 1, 1, 0, 0, 0, 0, NULL, 0 },
	{ "attribute_not_reply", S(GET_K),
	  S("|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n*2\r\n|1\r\n+ttl\r\n:3\r\n:1\r\n:"
	    "2\r\n"),
	  1, 1, 0, 0, 0, 0, 0, NULL, 0 },
	{ "empty_attribute", S(GET_K), S("|0\r\n+OK\r\n"), 1, 1, 0, 0, 0, 0, 0, NULL, 0 },
	{ "inline", S("PING\r\nset a b\r\n\r\n   \r\n"), S("+PONG\r\n+OK\r\n"), 2, 2, 0, 0, 0, 0, 0,
	  NULL, 0 },
	{ "no_command", S("*0\r\n*-1\r\n" GET_K), S("$1\r\nv\r\n"), 1, 1, 0, 0, 0, 0, 0, NULL, 0 },
	{ "close_pending", S(GET_K GET_K GET_K), S("$1\r\nv\r\n$2\r\nv"), 3, 1, 0, 0, 2, 0, 0, NULL,
	  0 },
	{ "subscribe", S(GET_K "*2\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n"),
	  S("$1\r\nv\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n"), 2, 1, 0, 0, 0, 0, 1, NULL,
	  0 },
	{ "subscribe_after_pipeline",
	  S(GET_K GET_K "*2\r\n$9\r\nSUBSCRIBE\r\n$1\r\nc\r\n*1\r\n$4\r\nPING\r\nxx"),
	  S("$1\r\nv\r\n-ERR e\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n"), 3, 1, 1, 0, 0, 0, 1,
	  NULL, 0 },
	{ "psubscribe", S("*2\r\n$10\r\nPSUBSCRIBE\r\n$2\r\nc*\r\n"), S("*3\r\n"), 1, 0, 0, 0, 0, 0,
	  1, NULL, 0 },
	{ "monitor_inline", S("monitor\r\n"), S("+OK\r\n+123 \"get\"\r\n"), 1, 0, 0, 0, 0, 0, 1,
	  NULL, 0 },
	{ "long_name", S("*1\r\n$12\r\nSUBSCRIBEXYZ\r\n"), S("-ERR unknown\r\n"), 1, 0, 1, 0, 0, 0,
	  0, NULL, 0 },
	/* Hostile: each loses framing, counted, and the calls pending stay unanswered. */
	{ "bulk_2_40", S(GET_K), S("$1099511627776\r\nxxxx"), 1, 0, 0, 0, 0, 1, 0, NULL, 0 },
	{ "bulk_too_long", S(GET_K), S("$536870913\r\n"), 1, 0, 0, 0, 0, 1, 0, NULL, 0 },
	{ "count_too_large", S(GET_K), S("*268435457\r\n"), 1, 0, 0, 0, 0, 1, 0, NULL, 0 },
	{ "client_bulk_2_40", S("*1\r\n$1099511627776\r\n"), S(""), 1, 0, 0, 0, 0, 1, 0, NULL, 0 },
	{ "too_deep", S(GET_K),
	  S("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*"
	    "1\r\n*1\r\n*1\r\n:1\r\n"),
	  1, 0, 0, 0, 0, 1, 0, NULL, 0 },
	{ "deep_enough", S(GET_K),
	  S("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*"
	    "1\r\n*1\r\n:1\r\n"),
	  1, 1, 0, 0, 0, 0, 0, NULL, 0 },
	{ "streamed", S(GET_K), S("$?\r\n;4\r\nHell\r\n;0\r\n"), 1, 0, 0, 0, 0, 1, 0, NULL, 0 },
	{ "bare_lf", S(GET_K), S("+OK\n"), 1, 0, 0, 0, 0, 1, 0, NULL, 0 },
	{ "negative_length", S(GET_K), S("$-2\r\n"), 1, 0, 0, 0, 0, 1, 0, NULL, 0 },
	{ "no_crlf_after_bulk", S(GET_K), S("$1\r\nvv\r\n"), 1, 0, 0, 0, 0, 1, 0, NULL, 0 },
	{ "junk_type", S(GET_K), S("HTTP/1.1 200 OK\r\n"), 1, 0, 0, 0, 0, 1, 0, NULL, 0 },
	{ "reply_to_nothing", S(GET_K), S("+OK\r\n+OK\r\n"), 1, 1, 0, 0, 0, 1, 0, NULL, 0 },
	{ "client_not_bulk", S("*1\r\n:1\r\n"), S(""), 1, 0, 0, 0, 0, 1, 0, NULL, 0 },
};

void test_resp_parse(void)
{
	wire_check_cases(&subject, cases, sizeof(cases) / sizeof(cases[0]));
}

/* Replies in the order of their commands: the outcomes in sequence. */
void test_resp_pipeline_order(void)
{
	static const char c[] = GET_K GET_K GET_K GET_K;
	static const char s[] = "+OK\r\n-ERR a\r\n*1\r\n-ERR in\r\n!3\r\nERR\r\n";
	static const __u8 want[] = { WIRE_OK, WIRE_CALLEE_ERROR, WIRE_PARTIAL, WIRE_CALLEE_ERROR };
	unsigned int i, k = 0;

	wire_trace_pair(&subject, S(c), S(s), 0, 0, 0, &tr);
	for (i = 0; i < tr.n; i++) {
		if (!(tr.ev[i].ev & WIRE_EV_CALL_END))
			continue;
		if (k < sizeof(want))
			ASSERT_EQ(tr.ev[i].outcome, want[k], "outcome in order");
		ASSERT_EQ(tr.ev[i].pending, 3 - k, "pending after each answer");
		k++;
	}
	ASSERT_EQ(k, 4, "four answers");
}

/* A 1 MiB bulk costs one skip per chunk, not a step per byte. */
void test_resp_skip_by_length(void)
{
	static const char hdr[] = "$1048576\r\n";
	size_t len = sizeof(hdr) - 1 + (1u << 20) + 2;
	__u8 *buf = malloc(len);
	struct resp_framer f;
	__u32 ev = 0;
	__u64 off, steps = 0, n;

	if (!ASSERT_OK_PTR(buf, "malloc"))
		return;
	memcpy(buf, hdr, sizeof(hdr) - 1);
	memset(buf + sizeof(hdr) - 1, 'x', 1u << 20);
	memcpy(buf + len - 2, "\r\n", 2);
	resp_framer_init(&f);
	resp_feed(&f, WIRE_TO_SERVER, (const __u8 *)S(GET_K), NULL, NULL);
	for (off = 0; off < len;) {
		if (resp_skipping(&f, WIRE_TO_CLIENT)) {
			n = resp_skip(&f, WIRE_TO_CLIENT, len - off, &ev);
			off += n;
		} else {
			ev |= resp_step(&f, WIRE_TO_CLIENT, buf[off++]);
		}
		steps++;
	}
	ASSERT_LT(steps, 64, "steps for a 1 MiB reply");
	ASSERT_TRUE(ev & WIRE_EV_CALL_END, "the reply ended the call");
	ASSERT_EQ(f.calls.outcome, WIRE_OK, "ok");
	free(buf);
}

void test_resp_detect(void)
{
	static const char *const yes[] = { "*1\r\n$4\r\n", "*3\r\n$3\r\nSET", "*12345\r\n" };
	static const char *const no[] = {
		"GET / HTTP/1.1\r\n", "*0\r\n", "*1", "*123456\r\n", "+OK\r\n",
		"*1\n$4\r\n",	      "*a\r\n"
	};
	unsigned int i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		__u32 n;
		__u64 w = wire_first_word(yes[i], strlen(yes[i]), &n);

		ASSERT_TRUE(resp_detect(w, n), yes[i]);
	}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		__u32 n;
		__u64 w = wire_first_word(no[i], strlen(no[i]), &n);

		ASSERT_FALSE(resp_detect(w, n), no[i]);
	}
}

/*
 * Conversations recorded from redis-server 7 (tests/unit/vectors/README):
 * every call answered, in the outcomes redis-cli printed, whatever the
 * pieces. redis_resp2 starts with redis-cli's COMMAND DOCS, a reply nested
 * 12 deep; redis_resp3 has HELLO 3, a map, and an invalidation push (CLIENT
 * TRACKING) between replies. redis_killed ends with two calls unanswered
 * (CLIENT KILL while a BLPOP waits).
 */
static const struct wire_vector_case vectors[] = {
	{ "redis_resp2.bin", 16, 13, 2, 1, 0, 0 },
	{ "redis_resp3.bin", 10, 9, 1, 0, 0, 0 },
	{ "redis_pipe.bin", 203, 201, 2, 0, 0, 0 },
	{ "redis_killed.bin", 4, 2, 0, 0, 0, 2 },
};

void test_resp_vectors(void)
{
	wire_check_vectors(&subject, vectors, sizeof(vectors) / sizeof(vectors[0]));
}
