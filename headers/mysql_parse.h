/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * MySQL and MariaDB client/server protocol framing, one byte at a time,
 * for the client's side of a connection: what the client writes and what
 * it reads. Packets are a 3-byte little-endian length, a sequence id and
 * the payload (16 MiB - 1 bytes continue in the next packet); payloads
 * are skipped by length once their first bytes are read.
 *
 * Calls, each answered in order:
 * - the login: from the client's handshake response through the
 *   authentication exchange (auth switch, more data) to the server's OK
 *   or ERR; a server greeting that is an ERR (too many connections, a
 *   host blocked) is a login refused at once (start and end together);
 * - a command (a packet of sequence 0 in the command phase): COM_QUERY and
 *   COM_STMT_EXECUTE answered by OK, ERR, or result sets (a column count,
 *   column definitions, an EOF unless CLIENT_DEPRECATE_EOF, rows, an EOF
 *   or OK that ends them, another result set while its status says more
 *   follow), LOCAL INFILE's exchange; COM_STMT_PREPARE by its OK and the
 *   parameter and column definitions it announces; COM_STMT_FETCH and
 *   COM_FIELD_LIST by packets up to an EOF; COM_CHANGE_USER by an
 *   authentication exchange; COM_STATISTICS by one string; the others by
 *   one OK, EOF or ERR. COM_QUIT, COM_STMT_CLOSE and COM_STMT_SEND_LONG_DATA
 *   have no answer and are no calls.
 * An ERR packet (0xff) fails its call, also one that ends rows half read.
 *
 * A handshake response that asks for TLS (CLIENT_SSL, the short packet),
 * compression, or result sets whose metadata may be left out (MySQL's
 * CLIENT_OPTIONAL_RESULTSET_METADATA), and a replica's binlog dump make the
 * connection opaque. With MariaDB's metadata cache (its clients ask for
 * it) an execute's column count says whether definitions follow. The protocol before
 * 4.1, a column count or a terminator where none can be, or more than
 * MY_MAX_PENDING commands in flight lose framing.
 */
#ifndef CLAIMD_MYSQL_PARSE_H
#define CLAIMD_MYSQL_PARSE_H

#include "wire_parse.h"

#define MY_MAX_PAYLOAD 0xffffffu /* a packet this long continues in the next */
#define MY_MAX_PENDING 8	 /* commands in flight; a power of two (masks) */
#define MY_MAX_COLUMNS 4096	 /* MySQL's and MariaDB's limit on a table's columns */

/* Capability flags of the handshake response. */
#define MY_CLIENT_MYSQL		    0x00000001u /* unset by MariaDB clients: extended flags */
#define MY_CLIENT_COMPRESS	    0x00000020u
#define MY_CLIENT_PROTOCOL_41	    0x00000200u
#define MY_CLIENT_SSL		    0x00000800u
#define MY_CLIENT_OPTIONAL_METADATA 0x02000000u
#define MY_CLIENT_ZSTD		    0x04000000u
#define MY_CLIENT_DEPRECATE_EOF	    0x01000000u
#define MY_MARIADB_CACHE_METADATA   0x00000010u /* MariaDB's extended flags, bit 36 */
#define MY_SSL_REQUEST_LEN	    32		/* a handshake response cut short: TLS next */

#define MY_SERVER_MORE_RESULTS	0x0008u /* status: another result set follows */
#define MY_SERVER_CURSOR_EXISTS 0x0040u /* status: the rows wait for COM_STMT_FETCH */

/* my_dir.val2 after an execute's column count, with MariaDB's metadata cache. */
#define MY_META_FLAG	 0x100	      /* the "metadata follows" byte read: its value below */
#define MY_META_LEFT_OUT MY_META_FLAG /* it said 0: no column definitions */

#define MY_OK  0x00
#define MY_EOF 0xfe
#define MY_ERR 0xff

enum my_state {
	MY_HDR = 0, /* a packet's four header bytes */
	MY_PAYLOAD, /* its first payload bytes, read */
	MY_SKIP,    /* the rest of its payload: skipped by mysql_skip */
	MY__COUNT,
};

