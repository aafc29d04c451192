// SPDX-License-Identifier: GPL-2.0
/*
 * The PostgreSQL framer (headers/pgwire_parse.h) over the client's side of
 * a connection: the login (startup, authentication, its refusal), simple
 * queries, extended-protocol batches up to their Sync and pipelined, errors
 * and the ReadyForQuery that ends their call, COPY, the SSLRequest and
 * GSSENCRequest answers, CancelRequest, the connection's end with calls
 * pending, lengths that lie and type bytes no message has; the same
 * events whatever the split. Exchanges are written in a small notation
 * (msgs()); then conversations recorded from a real PostgreSQL 15 with
 * psql and pgbench (tests/unit/vectors/README).
 */
#include <stdlib.h>
#include <string.h>

#include "pgwire_parse.h"
#include "test_progs.h"
#include "wire_trace.h"

static struct pg_framer fr;
static struct wire_trace tr;

static void init(void *f)
{
	pg_framer_init(f);
}

static const struct wire_subject subject = { &pg_ops, &fr, init };

static size_t put32(char *out, __u32 v)
{
	out[0] = v >> 24;
	out[1] = v >> 16;
	out[2] = v >> 8;
	out[3] = v;
	return 4;
}

/* A message: its type byte, its length (4 + n, or len when not 0), n body bytes. */
static size_t put_msg(char *out, char type, const char *body, size_t n, __u32 len)
{
	out[0] = type;
	put32(out + 1, len ? len : 4 + n);
	if (body)
		memcpy(out + 5, body, n);
	else
		memset(out + 5, 'x', n);
	return 5 + (body || !len ? n : 0);
}

/*
 * Bytes from a notation, space-separated: "startup" (a startup message),
 * "sslreq", "gssreq", "cancel"; "code=N" (a startup-form message of code
 * N), "startup=L", "sslreq=L" (claiming L bytes); "'C" one raw byte
 * C; "X" a message of type X with a body as a server sends it ('Z': idle,
 * 'E': an error, 'R': AuthenticationOk, others 2 bytes); "X#N" with N body
 * bytes; "X=L" claiming L bytes, and no body. Returns the length.
 */
static size_t msgs(char *out, const char *spec)
{
	static const char err[] = "SERROR\0VERROR\0C42P01\0Mrelation does not exist\0\0";
	char buf[512], *tok, *save;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '='), *hash = strchr(tok, '#');

		if (!strcmp(tok, "startup")) {
			static const char body[] = "user\0postgres\0database\0postgres\0\0";

			n += put32(out + n, 8 + sizeof(body) - 1);
			n += put32(out + n, PG_CODE_STARTUP);
			memcpy(out + n, body, sizeof(body) - 1);
			n += sizeof(body) - 1;
		} else if (!strncmp(tok, "startup=", 8)) {
			n += put32(out + n, strtoul(eq + 1, NULL, 0));
			n += put32(out + n, PG_CODE_STARTUP);
		} else if (!strncmp(tok, "sslreq=", 7)) {
			n += put32(out + n, strtoul(eq + 1, NULL, 0));
			n += put32(out + n, PG_CODE_SSL);
		} else if (!strcmp(tok, "sslreq") || !strcmp(tok, "gssreq")) {
			n += put32(out + n, 8);
			n += put32(out + n, tok[0] == 's' ? PG_CODE_SSL : PG_CODE_GSSENC);
		} else if (!strcmp(tok, "cancel")) {
			n += put32(out + n, 16);
			n += put32(out + n, PG_CODE_CANCEL);
			n += put32(out + n, 1234);
			n += put32(out + n, 5678);
		} else if (!strncmp(tok, "code=", 5)) {
			n += put32(out + n, 8);
			n += put32(out + n, strtoul(eq + 1, NULL, 0));
		} else if (tok[0] == '\'') {
			out[n++] = tok[1];
		} else if (hash) {
			n += put_msg(out + n, tok[0], NULL, strtoul(hash + 1, NULL, 0), 0);
		} else if (eq) {
			n += put_msg(out + n, tok[0], NULL, 0, strtoul(eq + 1, NULL, 0));
		} else if (tok[0] == 'Z') {
			n += put_msg(out + n, 'Z', "I", 1, 0);
		} else if (tok[0] == 'E') {
			n += put_msg(out + n, 'E', err, sizeof(err) - 1, 0);
		} else if (tok[0] == 'R') {
			n += put_msg(out + n, 'R', "\0\0\0\0", 4, 0);
		} else {
			n += put_msg(out + n, tok[0], "ab", 2, 0);
		}
	}
	return n;
}

struct pcase {
	const char *name, *c, *s;
	unsigned int starts, ok, err, reset, errors, opaque;
};

#define LOGIN_C "startup "
#define LOGIN_S "R S S K Z "

