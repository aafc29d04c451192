// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c. An event loop's calls tied to the requests they
 * are made for, by what both carry, with no help from the service.
 *
 * A process that served two requests at once on one thread (PROC_MUX: an
 * event loop, nginx, haproxy, Node.js, asyncio) cannot be followed by its
 * threads. From then on each of its requests is held by its connection
 * (CLAIMD_IN_KEYED, in conn_ctx, as an explicit context's), and is known
 * while it is open by keys (req_keys):
 *
 *  - its id: traceparent's trace-id, else x-b3-traceid, else x-request-id
 *    (headers/http_parse.h, HTTP_F_IDS), which a call an instrumented
 *    service (OpenTelemetry) or a mesh makes for it carries too;
 *  - its relay: method, target and user agent, which a proxy's upstream
 *    request repeats (nginx's proxy_pass, haproxy, a Node.js proxy that
 *    passes the headers on). Without a user agent no relay key: method and
 *    target alone are too common to tell a relay from a call of its own.
 *
 * When a call's head ends, its id, else its relay, is looked up: exactly one
 * open request of the process with that key is the call's request, and the
 * call goes into its log. None, or two or more (ambiguous), and the call is
 * a call outside requests (outside_calls_add): every request of the process
 * open while it began or ended gets unknown (untied-call), never a verdict
 * that misses it. Counted: CLAIMD_ST_TIED_ID, _TIED_RELAY, _TIE_AMBIGUOUS,
 * _TIE_NONE.
 */

/*
 * The open requests of event loops, by key: added when a request's head
 * ends (keyed_request_head), removed when it is answered or its connection
 * goes (keyed_forget). Full: a request unknown by its keys, so calls made
 * for it are tied to none (unknown, not wrong).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX);
	__type(key, struct claimd_req_key);
	__type(value, struct claimd_req_owner);
} req_keys SEC(".maps");

/* What a relay of a request carries of it: method, target, user agent. 0: no relay key. */
static __always_inline __u32 relay_key(const struct http_framer *f)
{
	__u32 h;

	if (!f->ua_hash)
		return 0;
	h = (f->hash ^ f->method) * HTTP_FNV_PRIME;
	h = (h ^ f->ua_hash) * HTTP_FNV_PRIME;
	return h ?: 1;
}

/* One more open request of tgid known by (kind, hash): the one on fd, seq, if it stays alone. */
static __always_inline void key_add(__u32 tgid, __u32 kind, __u32 hash, __s32 fd, __u64 seq)
{
	struct claimd_req_key k = { .tgid = tgid, .kind = kind, .hash = hash };
	struct claimd_req_owner v = { .count = 1, .fd = fd, .seq = seq }, *o;

	o = bpf_map_lookup_elem(&req_keys, &k);
	if (!o && !bpf_map_update_elem(&req_keys, &k, &v, BPF_NOEXIST))
		return;
	if (!o)
		o = bpf_map_lookup_elem(&req_keys, &k); /* another CPU added it meanwhile */
	if (o)
		__sync_fetch_and_add(&o->count, 1);
}

/* One open request of tgid known by (kind, hash) fewer. */
static __always_inline void key_drop(__u32 tgid, __u32 kind, __u32 hash)
{
	struct claimd_req_key k = { .tgid = tgid, .kind = kind, .hash = hash };
	struct claimd_req_owner *o = bpf_map_lookup_elem(&req_keys, &k);

	if (o && __sync_fetch_and_add(&o->count, -1) <= 1)
		bpf_map_delete_elem(&req_keys, &k);
}

/* The request held by t is answered, or its connection gone: it is known by its keys no more. */
__noinline int keyed_forget(struct claimd_thread *t)
{
	if (!t)
		return 0;
	if (t->key_id)
		key_drop(t->rec.tgid, CLAIMD_KEY_ID, t->key_id);
	if (t->key_relay)
		key_drop(t->rec.tgid, CLAIMD_KEY_RELAY, t->key_relay);
	t->key_id = 0;
	t->key_relay = 0;
	return 0;
}

/*
 * The head of a request read on inbound connection c ended (its framer f),
 * in a process whose requests are keyed: the request this connection's
 * context holds, if it is that one, becomes known by its keys.
 */
static __always_inline void keyed_request_head(struct claimd_conn *c, struct io *io,
					       const struct http_framer *f)
{
	struct claimd_thread *t = bpf_map_lookup_elem(&conn_ctx, &io->key);
	__u32 relay = relay_key(f);

	if (!t || !t->conn.tgid || !(t->rec.flags & CLAIMD_IN_KEYED) ||
	    t->rec.seq != c->owner_seq || t->key_id || t->key_relay)
		return;
	if (f->id_hash) {
		key_add(io->key.tgid, CLAIMD_KEY_ID, f->id_hash, io->key.fd, t->rec.seq);
		t->key_id = f->id_hash;
	}
	if (relay) {
		key_add(io->key.tgid, CLAIMD_KEY_RELAY, relay, io->key.fd, t->rec.seq);
		t->key_relay = relay;
	}
}

/* The one open request of tgid known by (kind, hash), or NULL; *count how many are. */
static __always_inline const struct claimd_req_owner *key_find(__u32 tgid, __u32 kind, __u32 hash,
							       __u32 *count)
{
	struct claimd_req_key k = { .tgid = tgid, .kind = kind, .hash = hash };
	const struct claimd_req_owner *o = hash ? bpf_map_lookup_elem(&req_keys, &k) : NULL;

	*count = o ? o->count : 0;
	return o && o->count == 1 ? o : NULL;
}

/*
 * The head of a call written on outbound connection c ended (its framer
 * f), in a process whose requests are keyed: tied to the one open request
 * its id, else its relay, names; else a call outside requests.
 */
static __always_inline void keyed_call_head(struct claimd_conn *c, struct io *io,
					    const struct http_framer *f)
{
	struct claimd_pending *p;
	const struct claimd_req_owner *o;
	struct claimd_conn_key k = { .tgid = io->key.tgid };
	struct claimd_thread *t = NULL;
	__u32 n = 0, stat = CLAIMD_ST_TIED_ID;

	/* The call this head is: the newest in the queue, not yet tied. */
	if (!c->count || c->extra)
		return;
	p = &c->fifo[(c->head + c->count - 1) & FIFO_MASK];
	if (p->ingress_seq)
		return;
	o = key_find(io->key.tgid, CLAIMD_KEY_ID, f->id_hash, &n);
	if (!o && !n) {
		o = key_find(io->key.tgid, CLAIMD_KEY_RELAY, relay_key(f), &n);
		stat = CLAIMD_ST_TIED_RELAY;
	}
	if (o) {
		k.fd = o->fd;
		t = bpf_map_lookup_elem(&conn_ctx, &k);
	}
	if (!t || !t->conn.tgid || t->rec.seq != o->seq) {
		stat_inc(n > 1 ? CLAIMD_ST_TIE_AMBIGUOUS : CLAIMD_ST_TIE_NONE);
		outside_calls_add(io->key.tgid);
		return;
	}
	stat_inc(stat);
	t->rec.flags |= stat == CLAIMD_ST_TIED_ID ? CLAIMD_IN_TIED_ID : CLAIMD_IN_TIED_RELAY;
	p->owner.tgid = k.tgid;
	p->owner.id = k.fd;
	p->ingress_seq = t->rec.seq;
	/* An event loop does not wait on a thread: a call left running may be left to finish. */
	p->slot = egress_log_next(t, p, &c->remote, 0);
}

/*
 * A request's head ended on c, in direction io (framer f): in a process
 * whose requests are keyed, an inbound one becomes known by its keys, an
 * outbound one (a call) is tied by them. A frame of its own, beside
 * on_events's others.
 */
__noinline int keyed_head(struct claimd_conn *c, struct io *io)
{
	const struct http_framer *f;

	/* A process that came to name its requests since (explicit context) ties its own. */
	if (!c || !io || !proc_keyed(io->key.tgid))
		return 0;
	f = io->dir == DIR_RX ? &c->rx : &c->tx;
	if (c->role == CLAIMD_ROLE_INBOUND)
		keyed_request_head(c, io, f);
	else
		keyed_call_head(c, io, f);
	return 0;
}