/* mysql_framer.phase */
enum my_phase {
	MY_PH_GREETING = 0, /* the server's greeting awaited */
	MY_PH_HANDSHAKE,    /* the client's handshake response awaited */
	MY_PH_AUTH,	    /* the login pending: authentication exchange */
	MY_PH_COMMAND,	    /* commands */
};

/* What answers a command: the shape of its reply. */
enum my_reply {
	MY_R_NONE = 0, /* no reply: no call */
	MY_R_SIMPLE,   /* one OK, EOF or ERR */
	MY_R_RESULT,   /* OK, ERR, LOCAL INFILE or result sets */
	MY_R_EXECUTE,  /* the same, its metadata perhaps left out (MariaDB's cache) */
	MY_R_PREPARE,  /* an OK announcing definitions, or ERR */
	MY_R_ROWS,     /* packets up to an EOF, or ERR */
	MY_R_AUTH,     /* an authentication exchange up to OK or ERR */
	MY_R_ONE,      /* one packet, ERR or not */
	MY_R_STREAM,   /* a replica's stream: opaque */
};

/* Where the answer of the oldest call is. */
enum my_answer {
	MY_A_FIRST = 0, /* its first packet (of the next result set) */
	MY_A_COLDEFS,	/* column definitions */
	MY_A_COLEOF,	/* the EOF after them */
	MY_A_MAYBE_EOF, /* metadata left out: an EOF, or rows at once */
	MY_A_ROWS,	/* rows, up to a terminator */
	MY_A_COUNTED,	/* a known number of packets (after a prepare's OK) */
	MY_A_INFILE,	/* LOCAL INFILE: the client sends a file, then OK or ERR */
	MY_A_AUTH,	/* an authentication exchange */
};

/* How the first bytes of the current payload are read. */
enum my_layout {
	MY_L_NONE = 0, /* not read: skipped */
	MY_L_CAPS,     /* handshake response: flags at 0, MariaDB's extended ones at 28 */
	MY_L_OK,       /* OK: header, two length-encoded integers, status */
	MY_L_EOF,      /* EOF: header, warnings, status */
	MY_L_COUNT,    /* a column count: a length-encoded integer */
	MY_L_PREPARE,  /* a prepare's OK: header, id, columns, parameters */
};

struct my_dir {
	__u64 remaining; /* payload bytes of this packet still to skip */
	__u32 len;	 /* this packet's payload length */
	__u32 val;	 /* what the payload's first bytes give: flags, count, status */
	__u32 val2;	 /* MariaDB's extended flags; a prepare's parameters */
	__u8 state;	 /* enum my_state */
	__u8 pos;	 /* header bytes read, or payload bytes read */
	__u8 seq;	 /* this packet's sequence id */
	__u8 first;	 /* the payload's first byte */
	__u8 layout;	 /* enum my_layout */
	__u8 field;	 /* MY_L_OK: which field; MY_L_COUNT: bytes left */
	__u8 need;	 /* bytes left of the current length-encoded integer */
	__u8 cont;	 /* this packet continues the one before (16 MiB - 1 long) */
};

struct mysql_framer {
	struct wire_calls calls;    /* first: wire_calls_first */
	struct my_dir dir[2];	    /* [WIRE_TO_SERVER], [WIRE_TO_CLIENT] */
	__u32 caps;		    /* the client's capability flags */
	__u32 left;		    /* MY_A_COLDEFS, MY_A_COUNTED: packets still to come */
	__u8 phase;		    /* enum my_phase */
	__u8 answer;		    /* enum my_answer, of the oldest call */
	__u8 head;		    /* the oldest call's slot in reply */
	__u8 cache_meta;	    /* MariaDB's metadata cache: an execute's may be left out */
	__u8 login;		    /* the call that ended last was the login */
	__u8 queued;		    /* commands in reply (the login is not one) */
	__u8 reply[MY_MAX_PENDING]; /* enum my_reply of each command, oldest at head */
	__u8 pad[2];
};