static const struct pcase pcases[] = {
	{ "login_and_query", LOGIN_C "Q", LOGIN_S "T D D C Z", 2, 2, 0, 0, 0, 0 },
	{ "login_refused", "startup p", "R#8 E", 1, 0, 1, 0, 0, 0 },
	{ "login_sasl", "startup p p Q", "R#20 R#50 R#40 R S K Z C Z", 2, 2, 0, 0, 0, 0 },
	{ "query_error", LOGIN_C "Q Q", LOGIN_S "E Z T D C Z", 3, 2, 1, 0, 0, 0 },
	{ "notice_not_error", LOGIN_C "Q", LOGIN_S "N C N Z", 2, 2, 0, 0, 0, 0 },
	{ "extended_batch", LOGIN_C "P B D E S", LOGIN_S "1 2 T D C Z", 2, 2, 0, 0, 0, 0 },
	{ "extended_pipeline", LOGIN_C "P B D E S P B D E S B E S S",
	  LOGIN_S "1 2 T D C Z 1 E Z 2 C Z Z", 5, 4, 1, 0, 0, 0 },
	{ "extended_flush", LOGIN_C "P H B E H S", LOGIN_S "1 2 C Z", 2, 2, 0, 0, 0, 0 },
	{ "function_call", LOGIN_C "F", LOGIN_S "V Z", 2, 2, 0, 0, 0, 0 },
	{ "copy_in", LOGIN_C "Q d#100 d#100 c", LOGIN_S "G C Z", 2, 2, 0, 0, 0, 0 },
	{ "copy_out", LOGIN_C "Q", LOGIN_S "H d#70000 d c C Z", 2, 2, 0, 0, 0, 0 },
	{ "notification_not_reply", LOGIN_C "Q", LOGIN_S "A C Z A", 2, 2, 0, 0, 0, 0 },
	{ "ssl_accepted", "sslreq", "'S", 0, 0, 0, 0, 0, 1 },
	{ "gss_accepted", "gssreq", "'G", 0, 0, 0, 0, 0, 1 },
	{ "ssl_refused", "sslreq startup Q", "'N " LOGIN_S "C Z", 2, 2, 0, 0, 0, 0 },
	{ "ssl_old_server_error", "sslreq", "E", 0, 0, 0, 0, 0, 0 },
	{ "cancel", "cancel", "", 0, 0, 0, 0, 0, 0 },
	{ "close_pending", LOGIN_C "Q Q Q", LOGIN_S "C Z D", 4, 2, 0, 2, 0, 0 },
	{ "fatal_then_close", LOGIN_C "Q", LOGIN_S "E", 2, 1, 1, 0, 0, 0 },
	{ "terminate", LOGIN_C "Q X", LOGIN_S "C Z", 2, 2, 0, 0, 0, 0 },
	/* Hostile: each loses framing, counted; the calls pending stay unanswered. */
	{ "length_below_4", LOGIN_C "Q=3", LOGIN_S, 1, 0, 0, 0, 1, 0 },
	{ "length_above_1g", LOGIN_C "Q", LOGIN_S "D=1073741829", 2, 1, 0, 0, 1, 0 },
	{ "length_2_40_wraps", LOGIN_C "Q", LOGIN_S "D=0xffffffff", 2, 1, 0, 0, 1, 0 },
	{ "startup_too_long", "startup=10001", "", 0, 0, 0, 0, 1, 0 },
	{ "startup_too_short", "startup=7", "", 0, 0, 0, 0, 1, 0 },
	{ "protocol_2", "code=0x20000", "", 0, 0, 0, 0, 1, 0 },
	{ "ssl_length_lies", "sslreq=12 'x 'x 'x 'x", "", 0, 0, 0, 0, 1, 0 },
	{ "ready_length_lies", LOGIN_C "Q", LOGIN_S "Z=6", 2, 1, 0, 0, 1, 0 },
	{ "unknown_server_type", LOGIN_C "Q", LOGIN_S "x", 2, 1, 0, 0, 1, 0 },
	{ "unknown_client_type", LOGIN_C "y", LOGIN_S, 1, 0, 0, 0, 1, 0 },
	{ "ready_to_nothing", LOGIN_C "Q", LOGIN_S "C Z Z", 2, 2, 0, 0, 1, 0 },
	{ "ssl_answer_junk", "sslreq", "'x", 0, 0, 0, 0, 1, 0 },
};

void test_pgwire_parse(void)
{
	static struct wire_case cases[sizeof(pcases) / sizeof(pcases[0])];
	static char cbuf[sizeof(cases) / sizeof(cases[0])][1024];
	static char *sbuf[sizeof(cases) / sizeof(cases[0])];
	unsigned int i, n = sizeof(pcases) / sizeof(pcases[0]);

	for (i = 0; i < n; i++) {
		const struct pcase *p = &pcases[i];

		sbuf[i] = malloc(1 << 17);
		if (!ASSERT_OK_PTR(sbuf[i], "malloc"))
			return;
		cases[i] = (struct wire_case){ .name = p->name,
					       .c = cbuf[i],
					       .clen = msgs(cbuf[i], p->c),
					       .s = sbuf[i],
					       .slen = msgs(sbuf[i], p->s),
					       .starts = p->starts,
					       .ok = p->ok,
					       .err = p->err,
					       .reset = p->reset,
					       .errors = p->errors,
					       .opaque = p->opaque };
	}
	wire_check_cases(&subject, cases, n);
	for (i = 0; i < n; i++)
		free(sbuf[i]);
}

