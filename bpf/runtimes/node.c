// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A runtime of observer.bpf.c (bpf/runtimes/). Node.js (CLAIMD_PROC_NODE),
 * one probe per read of an inbound request's bytes, none per call: its
 * requests are framed from their syscalls' bytes as any process's are,
 * held by their connections from the first (keyed, bpf/keyed.c), and a
 * call is tied by the async context that writes it (node.bpf.h).
 *
 * Node's HTTP server reads a connection's bytes into a buffer and hands
 * them to the connection's parser (node_http_parser.cc:
 * Parser::OnStreamRead(nread, buf), which parses them) on the same thread,
 * before any other read: they are the bytes of the thread's last read when
 * buf is where that read put them (node_reads). node_parser_read ties the
 * parser's async id to that read's connection, with the request the
 * connection holds and the id counter at its first read (node_parsers),
 * and notes where the thread's event loop keeps its async context
 * (node_fields), for the syscall path to read when a call is written. A
 * client's parser is fed from JavaScript and never passes there.
 *
 * node_tcp_wrap, in TCPWrap::New where a new TCP socket's wrap has
 * its id and trigger, notes the sockets a parser's context makes
 * (node_lineage): a connection the handler opens, whose connect callback
 * writes its first call. One run per new socket (accepted ones too), none
 * per call over a kept-alive one.
 *
 * The layout they read (the parser's async id; its realm, the realm's
 * environment, the environment's async_id_fields) is the binary's, found
 * in its code by claimd (user/claimd/probes/node/nodecode.c) and given as
 * the probes' cookies.
 */

/* The parse probe's cookie (nodecode__cookie), its fields. */
#define NODE_ASYNC_ID(c) ((c)&0xff)
#define NODE_REALM(c)	 (((c) >> 8) & 0xff)
#define NODE_ENV(c)	 (((c) >> 16) & 0xffff)
#define NODE_FIELDS(c)	 (((c) >> 32) & 0xffff)
#define NODE_ADJUST(c)	 ((c) >> 48)
/* The socket probe's (nodecode__tcp_cookie): this's register, the async id's offset. */
#define NODE_TCP_REG(c) ((c)&0xff)
#define NODE_TCP_ID(c)	(((c) >> 16) & 0xffff)

/*
 * Parser::OnStreamRead(ssize_t nread, const uv_buf_t &buf), at the function
 * (this the parser) or at its thunk (this the parser's StreamListener, the
 * cookie's adjust bytes in).
 */
SEC("uprobe")
int node_parser_read(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), layout = bpf_get_attach_cookie(ctx);
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, slot = tid & (NODE_SLOTS - 1);
	__u64 parser = PT_REGS_PARM1(ctx) - NODE_ADJUST(layout), fields, counter;
	struct node_parser_key k = { .tgid = tgid, .tid = tid };
	struct claimd_conn_key in = { .tgid = tgid };
	struct node_parser v = {}, *old;
	struct node_fields *nf;
	struct node_read *r;
	struct handoff h;

	if (!(proc_flags(tgid) & PROC_NODE))
		return 0;
	r = bpf_map_lookup_elem(&node_reads, &slot);
	if (!r || r->tid != tid || !r->inbound || !r->buf || (long)PT_REGS_PARM2(ctx) <= 0 ||
	    r->buf != user_ptr(PT_REGS_PARM3(ctx))) {
		stat_inc(CLAIMD_ST_NODE_UNMATCHED);
		return 0;
	}
	/* One parse per read: a later one of other bytes in the same buffer is not this read's. */
	r->buf = 0;
	in.fd = r->fd;
	k.async_id = user_ptr(parser + NODE_ASYNC_ID(layout));
	/* The thread's loop's, known from its first parse; else followed from the parser. */
	nf = bpf_map_lookup_elem(&node_fields, &slot);
	if (nf && nf->tid == tid)
		fields = nf->addr;
	else
		fields = user_ptr(
			user_ptr(user_ptr(parser + NODE_REALM(layout)) + NODE_ENV(layout)) +
			NODE_FIELDS(layout));
	counter = user_ptr(fields ? fields + 16 : 0);
	if (!node_id_sane(k.async_id) || !node_id_sane(counter)) {
		stat_inc(CLAIMD_ST_NODE_UNMATCHED);
		return 0;
	}
	v.fd = in.fd;
	v.seq = handoff_of(&in, 0, &h);
	v.counter = counter;
	old = bpf_map_lookup_elem(&node_parsers, &k);
	/* The request's start is its first parse: later ones of its bytes keep it. */
	if (!old || old->fd != v.fd || old->seq != v.seq)
		bpf_map_update_elem(&node_parsers, &k, &v, BPF_ANY);
	if (nf && nf->tid != tid) {
		nf->tid = tid;
		nf->addr = fields;
	}
	stat_inc(CLAIMD_ST_NODE_BOUND);
	return 0;
}

/* Where general register i (nodecode.h's order) is kept in pt_regs; -1: none (RSP, beyond). */
static __always_inline int node_reg_at(__u32 i)
{
	switch (i) {
	case 0:
		return offsetof(struct pt_regs, ax);
	case 1:
		return offsetof(struct pt_regs, bx);
	case 2:
		return offsetof(struct pt_regs, cx);
	case 3:
		return offsetof(struct pt_regs, dx);
	case 4:
		return offsetof(struct pt_regs, si);
	case 5:
		return offsetof(struct pt_regs, di);
	case 6:
		return offsetof(struct pt_regs, bp);
	case 8:
		return offsetof(struct pt_regs, r8);
	case 9:
		return offsetof(struct pt_regs, r9);
	case 10:
		return offsetof(struct pt_regs, r10);
	case 11:
		return offsetof(struct pt_regs, r11);
	case 12:
		return offsetof(struct pt_regs, r12);
	case 13:
		return offsetof(struct pt_regs, r13);
	case 14:
		return offsetof(struct pt_regs, r14);
	case 15:
		return offsetof(struct pt_regs, r15);
	}
	return -1;
}

/* General register i of regs, 0 if none. Read, not loaded: its offset is not a constant. */
static __always_inline __u64 node_reg(const struct pt_regs *regs, __u32 i)
{
	int at = node_reg_at(i);
	__u64 v = 0;

	if (at >= 0)
		bpf_probe_read_kernel(&v, sizeof(v), (const char *)regs + at);
	return v;
}

/*
 * In TCPWrap::New, its base's constructor done: the socket's id and
 * trigger stored (the cookie: this's register, the id's offset). A socket
 * a parser's context made is noted with that parser (node_lineage).
 */
SEC("uprobe")
int node_tcp_wrap(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct node_parser_key k = { .tgid = tgid, .tid = tid }, id = { .tgid = tgid, .tid = tid };
	__u64 self, both[2];

	if (!(proc_flags(tgid) & PROC_NODE))
		return 0;
	self = node_reg(ctx, NODE_TCP_REG(cookie));
	if (!self ||
	    bpf_probe_read_user(both, sizeof(both), (const void *)(self + NODE_TCP_ID(cookie))) ||
	    !node_id_sane(both[0]) || !node_id_sane(both[1]))
		return 0;
	k.async_id = both[1];
	if (!bpf_map_lookup_elem(&node_parsers, &k))
		return 0;
	id.async_id = both[0];
	bpf_map_update_elem(&node_lineage, &id, &both[1], BPF_ANY);
	stat_inc(CLAIMD_ST_NODE_LINEAGE);
	return 0;
}
