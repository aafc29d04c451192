/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A note left on an outbound connection by a runtime's probe at the point
 * where a request meets the connection that will carry its call: Go's
 * (*persistConn).roundTrip (bpf/runtimes/go.c), nginx's ngx_chain_writer
 * (bpf/runtimes/nginx.c). The note names the request (the inbound
 * connection holding it and which of its requests); the syscall path
 * takes it when the call's head is written (egress_open), frames the call
 * from its bytes and logs it in that request. A note on a connection whose
 * next head is not written stays until the next note replaces it.
 */
#ifndef CLAIMD_HANDOFF_BPF_H
#define CLAIMD_HANDOFF_BPF_H

/* Whose request the next one written on an outbound connection is. */
struct handoff {
	__s32 fd; /* the inbound connection holding it */
	__u32 pad;
	__u64 seq; /* which of its requests (claimd_ingress.seq) */
};

/* By outbound connection; the oldest goes when the map is full. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_GOROUTINES);
	__type(key, struct claimd_conn_key);
	__type(value, struct handoff);
} handoffs SEC(".maps");

/*
 * The note naming the request inbound connection in holds, in *h, if one
 * is open (and, seq not 0, is that one): its holder, NULL for none.
 */
static __always_inline struct claimd_thread *handoff_holder(const struct claimd_conn_key *in,
							    __u64 seq, struct handoff *h)
{
	struct claimd_thread *t = bpf_map_lookup_elem(&conn_ctx, in);

	if (!t || !t->conn.tgid || t->conn.fd != in->fd || (seq && t->rec.seq != seq))
		return NULL;
	h->fd = in->fd;
	h->seq = t->rec.seq;
	return t;
}

/* The same, the request's seq returned: 0 for none. */
static __always_inline __u64 handoff_of(const struct claimd_conn_key *in, __u64 seq,
					struct handoff *h)
{
	return handoff_holder(in, seq, h) ? h->seq : 0;
}

/*
 * The note h on outbound connection out, left where its request (held by
 * t, handoff_holder) hands a call to it. The request counts the call
 * unwritten until the syscall path
 * takes the note at the call's head (egress_log_handed): a thread may
 * write the head, then lose its CPU before the write's tracepoint runs,
 * while the answer is read and the request answered on others. Such a
 * request's failure is not judged without its call (verdict_of), and the
 * call, late, counts on its edge (count_late_call).
 */
static __always_inline void handoff_leave(const struct claimd_conn_key *out,
					  const struct handoff *h, struct claimd_thread *t)
{
	__sync_fetch_and_add(&t->rec.unwritten, 1);
	bpf_map_update_elem(&handoffs, out, h, BPF_ANY);
}

/*
 * The note of whose request the next one on connection key is, taken: its
 * owner in *o and its seq; 0 (and *o none) when there is none.
 */
static __always_inline __u64 handoff_take(const struct claimd_conn_key *key, struct claimd_owner *o)
{
	struct handoff *h = bpf_map_lookup_elem(&handoffs, key);
	__u64 seq;

	o->tgid = 0;
	o->id = 0;
	if (!h)
		return 0;
	o->tgid = key->tgid;
	o->id = h->fd;
	seq = h->seq;
	bpf_map_delete_elem(&handoffs, key);
	return seq;
}

#endif /* CLAIMD_HANDOFF_BPF_H */