/* The login ends first and says so; the calls after it are answered in order. */
void test_pgwire_order(void)
{
	static const __u8 want[] = { WIRE_OK, WIRE_CALLEE_ERROR, WIRE_CALLEE_ERROR, WIRE_OK };
	static char c[1024], s[1024];
	size_t clen = msgs(c, LOGIN_C "P B E S Q B E S"), slen;
	unsigned int i, k = 0;

	slen = msgs(s, LOGIN_S);
	/* Stepped by hand so the login flag is seen at its end. */
	pg_framer_init(&fr);
	pg_feed(&fr, WIRE_TO_SERVER, (const __u8 *)c, clen, NULL, NULL);
	ASSERT_EQ(fr.calls.pending, 4, "login and three calls pending");
	pg_feed(&fr, WIRE_TO_CLIENT, (const __u8 *)s, slen, NULL, NULL);
	ASSERT_EQ(fr.login, 1, "the login ended");
	ASSERT_EQ(fr.phase, PG_PH_READY, "ready");
	slen = msgs(s, LOGIN_S "1 2 E Z E Z 2 C Z");
	wire_trace_pair(&subject, c, clen, s, slen, 0, 0, 0, &tr);
	for (i = 0; i < tr.n; i++) {
		if (!(tr.ev[i].ev & WIRE_EV_CALL_END))
			continue;
		if (k < sizeof(want))
			ASSERT_EQ(tr.ev[i].outcome, want[k], "outcome in order");
		k++;
	}
	ASSERT_EQ(k, 4, "four answers");
	ASSERT_EQ(fr.login, 0, "the last call ended was no login");
}

/* A 1 MiB DataRow costs one skip, not a step per byte. */
void test_pgwire_skip_by_length(void)
{
	static char c[256];
	size_t clen = msgs(c, LOGIN_C "Q"), len = 5 + (1u << 20) + 6;
	__u8 *buf = malloc(len);
	__u32 ev = 0;
	__u64 off, steps = 0;

	if (!ASSERT_OK_PTR(buf, "malloc"))
		return;
	put_msg((char *)buf, 'D', NULL, 1u << 20, 0);
	put_msg((char *)buf + 5 + (1u << 20), 'Z', "I", 1, 0);
	pg_framer_init(&fr);
	fr.phase = PG_PH_READY;
	pg_feed(&fr, WIRE_TO_SERVER, (const __u8 *)c + clen - 5 - 2, 5 + 2, NULL, NULL);
	for (off = 0; off < len; steps++) {
		__u32 e = 0;

		if (pg_skipping(&fr, WIRE_TO_CLIENT))
			off += pg_skip(&fr, WIRE_TO_CLIENT, len - off, &e);
		else
			e = pg_step(&fr, WIRE_TO_CLIENT, buf[off++]);
		ev |= e;
	}
	ASSERT_LT(steps, 32, "steps for a 1 MiB row");
	ASSERT_TRUE(ev & WIRE_EV_CALL_END, "the ReadyForQuery ended the call");
	ASSERT_EQ(fr.calls.outcome, WIRE_OK, "ok");
	free(buf);
}

void test_pgwire_detect(void)
{
	static const struct {
		const char *spec;
		int yes;
	} t[] = {
		{ "startup", 1 }, { "sslreq", 1 },	   { "gssreq", 1 },
		{ "cancel", 1 },  { "code=0x20000", 0 },   { "startup=10001", 0 },
		{ "Q", 0 },	  { "'G 'E 'T '  '/", 0 }, { "code=80877103 'x", 1 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char b[128];
		size_t n = msgs(b, t[i].spec);
		__u32 got;
		__u64 w = wire_first_word(b, n, &got);

		ASSERT_EQ(pg_detect(w, got), t[i].yes, t[i].spec);
	}
}

/*
 * Recorded from PostgreSQL 15 (tests/unit/vectors/README): psql over TLS
 * (opaque after the 'S'); psql refused TLS ('N'), SCRAM login, 13 queries
 * of which 5 fail (a duplicate key, twice; no such table; division by zero
 * and the query after it in the failed transaction); pgbench's extended
 * protocol and pipelines; pgbench's prepared statements with a pipeline
 * that fails, and the client gone after it; a wrong password; a query
 * ended by pg_terminate_backend (a FATAL error, then the close: the call
 * failed by the error, not a reset).
 */
static const struct wire_vector_case vectors[] = {
	{ "pg_ssl.bin", 0, 0, 0, 0, 1, 0 },	 { "pg_simple.bin", 14, 9, 5, 0, 0, 0 },
	{ "pg_extended.bin", 9, 9, 0, 0, 0, 0 }, { "pg_pipeline_error.bin", 7, 6, 1, 0, 0, 0 },
	{ "pg_badpass.bin", 1, 0, 1, 0, 0, 0 },	 { "pg_terminated.bin", 3, 2, 1, 0, 0, 0 },
};

void test_pgwire_vectors(void)
{
	wire_check_vectors(&subject, vectors, sizeof(vectors) / sizeof(vectors[0]));
}
