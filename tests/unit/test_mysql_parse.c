// SPDX-License-Identifier: GPL-2.0
/*
 * The MySQL/MariaDB framer (headers/mysql_parse.h) over the client's side
 * of a connection: the greeting, the login and its refusal (at the
 * greeting too), the TLS switch and what else makes the connection opaque,
 * commands answered by OK, ERR, result sets with and without
 * CLIENT_DEPRECATE_EOF, several result sets, an ERR after rows, prepared
 * statements, LOCAL INFILE, commands that have no answer, pipelined
 * commands, the connection's end with calls pending, hostile packets; the
 * same events whatever the split. Exchanges are written in a small
 * notation (pkts()); then conversations recorded from MariaDB 10.11 with
 * the mariadb client, PyMySQL and libmariadb's prepared statements
 * (tests/unit/vectors/README).
 */
#include <stdlib.h>
#include <string.h>

#include "mysql_parse.h"
#include "test_progs.h"
#include "wire_trace.h"

static struct mysql_framer fr;

static void init(void *f)
{
	mysql_framer_init(f);
}

static const struct wire_subject subject = { &mysql_ops, &fr, init };

/* A packet: its header (payload length n, or len when not 0; seq) and n payload bytes. */
static size_t put_pkt(__u8 *out, __u8 seq, const __u8 *p, size_t n, __u32 len)
{
	__u32 l = len ? len : n;

	out[0] = l;
	out[1] = l >> 8;
	out[2] = l >> 16;
	out[3] = seq;
	if (p)
		memcpy(out + 4, p, n);
	else
		memset(out + 4, 'x', n);
	return 4 + n;
}

#define CAPS_41 (MY_CLIENT_PROTOCOL_41 | MY_CLIENT_MYSQL)

/* A handshake response of flags caps, len bytes long (32: an SSLRequest). */
static size_t put_hs(__u8 *out, __u32 caps, size_t len)
{
	__u8 p[64] = { 0 };

	memcpy(p, &caps, 4);
	memcpy(p + 32, "app\0", 4);
	return put_pkt(out, 1, p, len, 0);
}

/*
 * Bytes from a notation, space-separated. The client's: "hs" (a handshake
 * response, classic EOFs), "hsd" (with CLIENT_DEPRECATE_EOF), "hs41"
 * (without CLIENT_PROTOCOL_41), "hsz" (compression), "ssl" (the SSLRequest),
 * "q" (COM_QUERY), "cmd:H" (command byte H, hex), "data" (a packet of
 * sequence 2: auth data, a file), "empty" (an empty packet of sequence 3).
 * The server's: "greet", "gerr" (an ERR greeting), "ok", "okm" (an OK
 * saying more results follow), "err", "eof", "eofm", "eofc" (a cursor
 * opened), "okt", "oktm" (an OK in place of an EOF, 0xfe), "cnt:N" (a
 * column count), "col", "row", "prep:C:P" (a prepare's OK), "infile",
 * "switch" (auth switch), "more" (auth more data), "big" (a row 16 MiB - 1
 * long, continued by "row"); "len=N" (a packet claiming N bytes, none
 * there), "cntfe" (a column count of eight bytes), "junk".
 */