WIRE_INLINE void mysql_framer_init(struct mysql_framer *f)
{
	__builtin_memset(f, 0, sizeof(*f));
}

/* A command byte's reply. */
WIRE_INLINE __u8 mysql_reply_of(__u8 cmd)
{
	switch (cmd) {
	case 0x01: /* COM_QUIT */
	case 0x18: /* COM_STMT_SEND_LONG_DATA */
	case 0x19: /* COM_STMT_CLOSE */
		return MY_R_NONE;
	case 0x03: /* COM_QUERY */
	case 0x0a: /* COM_PROCESS_INFO */
		return MY_R_RESULT;
	case 0x17: /* COM_STMT_EXECUTE */
	case 0xfa: /* MariaDB's COM_STMT_BULK_EXECUTE */
		return MY_R_EXECUTE;
	case 0x16: /* COM_STMT_PREPARE */
		return MY_R_PREPARE;
	case 0x04: /* COM_FIELD_LIST */
	case 0x1c: /* COM_STMT_FETCH */
		return MY_R_ROWS;
	case 0x11: /* COM_CHANGE_USER */
		return MY_R_AUTH;
	case 0x09: /* COM_STATISTICS */
		return MY_R_ONE;
	case 0x12: /* COM_BINLOG_DUMP */
	case 0x1e: /* COM_BINLOG_DUMP_GTID */
		return MY_R_STREAM;
	}
	return MY_R_SIMPLE;
}

/* Extra bytes of a length-encoded integer after its first byte c. */
WIRE_INLINE __u8 mysql_lenenc_extra(__u8 c)
{
	if (c < 0xfb)
		return 0;
	if (c == 0xfc)
		return 2;
	if (c == 0xfd)
		return 3;
	if (c == 0xfe)
		return 8;
	return 0; /* 0xfb (NULL), 0xff: not an integer */
}

/* The oldest call's answer begins: where it starts, by its reply. */
WIRE_INLINE void mysql_answer_start(struct mysql_framer *f)
{
	__u8 r = f->reply[f->head & (MY_MAX_PENDING - 1)]; /* mask: a slot of the ring */

	f->answer = r == MY_R_ROWS ? MY_A_ROWS : r == MY_R_AUTH ? MY_A_AUTH : MY_A_FIRST;
}

/* The oldest call answered: the next one's answer comes next. */
WIRE_INLINE __u32 mysql_end(struct mysql_framer *f, __u8 outcome)
{
	__u32 ev;

	f->login = f->phase == MY_PH_AUTH;
	ev = wire_call_end(&f->calls, outcome);
	if (f->login) {
		f->phase = MY_PH_COMMAND;
	} else {
		f->head = (f->head + 1) & (MY_MAX_PENDING - 1); /* mask: a slot of the ring */
		f->queued--;
	}
	mysql_answer_start(f); /* the next command's, if one is queued */
	return ev;
}

/* A command written (a packet of sequence 0 in the command phase). */
WIRE_INLINE __u32 mysql_command(struct mysql_framer *f, __u8 cmd)
{
	__u8 r = mysql_reply_of(cmd);
	__u32 ev;

	if (r == MY_R_NONE)
		return 0;
	if (r == MY_R_STREAM)
		return wire_opaque(&f->calls);
	if (f->queued >= MY_MAX_PENDING)
		return wire_lost(&f->calls);
	/* mask: a slot of the ring */
	f->reply[(f->head + f->queued) & (MY_MAX_PENDING - 1)] = r;
	f->queued++;
	ev = wire_call_start(&f->calls);
	if (f->calls.pending == 1)
		mysql_answer_start(f); /* nothing before it: its answer is next */
	return ev;
}

