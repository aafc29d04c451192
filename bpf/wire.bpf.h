/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A connection to a database or a cache (bpf/wire.c): its framer, one of
 * the three, in the wire_conns map by the connection's key.
 */
#ifndef CLAIMD_WIRE_BPF_H
#define CLAIMD_WIRE_BPF_H

#include "resp_parse.h"
#include "pgwire_parse.h"
#include "mysql_parse.h"

#define CLAIMD_WIRE_CONNS_MAX (CLAIMD_CONNS_MAX / 4)

struct wire_conn {
	__u32 sk_tag; /* the connection's (claimd_conn.sk_tag): an entry of another is stale */
	__u8 proto;   /* enum claimd_proto */
	__u8 pad[3];
	union {
		struct wire_calls calls; /* each framer's first member */
		struct resp_framer resp;
		struct pg_framer pg;
		struct mysql_framer my;
	} f;
};

#endif /* CLAIMD_WIRE_BPF_H */
