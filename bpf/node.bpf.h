/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Node.js's calls tied to their requests by the async context that writes
 * them, read where the syscall path frames the call: no probe per call.
 *
 * Every piece of JavaScript Node runs is run for an async resource, whose
 * id (async_id) and the id of the resource whose context created it
 * (trigger_async_id) Node keeps in one buffer per event loop (its
 * AsyncHooks' async_id_fields: the running context's id at [0], its
 * trigger at [1], the counter ids are drawn from at [2]). Node's HTTP
 * server parses an inbound connection's bytes with a parser, an async
 * resource of its own per connection (HTTPINCOMINGMESSAGE), and runs the
 * request's handler in that parser's context. So a call written:
 *
 *  - in the context of connection X's parser is written by the handler of
 *    the request X holds now (its bytes are the ones being parsed);
 *  - in a context X's parser began (process.nextTick, a timer, a socket
 *    handed over by http.Agent: its trigger is the parser), made after
 *    X's open request began (its id above the counter at that request's
 *    first parse), is that request's: a context an earlier request of X
 *    began has an id below it, and is tied to none (node_calls_stale);
 *  - in the context of a resource whose trigger is a TCP socket the
 *    parser's context made (a new connection's connect callback: its
 *    trigger the socket the handler opened), likewise by that socket's id.
 *    Ids only JavaScript draws (ticks, timers, promises) are seen only as
 *    the running context's; a new socket's where its TCPWrap gets them
 *    (node_tcp_wrap, node_lineage), kept when its trigger is a parser.
 *
 * Any other context (an await's continuation runs in none, a callback of
 * another resource) ties nothing here: the call is then tied by what it
 * carries (keyed.c), or to none, and the requests open meanwhile are
 * unknown. Ids are doubles; they are compared as their bits, whose order
 * is theirs for the positive integers ids are.
 *
 * The parser's id and the buffer's place come from the parse probe
 * (bpf/runtimes/node.c), which ties each parse to the inbound read whose
 * bytes it parses (node_reads: the read the thread made just before, into
 * the buffer the parse reads).
 */
#ifndef CLAIMD_NODE_BPF_H
#define CLAIMD_NODE_BPF_H

/*
 * Threads' slots, by tid modulo: an event loop's thread takes one (the main
 * one, a worker's). Two such threads in one slot: the later one's is kept,
 * the other's context reads as none (unknown), never as the other's (each
 * slot names its tid).
 */
#define NODE_SLOTS 4096

/* A thread's last read on a followed connection of a Node.js process. */
struct node_read {
	__u32 tid;
	__s32 fd;
	__u64 buf; /* where its bytes went */
	__u32 inbound;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NODE_SLOTS);
	__type(key, __u32);
	__type(value, struct node_read);
} node_reads SEC(".maps");

/* Where a thread's event loop keeps its async context (async_id_fields). */
struct node_fields {
	__u32 tid;
	__u32 pad;
	__u64 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NODE_SLOTS);
	__type(key, __u32);
	__type(value, struct node_fields);
} node_fields SEC(".maps");

/*
 * An async resource: its event loop's thread (each of a process's loops,
 * the main one and its workers', draws its ids from its own counter) and
 * its id, as the bits of its double.
 */
struct node_parser_key {
	__u32 tgid;
	__u32 tid;
	__u64 async_id;
};

/* The inbound connection an HTTP parser parses, and its open request's start. */
struct node_parser {
	__s32 fd;
	__u32 pad;
	__u64 seq;     /* the request it held at its first parse (claimd_ingress.seq) */
	__u64 counter; /* the id counter then: the request's contexts are above it */
};

/* By parser; the oldest goes when full (a parser's id is never used again). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX);
	__type(key, struct node_parser_key);
	__type(value, struct node_parser);
} node_parsers SEC(".maps");

/* A TCP socket a parser's context made: its trigger, that parser. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX);
	__type(key, struct node_parser_key);
	__type(value, __u64);
} node_lineage SEC(".maps");

/* An async id's double, its bits: positive and below 2^53 (a counter's value). */
static __always_inline int node_id_sane(__u64 bits)
{
	__u64 exp = bits >> 52;

	return exp >= 0x3ff && exp < 0x433;
}

/* The read just made by tid of a Node.js process on a followed connection. */
static __always_inline void node_read_note(__u32 tid, __s32 fd, __u64 buf, int inbound)
{
	__u32 slot = tid & (NODE_SLOTS - 1);
	struct node_read *r = bpf_map_lookup_elem(&node_reads, &slot);

	if (!r)
		return;
	r->tid = tid;
	r->fd = fd;
	r->buf = buf;
	r->inbound = inbound;
}

/*
 * Thread tid ended: its slots forget it, so a thread given its tid later
 * (in this process or another) starts with no read and no loop of its own.
 */
static __always_inline void node_thread_gone(__u32 tid)
{
	__u32 slot = tid & (NODE_SLOTS - 1);
	struct node_fields *f = bpf_map_lookup_elem(&node_fields, &slot);
	struct node_read *r = bpf_map_lookup_elem(&node_reads, &slot);

	if (f && f->tid == tid)
		f->tid = 0;
	if (r && r->tid == tid)
		r->tid = 0;
}

/*
 * The request a call written now by thread tid of Node.js process tgid is
 * made for, in *h (handoff.bpf.h): its seq, or 0 when its context ties to
 * none.
 */
static __always_inline __u64 node_request_current(__u32 tgid, __u32 tid, struct handoff *h)
{
	__u32 slot = tid & (NODE_SLOTS - 1);
	struct node_fields *f = bpf_map_lookup_elem(&node_fields, &slot);
	struct node_parser_key k = { .tgid = tgid, .tid = tid };
	struct claimd_conn_key in = { .tgid = tgid };
	struct node_parser *p;
	__u64 ids[2], born;

	if (!f || f->tid != tid || bpf_probe_read_user(ids, sizeof(ids), (const void *)f->addr) ||
	    !node_id_sane(ids[0]))
		return 0;
	/* Run by the parser itself: the request whose bytes it parses. */
	k.async_id = ids[0];
	p = bpf_map_lookup_elem(&node_parsers, &k);
	if (p) {
		in.fd = p->fd;
		return handoff_of(&in, 0, h);
	}
	/*
	 * Begun by the parser (the running context's trigger), or by a native
	 * resource the parser's context made: for the request open when that
	 * context or resource began, if it is still open. born: the id of the
	 * one the parser's context made; every id after it on the chain is
	 * above it.
	 */
	if (!node_id_sane(ids[1]))
		return 0;
	k.async_id = ids[1];
	p = bpf_map_lookup_elem(&node_parsers, &k);
	born = ids[0];
	if (!p) {
		__u64 *parent = bpf_map_lookup_elem(&node_lineage, &k);

		if (!parent)
			return 0;
		born = ids[1];
		k.async_id = *parent;
		p = bpf_map_lookup_elem(&node_parsers, &k);
	}
	if (!p || !p->seq)
		return 0;
	if (born <= p->counter) {
		stat_inc(CLAIMD_ST_NODE_STALE);
		return 0;
	}
	in.fd = p->fd;
	return handoff_of(&in, p->seq, h);
}

#endif /* CLAIMD_NODE_BPF_H */