/* The client's handshake response, whole: TLS, the login, or what we cannot follow. */
WIRE_INLINE __u32 mysql_handshake(struct mysql_framer *f, const struct my_dir *d)
{
	__u32 caps = d->val;

	if (!(caps & MY_CLIENT_PROTOCOL_41) || d->len < 4)
		return wire_lost(&f->calls);
	if ((caps & MY_CLIENT_SSL) && d->len == MY_SSL_REQUEST_LEN)
		return wire_opaque(&f->calls); /* TLS follows, the real response inside */
	f->caps = caps;
	f->phase = MY_PH_AUTH;
	f->answer = MY_A_AUTH;
	f->cache_meta = !(caps & MY_CLIENT_MYSQL) && (d->val2 & MY_MARIADB_CACHE_METADATA);
	if (caps & (MY_CLIENT_COMPRESS | MY_CLIENT_ZSTD | MY_CLIENT_OPTIONAL_METADATA))
		return wire_call_start(&f->calls) | wire_opaque(&f->calls);
	return wire_call_start(&f->calls);
}

/* Is the packet a result set's terminator (an EOF, or the OK that replaces it)? */
WIRE_INLINE int mysql_terminator(const struct mysql_framer *f, const struct my_dir *d)
{
	if (d->first != MY_EOF)
		return 0;
	if (f->caps & MY_CLIENT_DEPRECATE_EOF)
		return d->len < MY_MAX_PAYLOAD;
	return d->len < 9;
}

/* A result set or an OK ended: another follows, or the call is answered. */
WIRE_INLINE __u32 mysql_result_end(struct mysql_framer *f, __u32 status)
{
	if (status & MY_SERVER_MORE_RESULTS) {
		f->answer = MY_A_FIRST;
		return 0;
	}
	return mysql_end(f, WIRE_OK);
}

/* A whole packet from the server: its effect on the oldest call's answer. */
WIRE_INLINE __u32 mysql_server_packet(struct mysql_framer *f, const struct my_dir *d)
{
	__u8 c = d->first;
	__u8 r = f->reply[f->head & (MY_MAX_PENDING - 1)]; /* mask: a slot of the ring */

	if (f->phase == MY_PH_GREETING) {
		if (c == MY_ERR) { /* refused before any login: a login failed at once */
			f->login = 1;
			return wire_call_start(&f->calls) |
			       wire_call_end(&f->calls, WIRE_CALLEE_ERROR);
		}
		if (c != 0x0a)
			return wire_lost(&f->calls); /* protocol 10 only */
		f->phase = MY_PH_HANDSHAKE;
		return 0;
	}
	if (f->phase == MY_PH_HANDSHAKE)
		return wire_lost(&f->calls); /* the server speaks out of turn */
	if (!f->calls.pending)
		return wire_lost(&f->calls); /* an answer to nothing */
	if (!d->len) {
		if (f->answer == MY_A_COUNTED && !--f->left)
			return mysql_end(f, WIRE_OK);
		return 0; /* an empty row, say: nothing decides */
	}
	if (c == MY_ERR && f->answer != MY_A_COLDEFS && f->answer != MY_A_COUNTED)
		return mysql_end(f, WIRE_CALLEE_ERROR);
	switch (f->answer) {
	case MY_A_AUTH:
		/* Auth switch (0xfe) or more data (0x01): the exchange goes on. */
		return c == MY_OK ? mysql_end(f, WIRE_OK) : 0;
	case MY_A_INFILE:
		return c == MY_OK ? mysql_result_end(f, d->val) : wire_lost(&f->calls);
	case MY_A_COLDEFS:
		if (--f->left)
			return 0;
		f->answer = (f->caps & MY_CLIENT_DEPRECATE_EOF) ? MY_A_ROWS : MY_A_COLEOF;
		return 0;
	case MY_A_COLEOF:
		if (!mysql_terminator(f, d))
			return wire_lost(&f->calls);
		/* A cursor opened (COM_STMT_EXECUTE): no rows here, COM_STMT_FETCH reads them. */
		if (d->val & MY_SERVER_CURSOR_EXISTS)
			return mysql_result_end(f, d->val);
		f->answer = MY_A_ROWS;
		return 0;
	case MY_A_MAYBE_EOF:
		/* An EOF (as after definitions), or a row: a binary row starts 0x00. */
		if (mysql_terminator(f, d) && (d->val & MY_SERVER_CURSOR_EXISTS))
			return mysql_result_end(f, d->val);
		f->answer = MY_A_ROWS;
		return 0;
	case MY_A_ROWS:
		if (!mysql_terminator(f, d))
			return 0;
		return mysql_result_end(f, d->val);
	case MY_A_COUNTED:
		if (!--f->left)
			return mysql_end(f, WIRE_OK);
		return 0;
	}
	/* MY_A_FIRST: by the command's reply. */
	if (r == MY_R_ONE)
		return mysql_end(f, WIRE_OK);
	if (r == MY_R_SIMPLE)
		return c == MY_OK || c == MY_EOF ? mysql_end(f, WIRE_OK) : wire_lost(&f->calls);
	if (r == MY_R_PREPARE) {
		if (c != MY_OK)
			return wire_lost(&f->calls);
		/* Parameters and columns, each followed by an EOF unless deprecated. */
		f->left = d->val2 + d->val;
		if (!(f->caps & MY_CLIENT_DEPRECATE_EOF))
			f->left += !!d->val2 + !!d->val;
		if (!f->left)
			return mysql_end(f, WIRE_OK);
		f->answer = MY_A_COUNTED;
		return 0;
	}
	/* MY_R_RESULT, MY_R_EXECUTE */
	if (c == MY_OK)
		return mysql_result_end(f, d->val);
	if (c == 0xfb) {
		f->answer = MY_A_INFILE;
		return 0;
	}
	if (!d->val || d->val > MY_MAX_COLUMNS)
		return wire_lost(&f->calls); /* not a column count */
	if (d->val2 == MY_META_LEFT_OUT) {
		f->answer = (f->caps & MY_CLIENT_DEPRECATE_EOF) ? MY_A_ROWS : MY_A_MAYBE_EOF;
		return 0;
	}
	f->left = d->val;
	f->answer = MY_A_COLDEFS;
	return 0;
}