static size_t pkts(__u8 *out, const char *spec)
{
	static const __u8 greet[] = "\x0a"
				    "10.11.19-MariaDB\0\x01\0\0\0abcdefgh\0\xfe\xf7\x2d\x02\0"
				    "\xff\x81\x15\0\0\0\0\0\0\x1d\0\0\0ijklmnopqrst\0"
				    "mysql_native_password";
	static const __u8 err[] = "\xff\x15\x04#28000Access denied";
	char buf[512], *tok, *save;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (!strcmp(tok, "hs"))
			n += put_hs(out + n, CAPS_41, 60);
		else if (!strcmp(tok, "hsd"))
			n += put_hs(out + n, CAPS_41 | MY_CLIENT_DEPRECATE_EOF, 60);
		else if (!strcmp(tok, "hs41"))
			n += put_hs(out + n, MY_CLIENT_MYSQL, 60);
		else if (!strcmp(tok, "hsz"))
			n += put_hs(out + n, CAPS_41 | MY_CLIENT_COMPRESS, 60);
		else if (!strcmp(tok, "ssl"))
			n += put_hs(out + n, CAPS_41 | MY_CLIENT_SSL, MY_SSL_REQUEST_LEN);
		else if (!strcmp(tok, "q"))
			n += put_pkt(out + n, 0, (const __u8 *)"\x03select 1", 9, 0);
		else if (!strncmp(tok, "cmd:", 4)) {
			__u8 c = strtoul(tok + 4, NULL, 16);

			n += put_pkt(out + n, 0, &c, 1, 0);
		} else if (!strcmp(tok, "data"))
			n += put_pkt(out + n, 2, NULL, 30, 0);
		else if (!strcmp(tok, "empty"))
			n += put_pkt(out + n, 3, NULL, 0, 0);
		else if (!strcmp(tok, "greet"))
			n += put_pkt(out + n, 0, greet, sizeof(greet) - 1, 0);
		else if (!strcmp(tok, "gerr"))
			n += put_pkt(out + n, 0, (const __u8 *)"\xff\x10\x04Too many connections",
				     23, 0);
		else if (!strcmp(tok, "ok"))
			n += put_pkt(out + n, 2, (const __u8 *)"\0\0\0\x02\0\0\0", 7, 0);
		else if (!strcmp(tok, "okm"))
			n += put_pkt(out + n, 2, (const __u8 *)"\0\x01\0\x0a\0\0\0", 7, 0);
		else if (!strcmp(tok, "okt"))
			n += put_pkt(out + n, 2, (const __u8 *)"\xfe\0\0\x02\0\0\0", 7, 0);
		else if (!strcmp(tok, "oktm"))
			n += put_pkt(out + n, 2, (const __u8 *)"\xfe\xfc\x10\x27\0\x0a\0\0\0", 9,
				     0);
		else if (!strcmp(tok, "err"))
			n += put_pkt(out + n, 2, err, sizeof(err) - 1, 0);
		else if (!strcmp(tok, "eof"))
			n += put_pkt(out + n, 3, (const __u8 *)"\xfe\0\0\x02\0", 5, 0);
		else if (!strcmp(tok, "eofm"))
			n += put_pkt(out + n, 3, (const __u8 *)"\xfe\0\0\x0a\0", 5, 0);
		else if (!strcmp(tok, "eofc"))
			n += put_pkt(out + n, 3, (const __u8 *)"\xfe\0\0\x42\0", 5, 0);
		else if (!strncmp(tok, "cnt:", 4)) {
			__u32 c = strtoul(tok + 4, NULL, 0);
			__u8 p[4] = { 0xfc, c, c >> 8 };

			n += c < 0xfb ? put_pkt(out + n, 1, (__u8 *)&c, 1, 0)
				      : put_pkt(out + n, 1, p, 3, 0);
		} else if (!strcmp(tok, "col"))
			n += put_pkt(out + n, 2,
				     (const __u8 *)"\x03"
						   "def\x01"
						   "d\x01t",
				     9, 0);
		else if (!strcmp(tok, "row"))
			n += put_pkt(out + n, 4,
				     (const __u8 *)"\x01"
						   "1\xfb",
				     3, 0);
		else if (!strncmp(tok, "prep:", 5)) {
			__u8 p[12] = { 0, 1, 0, 0, 0 };
			char *colon;
			__u32 c = strtoul(tok + 5, &colon, 0), q = strtoul(colon + 1, NULL, 0);

			p[5] = c;
			p[7] = q;
			n += put_pkt(out + n, 1, p, 12, 0);
		} else if (!strcmp(tok, "infile"))
			n += put_pkt(out + n, 1, (const __u8 *)"\xfb/tmp/f", 7, 0);
		else if (!strcmp(tok, "switch"))
			n += put_pkt(out + n, 2, (const __u8 *)"\xfemysql_native_password\0abc", 26,
				     0);
		else if (!strcmp(tok, "more"))
			n += put_pkt(out + n, 2, (const __u8 *)"\x01\x03", 2, 0);
		else if (!strcmp(tok, "big")) {
			n += put_pkt(out + n, 4, NULL, MY_MAX_PAYLOAD, 0);
			out[n - MY_MAX_PAYLOAD] =
				0xfe; /* a terminator's first byte, but too long */
		} else if (!strncmp(tok, "len=", 4))
			n += put_pkt(out + n, 1, NULL, 0, strtoul(tok + 4, NULL, 0));
		else if (!strcmp(tok, "cntfe"))
			n += put_pkt(out + n, 1, (const __u8 *)"\xfe\x01\0\0\0\0\0\0\0", 9, 0);
		else if (!strcmp(tok, "junk"))
			n += put_pkt(out + n, 1, (const __u8 *)"\x42", 1, 0);
	}
	return n;
}

