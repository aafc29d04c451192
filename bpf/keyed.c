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
 *
 * The counts are kept right against other CPUs by bpf/req_keys.bpf.h. A
 * request a key of which could not be counted there is a stray: unknown
 * itself, and while one is open no call of its process is tied by keys.
 * Counted: CLAIMD_ST_KEY_STRAYS.
 */

#include "req_keys.bpf.h"

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

/* Process tgid has n more strays open (keyed_stray; n -1: one ended). */
static __always_inline void keyed_strays_add(__u32 tgid, int n)
{
	struct claimd_outside *o = bpf_map_lookup_elem(&outside_calls, &tgid);

	if (o)
		__sync_fetch_and_add(&o->key_strays, n);
}

/*
 * The request t holds, of process tgid, on fd, could not be counted under a
 * key of it (req_key_add): a call made for it could be tied to another
 * request alone under that key. Its process counts it a stray until it
 * ends (keyed_forget), and ties no call by keys meanwhile (keyed_call_head);
 * it is unknown itself (untied-call).
 */
static __always_inline void keyed_stray(struct claimd_thread *t, __u32 tgid)
{
	if (t->rec.flags & CLAIMD_IN_KEY_STRAY)
		return;
	keyed_strays_add(tgid, 1);
	t->rec.flags |= CLAIMD_IN_KEY_STRAY;
	stat_inc(CLAIMD_ST_KEY_STRAYS);
	ingress_unsure(&t->rec, CLAIMD_IN_UNTIED);
}

/* t's request becomes known by (kind, hash) in process tgid: hash if counted, else 0 (a stray). */
static __always_inline __u32 keyed_add(struct claimd_thread *t, __u32 tgid, __s32 fd, __u32 kind,
				       __u32 hash)
{
	struct claimd_req_key k = { .tgid = tgid, .kind = kind, .hash = hash };

	if (!req_key_add(&k, fd, t->rec.seq))
		return hash;
	keyed_stray(t, tgid);
	return 0;
}

/* t's request, of process tgid, is known by (kind, hash) no more. */
static __always_inline void keyed_drop(struct claimd_thread *t, __u32 kind, __u32 hash)
{
	struct claimd_req_key k = { .tgid = t->rec.tgid, .kind = kind, .hash = hash };

	req_key_drop(&k, t->rec.seq);
}

/* The request held by t is answered, or its connection gone: it is known by its keys no more. */
__noinline int keyed_forget(struct claimd_thread *t)
{
	if (!t)
		return 0;
	if (t->key_id)
		keyed_drop(t, CLAIMD_KEY_ID, t->key_id);
	if (t->key_relay)
		keyed_drop(t, CLAIMD_KEY_RELAY, t->key_relay);
	if (t->rec.flags & CLAIMD_IN_KEY_STRAY)
		keyed_strays_add(t->rec.tgid, -1);
	t->key_id = 0;
	t->key_relay = 0;
	/* Emitted already, if it ends: its record keeps the flag. */
	t->rec.flags &= ~CLAIMD_IN_KEY_STRAY;
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
	    t->rec.seq != c->owner_seq || keyed_known(t))
		return;
	if (f->id_hash)
		t->key_id = keyed_add(t, io->key.tgid, io->key.fd, CLAIMD_KEY_ID, f->id_hash);
	if (relay)
		t->key_relay = keyed_add(t, io->key.tgid, io->key.fd, CLAIMD_KEY_RELAY, relay);
}

/* How many open requests of process tgid are known by (kind, hash), as req_key_find saw. */
static __always_inline __u32 keyed_find(__u32 tgid, __u32 kind, __u32 hash,
					struct claimd_req_owner *owner)
{
	struct claimd_req_key k = { .tgid = tgid, .kind = kind, .hash = hash };

	return hash ? req_key_find(&k, owner) : 0;
}

/*
 * Has process tgid a stray open (keyed_stray)? Then no request is known by
 * a key alone: it may be one of them, uncounted. A process past the table
 * (no count) is taken to have one.
 */
static __always_inline int keyed_strays_open(__u32 tgid)
{
	struct claimd_outside *o = bpf_map_lookup_elem(&outside_calls, &tgid);

	return !o || *(volatile __u32 *)&o->key_strays;
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
	struct claimd_req_owner o = {};
	struct claimd_conn_key k = { .tgid = io->key.tgid };
	struct claimd_thread *t = NULL;
	__u32 n, stat = CLAIMD_ST_TIED_ID;

	/* The call this head is: the newest in the queue, not yet tied. */
	if (!c->count || c->extra)
		return;
	p = &c->fifo[(c->head + c->count - 1) & FIFO_MASK];
	if (p->ingress_seq)
		return;
	n = keyed_strays_open(io->key.tgid)
		    ? 2
		    : keyed_find(io->key.tgid, CLAIMD_KEY_ID, f->id_hash, &o);
	if (!n) {
		n = keyed_find(io->key.tgid, CLAIMD_KEY_RELAY, relay_key(f), &o);
		stat = CLAIMD_ST_TIED_RELAY;
	}
	if (n == 1 && o.seq) {
		k.fd = o.fd;
		t = bpf_map_lookup_elem(&conn_ctx, &k);
	}
	if (!t || !t->conn.tgid || t->rec.seq != o.seq) {
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