/* A whole packet (its payload read and skipped): what it does. */
WIRE_INLINE __u32 mysql_packet_done(struct mysql_framer *f, struct my_dir *d, __u32 dir)
{
	d->state = MY_HDR;
	d->pos = 0;
	if (d->cont)
		return 0; /* the rest of a long packet: its start decided */
	if (dir == WIRE_TO_CLIENT)
		return mysql_server_packet(f, d);
	if (f->phase == MY_PH_HANDSHAKE)
		return mysql_handshake(f, d);
	/*
	 * A command resets the sequence: 0 after the handshake is one, also
	 * written before the login's OK is read. Authentication data and a
	 * LOCAL INFILE's file go on their exchange's sequence: no call.
	 */
	if (f->phase >= MY_PH_AUTH && d->seq == 0 && d->len)
		return mysql_command(f, d->first);
	return 0;
}

/* How the server's packet starting with c is read, where the answer is. */
WIRE_INLINE __u8 mysql_server_layout(const struct mysql_framer *f, const struct my_dir *d, __u8 c)
{
	__u8 r = f->reply[f->head & (MY_MAX_PENDING - 1)]; /* mask: a slot of the ring */

	if (f->phase != MY_PH_COMMAND || c == MY_ERR)
		return MY_L_NONE;
	switch (f->answer) {
	case MY_A_FIRST:
		if (c == MY_OK)
			return r == MY_R_PREPARE ? MY_L_PREPARE : MY_L_OK;
		return (r == MY_R_RESULT || r == MY_R_EXECUTE) && c != 0xfb ? MY_L_COUNT
									    : MY_L_NONE;
	case MY_A_INFILE:
		return c == MY_OK ? MY_L_OK : MY_L_NONE;
	case MY_A_COLEOF:
	case MY_A_MAYBE_EOF:
		return mysql_terminator(f, d) ? MY_L_EOF : MY_L_NONE;
	case MY_A_ROWS:
		if (!mysql_terminator(f, d))
			return MY_L_NONE;
		return (f->caps & MY_CLIENT_DEPRECATE_EOF) ? MY_L_OK : MY_L_EOF;
	}
	return MY_L_NONE;
}