/* pre: what the server says first, the greeting, before the client writes. */
struct mcase {
	const char *name, *pre, *c, *s;
	unsigned int starts, ok, err, reset, errors, opaque;
};

#define LOGIN_S "ok "

static const struct mcase mcases[] = {
	{ "login", "greet", "hs", LOGIN_S, 1, 1, 0, 0, 0, 0 },
	{ "login_switch", "greet", "hs data data", "switch more ok", 1, 1, 0, 0, 0, 0 },
	{ "login_refused", "greet", "hs", "err", 1, 0, 1, 0, 0, 0 },
	{ "greeting_refused", "gerr", "", "", 1, 0, 1, 0, 0, 0 },
	{ "tls", "greet", "ssl", "", 0, 0, 0, 0, 0, 1 },
	{ "compressed", "greet", "hsz", "ok", 1, 0, 0, 0, 0, 1 },
	{ "query_ok", "greet", "hs q", LOGIN_S "ok", 2, 2, 0, 0, 0, 0 },
	{ "query_err", "greet", "hs q", LOGIN_S "err", 2, 1, 1, 0, 0, 0 },
	{ "result_classic", "greet", "hs q", LOGIN_S "cnt:2 col col eof row row row eof", 2, 2, 0,
	  0, 0, 0 },
	{ "result_deprecate_eof", "greet", "hsd q", LOGIN_S "cnt:2 col col row row okt", 2, 2, 0, 0,
	  0, 0 },
	{ "result_300_columns", "greet", "hsd q", LOGIN_S "cnt:300", 2, 1, 0, 1, 0, 0 },
	{ "err_after_rows", "greet", "hs q", LOGIN_S "cnt:1 col eof row row err", 2, 1, 1, 0, 0,
	  0 },
	{ "more_results", "greet", "hs q q",
	  LOGIN_S "cnt:1 col eof row eofm okm cnt:1 col eof eof ok", 3, 3, 0, 0, 0, 0 },
	{ "more_results_deprecate", "greet", "hsd q", LOGIN_S "cnt:1 col row oktm cnt:1 col okt", 2,
	  2, 0, 0, 0, 0 },
	{ "pipelined", "greet", "hs q q cmd:0e q", LOGIN_S "ok err ok cnt:1 col eof eof", 5, 4, 1,
	  0, 0, 0 },
	{ "prepare", "greet", "hs cmd:16 cmd:17 cmd:19 cmd:1c",
	  LOGIN_S "prep:2:1 col eof col col eof cnt:2 col col eofc row eof", 4, 4, 0, 0, 0, 0 },
	{ "prepare_deprecate", "greet", "hsd cmd:16 cmd:16", LOGIN_S "prep:1:1 col col prep:0:0", 3,
	  3, 0, 0, 0, 0 },
	{ "prepare_err", "greet", "hs cmd:16", LOGIN_S "err", 2, 1, 1, 0, 0, 0 },
	{ "no_answer", "greet", "hs cmd:18 cmd:19 q cmd:01", LOGIN_S "ok", 2, 2, 0, 0, 0, 0 },
	{ "local_infile", "greet", "hs q data empty", LOGIN_S "infile ok", 2, 2, 0, 0, 0, 0 },
	{ "change_user", "greet", "hs cmd:11 data", LOGIN_S "switch err", 2, 1, 1, 0, 0, 0 },
	{ "statistics", "greet", "hs cmd:09", LOGIN_S "row", 2, 2, 0, 0, 0, 0 },
	{ "field_list", "greet", "hs cmd:04", LOGIN_S "col col eof", 2, 2, 0, 0, 0, 0 },
	{ "set_option_eof", "greet", "hs cmd:1b", LOGIN_S "eof", 2, 2, 0, 0, 0, 0 },
	{ "binlog_dump", "greet", "hs cmd:12", LOGIN_S, 1, 0, 0, 0, 0, 1 },
	{ "close_pending", "greet", "hs q q", LOGIN_S "cnt:1 col", 3, 1, 0, 2, 0, 0 },
	/* Hostile: each loses framing, counted; the calls pending stay unanswered. */
	{ "protocol_40", "greet", "hs41", "", 0, 0, 0, 0, 1, 0 },
	{ "greeting_not_10", "junk", "", "", 0, 0, 0, 0, 1, 0 },
	{ "column_count_0xfe", "greet", "hs q", LOGIN_S "cntfe", 2, 1, 0, 0, 1, 0 },
	{ "columns_too_many", "greet", "hs q", LOGIN_S "cnt:5000", 2, 1, 0, 0, 1, 0 },
	{ "answer_to_nothing", "greet", "hs q", LOGIN_S "ok ok", 2, 2, 0, 0, 1, 0 },
	{ "too_many_pending", "greet", "hs q q q q q q q q q", LOGIN_S, 9, 0, 0, 0, 1, 0 },
	{ "length_lies", "greet", "hs q", LOGIN_S "len=1000 ok", 2, 1, 0, 1, 0, 0 },
	{ "server_out_of_turn", "greet", "", "ok", 0, 0, 0, 0, 1, 0 },
};