/* A payload byte at position at (its first byte read already) of the current layout. */
WIRE_INLINE void mysql_field_byte(struct my_dir *d, __u32 at, __u8 c)
{
	switch (d->layout) {
	case MY_L_CAPS:
		if (at < 4)
			d->val |= (__u32)c << (8 * (at & 3)); /* & 3: a byte of the flags */
		else if (at >= 28 && at < 32)
			d->val2 |= (__u32)c << (8 * (at & 3)); /* & 3: a byte of the flags */
		if (at == 31)
			d->layout = MY_L_NONE;
		return;
	case MY_L_EOF: /* warnings at 1-2, status at 3-4 */
		if (at == 3)
			d->val = c;
		if (at == 4) {
			d->val |= (__u32)c << 8;
			d->layout = MY_L_NONE;
		}
		return;
	case MY_L_COUNT: /* a 2- or 3-byte count after 0xfc or 0xfd, then perhaps a flag */
		if (d->field) {
			d->val |= (__u32)c << (8 * ((at - 1) & 3)); /* & 3: a byte of the count */
			if (!--d->field && !d->need)
				d->layout = MY_L_NONE;
			return;
		}
		d->val2 = MY_META_FLAG | c; /* MariaDB's "metadata follows" */
		d->layout = MY_L_NONE;
		return;
	case MY_L_PREPARE: /* id at 1-4, columns at 5-6, parameters at 7-8 */
		if (at == 5 || at == 6)
			d->val |= (__u32)c << (8 * (at - 5));
		if (at == 7 || at == 8)
			d->val2 |= (__u32)c << (8 * (at - 7));
		if (at == 8)
			d->layout = MY_L_NONE;
		return;
	case MY_L_OK: /* field 1, 2: length-encoded integers; 3, 4: the status */
		if (d->need) {
			d->need--;
		} else if (d->field < 3) {
			d->need = mysql_lenenc_extra(c);
		} else {
			d->val |= (__u32)c << (8 * (d->field - 3));
			if (d->field == 4)
				d->layout = MY_L_NONE;
		}
		if (!d->need)
			d->field++;
		return;
	}
}

/* A payload's first byte: how the rest of it is read. */
WIRE_INLINE void mysql_first_byte(struct mysql_framer *f, struct my_dir *d, __u32 dir, __u8 c)
{
	d->first = c;
	d->val = 0;
	d->val2 = 0;
	d->need = 0;
	d->field = 1;
	d->layout = MY_L_NONE;
	if (dir == WIRE_TO_SERVER) {
		if (f->phase == MY_PH_HANDSHAKE) {
			d->layout = MY_L_CAPS;
			d->val = c;
		}
		return;
	}
	d->layout = mysql_server_layout(f, d, c);
	if (d->layout == MY_L_COUNT) {
		/* One byte, or 0xfc / 0xfd and two or three; 0xfe's eight: no count of columns. */
		d->field = c == 0xfc ? 2 : c == 0xfd ? 3 : 0;
		d->val = c < 0xfb ? c : 0;
		d->need = f->cache_meta && /* mask: a slot of the ring */
			  f->reply[f->head & (MY_MAX_PENDING - 1)] == MY_R_EXECUTE;
		if (!d->field && !d->need)
			d->layout = MY_L_NONE;
	}
}

/* A header complete: the payload's bytes are read, skipped, or there are none. */
WIRE_INLINE __u32 mysql_header_done(struct mysql_framer *f, struct my_dir *d, __u32 dir)
{
	d->remaining = d->len;
	d->pos = 0;
	if (!d->len) {
		d->first = 0;
		return mysql_packet_done(f, d, dir);
	}
	d->state = d->cont ? MY_SKIP : MY_PAYLOAD;
	return 0;
}