void test_mysql_parse(void)
{
	static struct wire_case cases[sizeof(mcases) / sizeof(mcases[0])];
	static __u8 cbuf[sizeof(cases) / sizeof(cases[0])][1024];
	static __u8 sbuf[sizeof(cases) / sizeof(cases[0])][1024];
	static __u8 pbuf[sizeof(cases) / sizeof(cases[0])][256];
	unsigned int i, n = sizeof(mcases) / sizeof(mcases[0]);

	for (i = 0; i < n; i++) {
		const struct mcase *m = &mcases[i];

		cases[i] = (struct wire_case){ .name = m->name,
					       .pre = (const char *)pbuf[i],
					       .prelen = pkts(pbuf[i], m->pre),
					       .c = (const char *)cbuf[i],
					       .clen = pkts(cbuf[i], m->c),
					       .s = (const char *)sbuf[i],
					       .slen = pkts(sbuf[i], m->s),
					       .starts = m->starts,
					       .ok = m->ok,
					       .err = m->err,
					       .reset = m->reset,
					       .errors = m->errors,
					       .opaque = m->opaque };
	}
	wire_check_cases(&subject, cases, n);
}

/* A row of 16 MiB - 1 bytes and its continuation: no terminator, one skip each. */
void test_mysql_long_packet(void)
{
	static __u8 c[512];
	size_t clen = pkts(c, "hs q"), slen;
	__u8 *s = malloc(MY_MAX_PAYLOAD + 256);
	struct wire_trace *t = malloc(sizeof(*t));

	if (!ASSERT_OK_PTR(s, "malloc") || !ASSERT_OK_PTR(t, "malloc"))
		goto cleanup;
	slen = pkts(s, LOGIN_S "cnt:1 col eof big row eof");
	wire_trace_after(&subject, (const char *)c + clen, pkts(c + clen, "greet"), (const char *)c,
			 clen, (const char *)s, slen, 0, 0, 0, t);
	ASSERT_EQ(t->starts, 2, "login and query");
	ASSERT_EQ(t->outcomes[WIRE_OK], 2, "both answered");
	ASSERT_EQ(t->errors, 0, "framed");
	ASSERT_EQ(fr.calls.pending, 0, "nothing pending");
cleanup:
	free(s);
	free(t);
}

void test_mysql_detect(void)
{
	static const struct {
		const char *spec;
		int yes;
	} t[] = { { "greet", 1 }, { "gerr", 1 }, { "junk", 0 }, { "ok", 0 }, { "hs", 0 } };
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		__u8 b[256];
		size_t n = pkts(b, t[i].spec);
		__u32 got;
		__u64 w = wire_first_word(b, n, &got);

		ASSERT_EQ(mysql_detect(w, got), t[i].yes, t[i].spec);
	}
}

/*
 * Recorded from MariaDB 10.11 (tests/unit/vectors/README): the mariadb
 * client (8 queries of which 2 fail, a procedure's two result sets, 1000
 * rows), PyMySQL (classic EOFs, COM_PING, COM_INIT_DB,
 * COM_QUIT), libmariadb's prepared statements (prepare, execute, close; a
 * prepare and an execute that fail), a wrong password, TLS, a query
 * ended by KILL (the connection closed: a reset).
 */
static const struct wire_vector_case vectors[] = {
	{ "my_cli.bin", 9, 7, 2, 0, 0, 0 },  { "my_pymysql.bin", 9, 7, 2, 0, 0, 0 },
	{ "my_stmt.bin", 7, 5, 2, 0, 0, 0 }, { "my_badpass.bin", 1, 0, 1, 0, 0, 0 },
	{ "my_tls.bin", 0, 0, 0, 0, 1, 0 },  { "my_killed.bin", 3, 2, 0, 0, 0, 1 },
};

void test_mysql_vectors(void)
{
	wire_check_vectors(&subject, vectors, sizeof(vectors) / sizeof(vectors[0]));
}