/* Feed one byte of direction dir. Never called where mysql_skipping() holds. */
WIRE_INLINE __u32 mysql_step(struct mysql_framer *f, __u32 dir, __u8 c)
{
	struct my_dir *d = &f->dir[dir & 1]; /* & 1: one of two directions */

	dir &= 1;
	if (f->calls.state != WIRE_OPEN)
		return 0;
	switch (d->state) {
	case MY_HDR:
		if (d->pos < 3) {
			if (!d->pos) {
				/* The packet before, 16 MiB - 1 long, goes on in this one. */
				d->cont = d->len == MY_MAX_PAYLOAD;
				d->len = 0;
			}
			d->len |= (__u32)c << (8 * (d->pos & 3)); /* & 3: a byte of the length */
			d->pos++;
			return 0;
		}
		d->seq = c;
		return mysql_header_done(f, d, dir);
	case MY_PAYLOAD:
		if (!d->pos)
			mysql_first_byte(f, d, dir, c);
		else
			mysql_field_byte(d, d->pos, c);
		d->pos = d->pos < 255 ? d->pos + 1 : 255;
		if (!--d->remaining)
			return mysql_packet_done(f, d, dir);
		if (d->layout == MY_L_NONE)
			d->state = MY_SKIP;
		return 0;
	}
	return wire_lost(&f->calls);
}

/* In a state where bytes of dir are skipped by count rather than stepped. */
WIRE_INLINE int mysql_skipping(const struct mysql_framer *f, __u32 dir)
{
	return f->dir[dir & 1].state == MY_SKIP; /* & 1: one of two directions */
}

/* Skip up to avail payload bytes of dir; returns how many, *ev the packet's end's events. */
WIRE_INLINE __u64 mysql_skip(struct mysql_framer *f, __u32 dir, __u64 avail, __u32 *ev)
{
	struct my_dir *d = &f->dir[dir & 1]; /* & 1: one of two directions */
	__u64 n = wire_take(&d->remaining, avail);

	*ev = 0;
	if (!d->remaining)
		*ev = mysql_packet_done(f, d, dir & 1);
	return n;
}

/* The connection ended: the calls it left unanswered (wire_close). */
WIRE_INLINE __u32 mysql_close(struct mysql_framer *f)
{
	return wire_close(&f->calls);
}

/*
 * Is this MySQL or MariaDB? w holds the first eight bytes the client read
 * (memory order, zeros past n), the client having written nothing: the
 * server's greeting, protocol 10 and a version starting with a digit, or
 * an ERR packet with a server error code (1000-1999, "too many
 * connections", "host blocked").
 */
WIRE_INLINE int mysql_detect(__u64 w, __u32 n)
{
	__u32 len = (__u32)(w & 0xffffff), code = wire_byte(w, 5) | (__u32)wire_byte(w, 6) << 8;

	if (n < 7 || wire_byte(w, 3) != 0 || len < 3 || len > 1024)
		return 0;
	if (wire_byte(w, 4) == 0x0a)
		return len > 32 && wire_byte(w, 5) >= '1' && wire_byte(w, 5) <= '9';
	return wire_byte(w, 4) == MY_ERR && code >= 1000 && code < 2000;
}

#ifndef __bpf__
static inline __u32 mysql_step_any(void *f, __u32 dir, __u8 c)
{
	return mysql_step(f, dir, c);
}

static inline __u64 mysql_skip_any(void *f, __u32 dir, __u64 avail, __u32 *ev)
{
	return mysql_skip(f, dir, avail, ev);
}

static inline int mysql_skipping_any(const void *f, __u32 dir)
{
	return mysql_skipping(f, dir);
}

static const struct wire_ops mysql_ops = { mysql_step_any, mysql_skip_any, mysql_skipping_any,
					   wire_calls_first };

/* User space: a buffer of direction dir, as the BPF side feeds it (wire_feed). */
static inline __u64 mysql_feed(struct mysql_framer *f, __u32 dir, const __u8 *buf, __u64 len,
			       wire_event_fn fn, void *ctx)
{
	return wire_feed(&mysql_ops, f, dir, buf, len, fn, ctx);
}
#endif

#endif /* CLAIMD_MYSQL_PARSE_H */
