// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c. Ingresses and egresses: what happens when the
 * parser finds a request or a response. A request read on an inbound
 * connection opens an ingress in the serving thread's context; every request
 * that thread writes on an outbound connection meanwhile goes into that
 * ingress's egress log; the response written back closes the ingress and
 * sends its record. Requests wait in a per-connection FIFO until answered, so
 * pipelining keeps order.
 */

/* A new context starts from this. */
static const struct claimd_thread zero_thread;

/* A power of two: masking an index by it wraps the ring, and bounds it where the verifier sees. */
#define FIFO_MASK (CLAIMD_FIFO_MAX - 1)

/*
 * One syscall on one connection. No pointers in it: it is handed to global
 * BPF functions, which the verifier checks once, on their own.
 */
struct io {
	__u64 now; /* the syscall's time, read at its first use (io_now); 0 until then */
	/* An outbound TCP connection's socket framed by its syscalls (answers may come early); 0 */
	__u64 sk;
	struct claimd_conn_key key;
	__u32 tid;
	__u32 dir;     /* DIR_RX or DIR_TX */
	__u32 tx_from; /* a write on sk: the write_seq its bytes began at */
};

enum { DIR_RX = 0, DIR_TX = 1 };

/*
 * io's time, read from the clock where it is first needed: a request's
 * start, a call's start and end, a record. A response written on an
 * inbound connection, or a body's bytes, need none (the clock is 25-30 ns
 * a read here: docs/performance.md).
 */
static __always_inline __u64 io_now(struct io *io)
{
	if (!io->now)
		io->now = bpf_ktime_get_ns();
	return io->now;
}

static __always_inline void fifo_push(struct claimd_conn *c, const struct claimd_pending *p)
{
	/* Behind overflowed entries, details would come out of order: count only. */
	if (c->extra || c->count >= CLAIMD_FIFO_MAX) {
		c->extra++;
		stat_inc(CLAIMD_ST_FIFO_OVERFLOW);
		return;
	}
	/* The ring wraps at CLAIMD_FIFO_MAX; the mask is also the index's bound. */
	c->fifo[(c->head + c->count) & FIFO_MASK] = *p;
	c->count++;
}

static __always_inline struct claimd_pending *fifo_peek(struct claimd_conn *c)
{
	return c->count ? &c->fifo[c->head & FIFO_MASK] : NULL;
}

/* What is known of a request that overflowed the FIFO: nothing. */
static const struct claimd_pending no_details = { .slot = CLAIMD_NO_SLOT };

/*
 * Removes the oldest request: 1 one with details (still readable where
 * fifo_peek found it until the next push), 2 an overflowed one, 0 none.
 */
static __always_inline int fifo_drop(struct claimd_conn *c)
{
	if (c->count) {
		c->head = (c->head + 1) & FIFO_MASK;
		c->count--;
		/* Empty: the next request goes to the first slot, the cache line at hand. */
		if (!c->count)
			c->head = 0;
		return 1;
	}
	if (c->extra) {
		c->extra--;
		return 2;
	}
	return 0;
}

/* 1: *p holds the oldest request; 2: an overflowed one, no details; 0: none. */
static __always_inline int fifo_pop(struct claimd_conn *c, struct claimd_pending *p)
{
	const struct claimd_pending *head = fifo_peek(c);

	*p = head ? *head : no_details;
	return fifo_drop(c);
}

static __always_inline int same_conn(const struct claimd_conn_key *a,
				     const struct claimd_conn_key *b)
{
	return a->tgid == b->tgid && a->fd == b->fd;
}

static __always_inline int owner_none(const struct claimd_owner *o)
{
	return !o->tgid && !o->id;
}

/* The slot thread tid's id names (observer.bpf.c, thread_slots), held or not. */
static __always_inline struct claimd_thread_slot *thread_slot_of(__u32 tid)
{
	__u32 idx = tid & thread_slots_mask;

	return bpf_map_lookup_elem(&thread_slots, &idx);
}

/*
 * The record holder of an ingress of process tgid: a thread's context, or
 * a connection's. A thread without its slot looks in threads only once
 * one of its process's threads has put a context there (PROC_THREADS): a
 * client that serves nothing, whose every call asks, pays no miss.
 */
static __always_inline struct claimd_thread *owner_ctx(const struct claimd_owner *o, __u32 tgid)
{
	struct claimd_thread_slot *s;

	if (o->tgid) {
		struct claimd_conn_key k = { .tgid = o->tgid, .fd = o->id };

		return bpf_map_lookup_elem(&conn_ctx, &k);
	}
	s = thread_slot_of(o->id);
	if (s && s->tid == (__u32)o->id && o->id)
		return &s->t;
	if (!(proc_flags(tgid) & PROC_THREADS))
		return NULL;
	return bpf_map_lookup_elem(&threads, &o->id);
}

/*
 * The current thread tid takes its slot, if free: only a thread takes a
 * slot, for itself, and only its exit gives it back (thread_slot_free), so
 * a slot's holder cannot change under a request it serves.
 */
static __always_inline struct claimd_thread *thread_slot_take(__u32 tid)
{
	struct claimd_thread_slot *s = thread_slot_of(tid);

	if (!s || !tid || s->tid || __sync_val_compare_and_swap(&s->tid, 0, tid))
		return NULL;
	__builtin_memset(&s->t, 0, sizeof(s->t));
	stat_inc(CLAIMD_ST_THREAD_SLOTS);
	return &s->t;
}

/* Looks up, or makes, the context of owner o of process tgid (a thread: the current one). */
static __always_inline struct claimd_thread *owner_ctx_get(const struct claimd_owner *o, __u32 tgid)
{
	struct claimd_thread *t = owner_ctx(o, tgid);

	if (t)
		return t;
	if (o->tgid) {
		struct claimd_conn_key k = { .tgid = o->tgid, .fd = o->id };

		bpf_map_update_elem(&conn_ctx, &k, &zero_thread, BPF_NOEXIST);
	} else {
		t = thread_slot_take(o->id);
		if (t)
			return t;
		/*
		 * Before the context is there to find (owner_ctx), and whether
		 * this adds it or finds one its tid left: either is its now.
		 */
		proc_flag_set(tgid, PROC_THREADS);
		if (!bpf_map_update_elem(&threads, &o->id, &zero_thread, BPF_NOEXIST))
			stat_inc(CLAIMD_ST_THREAD_CTXS);
	}
	t = owner_ctx(o, tgid);
	if (!t)
		stat_inc(CLAIMD_ST_THREAD_FULL);
	return t;
}

/*
 * Who holds what the current thread works on: its explicit context, or
 * itself; in a Go program framed by its syscalls, what its running
 * goroutine serves.
 */
static __always_inline struct claimd_owner current_owner(struct io *io)
{
	struct claimd_owner o = { .tgid = 0, .id = io->tid };
	struct claimd_conn_key *cur;
	__u32 pflags = proc_flags(io->key.tgid);

	if (pflags & PROC_GO_SYSCALLS)
		return go_owner_current(io->key.tgid);
	/* Most processes never name their requests: skip the lookup for them. */
	if (!(pflags & PROC_CONTEXT))
		return o;
	cur = bpf_map_lookup_elem(&thread_cur, &io->tid);
	if (cur) {
		o.tgid = cur->tgid;
		o.id = cur->fd;
	}
	return o;
}

/*
 * The ingress io's thread serves cannot be trusted to have seen all its
 * calls (flag: CLAIMD_IN_BLIND or CLAIMD_IN_UNTIED), or talked to a
 * dependency claimd cannot read (CLAIMD_IN_OPAQUE): its verdict becomes
 * unknown, or may (verdict_of), at once in the verdict map too. Counted
 * once per ingress; a flag it has already costs two lookups. Returns 1
 * when io's thread serves no request (and its process keys none): the
 * caller's to say whether that is a call outside requests.
 */
__noinline int ingress_taint(struct io *io, __u32 flag)
{
	struct claimd_owner owner;
	struct claimd_thread *t;

	if (!io)
		return 0;
	owner = current_owner(io);
	t = owner_ctx(&owner, io->key.tgid);
	/*
	 * An event loop's thread works for any of its open requests (keyed.c):
	 * each of them may be the one, so each is unsure, as a call outside
	 * requests makes it.
	 */
	if ((!t || !t->conn.tgid || (t->rec.flags & CLAIMD_IN_MUX)) && proc_keyed(io->key.tgid)) {
		outside_calls_add(io->key.tgid);
		return 0;
	}
	if (!t || !t->conn.tgid)
		return 1;
	if (t->rec.flags & flag)
		return 0;
	if (flag == CLAIMD_IN_OPAQUE)
		stat_inc(CLAIMD_ST_OPAQUE);
	else
		ingress_unsure(&t->rec, flag);
	/* A second reason is kept as well: an untied call outranks lost framing (verdict_of). */
	t->rec.flags |= flag;
	slot_refresh(&t->rec);
	return 0;
}

/*
 * The ingress held by t, on connection c, lost its answer to framing claimd
 * could not follow: it ends now, unknown (CLAIMD_IN_LOST), and leaves c's
 * queue so that c's next request opens an ingress of its own.
 */
static __always_inline void ingress_lose(struct claimd_conn *c, struct claimd_thread *t, __u64 now)
{
	__u32 rule = (t->rec.flags & CLAIMD_IN_UNTIED) ? CLAIM_RULE_UNTIED_CALL
						       : CLAIM_RULE_FRAMING_LOST;
	struct claimd_pending p;

	if (!t->conn.tgid)
		return;
	if (c->owner_seq == t->rec.seq && !owner_none(&c->owner)) {
		fifo_pop(c, &p);
		c->owner.tgid = 0;
		c->owner.id = 0;
	}
	ingress_emit(t, now, 0, CLAIMD_IN_LOST, VERDICT(CLAIM_UNKNOWN, rule, CLAIMD_NO_SLOT), 0);
}

/* The ingress io's thread serves lost its answer (an SSL write that could not be tied). */
static __always_inline void ingress_lose_current(struct io *io)
{
	struct claimd_owner owner = current_owner(io);
	struct claimd_thread *t = owner_ctx(&owner, io->key.tgid);
	struct claimd_conn *c;

	if (!t || !t->conn.tgid)
		return;
	c = conn_find(&t->conn);
	if (c)
		ingress_lose(c, t, io->now);
}

/* The request at the head of io's connection is now being served by io's thread. */
__noinline int ingress_open(struct claimd_conn *c, struct io *io, const struct claimd_pending *p)
{
	struct claimd_owner owner = {};
	struct claimd_thread *t;
	__u32 tid, pflags;
	__u32 flags = 0;
	__u64 seq;

	if (!c || !io || !p)
		return 0;
	tid = io->tid;
	owner.id = tid;

	/*
	 * In a process that names its requests (explicit context), the record
	 * belongs to this request's connection, whether the head is read in
	 * its context or outside any (an event loop's runtime reads before
	 * the callback that enters the request's context runs); so in an
	 * event loop that names none (keyed.c), nginx among them from its
	 * first request, and in a Go program framed by
	 * its syscalls (the goroutine reading it is bound to the connection
	 * here); else to the thread. No need to ask which context the thread
	 * is in.
	 */
	pflags = proc_flags(io->key.tgid);
	if (pflags & (PROC_CONTEXT | PROC_MUX | PROC_GO_SYSCALLS | PROC_NGINX | PROC_NODE)) {
		owner.tgid = io->key.tgid;
		owner.id = io->key.fd;
	}
	t = owner_ctx_get(&owner, io->key.tgid);
	if (!t)
		return 0;
	/*
	 * Counted before the record is written: an atomic add waits for the
	 * stores before it, and the record's lines may be on the other CPU.
	 */
	stat_inc(CLAIMD_ST_INGRESS);
	if (!owner.tgid && t->conn.tgid && !same_conn(&t->conn, &io->key)) {
		/* Still serving another request: that one loses its log. */
		struct claimd_conn *old = conn_find(&t->conn);

		if (old && (t->rec.flags & (CLAIMD_IN_BLIND | CLAIMD_IN_UNTIED))) {
			/*
			 * That request already lost bytes claimd could not follow
			 * (its answer, most likely): it ends here, unknown, rather
			 * than make the process look multiplexed for good.
			 */
			ingress_lose(old, t, io->now);
		} else if (!old) {
			/*
			 * Its connection is no longer followed (the table evicted
			 * it): that request will never be answered where we can see
			 * it. Abandoned, counted; not a sign of multiplexing, which
			 * would make every later verdict of the process unknown.
			 */
			stat_inc(CLAIMD_ST_ABANDONED);
		} else {
			/*
			 * An event loop: that request keeps its log, unknown for
			 * the juggling (its calls still count on their edges);
			 * this one, and every one after it, is held by its
			 * connection and keyed (keyed.c).
			 */
			t->rec.flags |= CLAIMD_IN_MUX;
			stat_inc(CLAIMD_ST_MUX);
			proc_flag_set(io->key.tgid, PROC_MUX);
			pflags |= PROC_MUX;
			owner.tgid = io->key.tgid;
			owner.id = io->key.fd;
			t = owner_ctx_get(&owner, io->key.tgid);
			if (!t)
				return 0;
		}
	}
	/*
	 * An event loop's request, held by its connection: tied to its calls
	 * by the keys its head carries, which its framer reads from now on
	 * (keyed.c).
	 */
	if (word_keyed(pflags)) {
		flags |= CLAIMD_IN_KEYED;
		stat_inc(CLAIMD_ST_KEYED);
		c->rx.flags |= HTTP_F_IDS;
	}
	/* A Go request, its goroutine known (mode goroutine), as the Go probes' are. */
	if (pflags & PROC_GO_SYSCALLS)
		flags |= CLAIMD_IN_GO;
	seq = ingress_reset(t, c, &io->key, tid, io_now(io), p, flags);
	t->g = (pflags & PROC_GO_SYSCALLS) ? go_serving_bind(io->key.tgid, io->key.fd) : 0;
	c->owner = owner;
	c->owner_seq = seq;
	/* Failing now, with no call made, would be its own error. */
	if (pflags & PROC_MUX)
		slot_show(t, 1, VERDICT(CLAIM_UNKNOWN, CLAIM_RULE_MULTIPLEXED, CLAIMD_NO_SLOT),
			  NULL, t->outside_seen);
	else
		slot_show(t, 1, VERDICT(CLAIM_CLAIMED, CLAIM_RULE_NO_FAILED_EGRESS, CLAIMD_NO_SLOT),
			  NULL, t->outside_seen);
	return 0;
}

/* An ingress whose thread context is gone: counted, and a record without egress log. */
static __always_inline void ingress_emit_bare(struct claimd_conn *c, struct io *io,
					      const struct claimd_pending *p, __u16 status,
					      __u32 flags)
{
	__u32 judged = request_judged(status, flags);
	__u32 verdict = judged ? CLAIM_UNKNOWN : CLAIM_NONE;
	__u32 rule = judged ? CLAIM_RULE_NO_LOG : CLAIM_RULE_NONE;
	__u64 id = count_next_id();
	struct claimd_ingress *r;

	if (!count_service(claimd_service_owner(io->key.tgid, c->local.port), status, flags,
			   VR(verdict, rule))) {
		flags |= CLAIMD_IN_UNCOUNTED;
		stat_inc(CLAIMD_ST_COUNTS_FULL);
	}
	stat_inc(CLAIMD_ST_COUNTED);
	if (!(flags & CLAIMD_IN_UNCOUNTED) && !records_wanted(id))
		return;
	r = bpf_ringbuf_reserve(&events, offsetof(struct claimd_ingress, egress), 0);
	if (!r) {
		stat_inc(CLAIMD_ST_RB_DROPS);
		return;
	}
	r->comm[0] = 0; /* fresh ring-buffer memory */
	ingress_fill(r, c, io->key.tgid, io->tid, p);
	r->hdr.size = offsetof(struct claimd_ingress, egress);
	r->seq = 0;
	r->end_ns = io_now(io);
	r->flags = flags;
	r->status = status;
	r->verdict = verdict;
	r->rule = rule;
	r->pad = 0;
	submit(r);
}

/*
 * The oldest request on io's connection got its answer (status 0: none will
 * come). Sends its record. The next pipelined request, if any, is the
 * caller's to open (ingress_open): a frame beside this one, not under it.
 */
__noinline int ingress_close(struct claimd_conn *c, struct io *io, __u32 status, __u32 flags)
{
	const struct claimd_pending *p;
	struct claimd_thread *t = NULL;
	struct claimd_owner owner;
	int got;

	if (!c || !io)
		return 0;
	/* Read in place, not copied: this frame is on the deepest chain (stream.c). */
	p = fifo_peek(c);
	owner = c->owner;
	got = fifo_drop(c);
	if (!got) {
		stat_inc(CLAIMD_ST_UNMATCHED);
		return 0;
	}
	if (!p)
		p = &no_details;
	if (got == 1 && !owner_none(&owner))
		t = owner_ctx(&owner, io->key.tgid);
	if (t && same_conn(&t->conn, &io->key) && t->rec.seq == c->owner_seq) {
		ingress_end(t, io->now, status, flags);
	} else {
		if (got == 1 && !owner_none(&owner))
			stat_inc(CLAIMD_ST_CTX_LOST); /* its context was evicted */
		ingress_emit_bare(c, io, p, status, flags | CLAIMD_IN_NOCTX);
	}
	c->owner.tgid = 0;
	c->owner.id = 0;
	return 0;
}

/*
 * A call begins for the request owner holds (seq: that request; 0: the one
 * it holds now): logged in that request, if open, which it returns (NULL:
 * none). Fills p's link (ingress_seq, slot) so the answer finds its log
 * entry. handed: a call its request handed to the connection
 * (handoff_leave), now written.
 */
static __always_inline struct claimd_ingress *
egress_log_for(struct io *io, struct claimd_pending *p, const struct claimd_addr *callee,
	       struct claimd_owner owner, __u64 seq, int handed)
{
	struct claimd_thread *t = owner_ctx(&owner, io->key.tgid);
	struct claimd_ingress *r;

	p->ingress_seq = seq;
	p->owner = owner;
	p->slot = CLAIMD_NO_SLOT;
	stat_inc(CLAIMD_ST_EGRESS);
	/* Its request was answered before the call went out: a late call (egress_ended). */
	if (seq && (!t || !t->conn.tgid || t->rec.seq != seq)) {
		p->late = 1;
		return NULL;
	}
	/*
	 * No request held, or the one an event loop's thread was juggling
	 * when it became one (its later requests are held by their
	 * connections, keyed.c): a call outside requests, as an event loop's
	 * call that carries no keys is (a database's command, a connect that
	 * failed): its thread tells nothing of whose it is.
	 */
	if (!t || !t->conn.tgid || (t->rec.flags & CLAIMD_IN_MUX)) {
		/* Its end is counted with the other calls outside requests (count_root_call). */
		p->ancestor = outside_call_untied(io->key.tgid);
		return NULL;
	}
	r = &t->rec;
	p->ingress_seq = r->seq;
	/* The thread waits for its own call's answer; an explicit context may not. */
	p->slot = egress_log_next(t, p, callee, owner.tgid ? 0 : CLAIMD_EG_AWAITED);
	if (handed && r->unwritten)
		__sync_fetch_and_sub(&r->unwritten, 1);
	return r;
}

/* A call begins on io's thread: logged in the ingress it serves, if any. */
static __always_inline void egress_log(struct io *io, struct claimd_pending *p,
				       const struct claimd_addr *callee)
{
	egress_log_for(io, p, callee, current_owner(io), 0, 0);
}

/*
 * A request written on an outbound connection of a Go program framed by
 * its syscalls: the call of the request its caller handed over there
 * (handoffs); else, written by a goroutine serving a request (a client
 * of its own, not net/http's loops), that request's; else one outside
 * requests.
 */
static __always_inline void egress_log_handed(struct io *io, struct claimd_pending *p,
					      const struct claimd_addr *callee)
{
	struct claimd_owner owner;
	__u64 seq = handoff_take(&io->key, &owner);

	if (!seq)
		owner = go_owner_current(io->key.tgid);
	/* A call its request handed over is written now, and in its log. */
	egress_log_for(io, p, callee, owner, seq, seq != 0);
}

/*
 * A call a runtime's tier tied to the request seq that owner holds (0: it
 * tied none): logged in that request, which is flagged (flag) and counted
 * (stat) as so tied; 1 when it tied one, 0 when the call is left to its
 * keys (keyed.c).
 */
static __always_inline int egress_log_tied(struct io *io, struct claimd_pending *p,
					   const struct claimd_addr *callee,
					   struct claimd_owner owner, __u64 seq, __u32 flag,
					   __u32 stat)
{
	struct claimd_ingress *r;

	if (!seq)
		return 0;
	r = egress_log_for(io, p, callee, owner, seq, 0);
	if (r) {
		r->flags |= flag;
		stat_inc(stat);
	}
	return 1;
}

/*
 * A request written on an outbound connection of nginx: the call of the
 * request nginx's probe noted there when it began writing it (handoffs,
 * bpf/runtimes/nginx.c).
 */
static __always_inline int egress_log_noted(struct io *io, struct claimd_pending *p,
					    const struct claimd_addr *callee)
{
	struct claimd_owner owner;
	__u64 seq = handoff_take(&io->key, &owner);

	return egress_log_tied(io, p, callee, owner, seq, CLAIMD_IN_TIED_NGINX,
			       CLAIMD_ST_TIED_NGINX);
}

/*
 * A request written on an outbound connection of Node.js: the call of the
 * request whose parser's context wrote it, or a context that parser began
 * for it (node.bpf.h).
 */
static __always_inline int egress_log_node(struct io *io, struct claimd_pending *p,
					   const struct claimd_addr *callee)
{
	struct claimd_owner owner = { .tgid = io->key.tgid };
	struct handoff h = {};
	__u64 seq = node_request_current(io->key.tgid, io->tid, &h);

	owner.id = h.fd;
	return egress_log_tied(io, p, callee, owner, seq, CLAIMD_IN_TIED_NODE, CLAIMD_ST_TIED_NODE);
}

/* A call ended: into its ingress's log if that is still open, else its own record. */
__noinline int egress_close(struct io *io, const struct claimd_pending *p,
			    const struct claimd_addr *callee, const struct egress_end *end)
{
	struct claimd_thread *t;
	struct claimd_ingress *r;

	if (!io || !p || !callee || !end)
		return 0;
	t = p->ingress_seq ? owner_ctx(&p->owner, io->key.tgid) : NULL;
	r = egress_ended(t, io->key.tgid, p, callee, end);
	if (r)
		slot_refresh(r);
	return 0;
}

/*
 * A request written on an outbound connection. A frame of its own: logging
 * the call takes more registers than BPF has, and its spills kept in
 * on_events's frame would lengthen the deepest chain (stream.c).
 */
__noinline int egress_open(struct claimd_conn *c, struct io *io)
{
	struct claimd_pending p = { .slot = CLAIMD_NO_SLOT };
	__u32 pflags;

	if (!c || !io)
		return 0;
	p.start_ns = c->tx_first_ns;
	p.tid = io->tid;
	p.target_hash = c->tx.hash;
	p.method = c->tx.method;
	p.owner.id = io->tid;
	/*
	 * nginx's call is tied where nginx began writing it (its probe's
	 * note), Node.js's by the context writing it; an event loop's others
	 * are tied, or counted outside requests, when their head ends, by the
	 * keys its framer reads from now on (keyed.c).
	 */
	pflags = proc_flags(io->key.tgid);

	if (word_keyed(pflags)) {
		int tied = (pflags & PROC_NGINX)  ? egress_log_noted(io, &p, &c->remote)
			   : (pflags & PROC_NODE) ? egress_log_node(io, &p, &c->remote)
						  : 0;

		if (!tied) {
			stat_inc(CLAIMD_ST_EGRESS);
			c->tx.flags |= HTTP_F_IDS;
		}
	} else if (pflags & PROC_GO_SYSCALLS) {
		egress_log_handed(io, &p, &c->remote);
	} else {
		egress_log(io, &p, &c->remote);
	}
	fifo_push(c, &p);
	c->flags |= CLAIMD_CONN_SENT;
	return 0;
}

/*
 * The running verdict of the request whose call egress_open logged, the
 * newest on c: were it to fail now, that call would count as given up
 * (awaited) or left running (verdict_of), not as absent. Its slot said so
 * only when the call ended, so a service answering its failure before
 * then (a call abandoned with its connection open, a Go call seen written
 * late) read the verdict of a request without it. A frame beside
 * egress_open's, not under it: verdict_of there passed the 512 bytes of
 * stack a chain of frames shares.
 */
__noinline int egress_open_show(struct claimd_conn *c, __u32 tgid)
{
	struct claimd_pending *p;
	struct claimd_thread *t;

	if (!c || !c->count || c->extra)
		return 0;
	p = &c->fifo[(c->head + c->count - 1) & FIFO_MASK];
	if (!p->ingress_seq)
		return 0;
	t = owner_ctx(&p->owner, tgid);
	/* Still open: not a late call's (its request answered), nor another's since. */
	if (t && t->conn.tgid && t->rec.seq == p->ingress_seq)
		slot_refresh(&t->rec);
	return 0;
}

/* The socket's write_seq: where the next byte written will go. */
static __always_inline __u32 sock_write_seq(__u64 sk)
{
	struct tcp_sock *tp = bpf_rdonly_cast((void *)sk, bpf_core_type_id_kernel(struct tcp_sock));

	return tp->write_seq;
}

/*
 * Where the socket's first data byte went: the byte after its SYN, which
 * bytes_acked counts with the data (an outbound connection: it sent the
 * SYN). Read only for an early answer on a connection none of whose
 * writes was framed yet.
 */
static __always_inline __u32 sock_first_seq(__u64 sk)
{
	struct tcp_sock *tp = bpf_rdonly_cast((void *)sk, bpf_core_type_id_kernel(struct tcp_sock));

	return tp->snd_una - (__u32)tp->bytes_acked + 1;
}

/*
 * A response's status line with no request waiting: early (enum
 * claimd_answer) if a send on the socket is in flight, its request not
 * framed yet (the writes framed end before write_seq; none framed yet:
 * the socket's first byte does); else unmatched.
 */
static __always_inline void egress_answer_early(struct claimd_conn *c, struct io *io, __u16 status)
{
	__u32 from;

	if (!io->sk || c->answer_active != CLAIMD_ANSWER_NONE) {
		stat_inc(CLAIMD_ST_UNMATCHED);
		return;
	}
	from = (c->flags & CLAIMD_CONN_SEQ) ? c->tx_seq : sock_first_seq(io->sk);
	if (sock_write_seq(io->sk) == from) {
		stat_inc(CLAIMD_ST_UNMATCHED);
		return;
	}
	c->early_from = from;
	c->answer_status = status;
	c->answer_end_ns = io_now(io);
	c->answer_active = CLAIMD_ANSWER_EARLY;
}

/* The status line of a response arrived; it completes at the end of its head. */
static __always_inline void egress_answered(struct claimd_conn *c, struct io *io, __u16 status)
{
	if (c->answer_active >= CLAIMD_ANSWER_EARLY || !fifo_pop(c, &c->answering)) {
		egress_answer_early(c, io, status);
		return;
	}
	c->answer_status = status;
	c->answer_end_ns = io_now(io);
	c->answer_active = CLAIMD_ANSWER_POPPED;
}

/* The call being answered (its request popped) ends, its head's claim 'claim'. */
static __always_inline void egress_answer_close(struct claimd_conn *c, struct io *io, __u8 claim)
{
	struct egress_end end = {
		.end_ns = c->answer_end_ns,
		.status = c->answer_status,
		.claim = claim,
	};

	c->answer_active = CLAIMD_ANSWER_NONE;
	egress_close(io, &c->answering, &c->remote, &end);
}

/* The head of the response being read ended: its call ends, or an early answer waits on. */
static __always_inline void egress_answer_done(struct claimd_conn *c, struct io *io)
{
	if (c->answer_active == CLAIMD_ANSWER_POPPED) {
		egress_answer_close(c, io, c->rx.claim);
	} else if (c->answer_active == CLAIMD_ANSWER_EARLY) {
		c->answer_claim = c->rx.claim;
		c->answer_active = CLAIMD_ANSWER_EARLY_DONE;
	}
}

/* An early answer no request came for: unmatched after all. */
static __always_inline void egress_early_drop(struct claimd_conn *c)
{
	if (c->answer_active < CLAIMD_ANSWER_EARLY)
		return;
	c->answer_active = CLAIMD_ANSWER_NONE;
	stat_inc(CLAIMD_ST_UNMATCHED);
}

/*
 * The early answer's request, just taken, was a HEAD: its response has no
 * body, whatever its headers said when they were read with no request to
 * tell (stream.c sets the method from the request it pops). Its head still
 * being read ends so; one that ended waits for no body: its message ends
 * here (the next answer's bytes come after the next request, which this
 * late write precedes).
 */
static __always_inline void egress_early_head(struct claimd_conn *c, __u8 state)
{
	if (c->answering.method != HTTP_M_HEAD)
		return;
	c->rx.method = HTTP_M_HEAD;
	if (state == CLAIMD_ANSWER_EARLY_DONE && c->rx.state >= HS_BODY_LEN &&
	    c->rx.state <= HS_TRAILER_CR)
		http_finish(&c->rx);
}

/*
 * egress_open just queued a request io wrote: the early answer's, if
 * one waits and that send is the one that was in flight when it came
 * (the only request queued, its bytes beginning where the writes framed
 * then ended). It starts no later than its answer.
 */
static __always_inline void egress_early_take(struct claimd_conn *c, struct io *io)
{
	__u8 state = c->answer_active;

	if (state < CLAIMD_ANSWER_EARLY)
		return;
	if (io->tx_from != c->early_from || c->count != 1 || c->extra ||
	    !fifo_pop(c, &c->answering)) {
		egress_early_drop(c);
		return;
	}
	if (c->answering.start_ns > c->answer_end_ns)
		c->answering.start_ns = c->answer_end_ns;
	egress_early_head(c, state);
	c->answer_active = CLAIMD_ANSWER_POPPED;
	stat_inc(CLAIMD_ST_EARLY_ANSWERS);
	if (state == CLAIMD_ANSWER_EARLY_DONE)
		egress_answer_close(c, io, c->answer_claim);
}

/* The connection failed (reset, refused, closed, EOF): every call on it waiting ends. */
__noinline int egress_fail_all(struct claimd_conn *c, struct io *io)
{
	struct egress_end end = { .flags = CLAIMD_EG_TRANSPORT };
	struct claimd_pending p;
	int i;

	if (!c || !io)
		return 0;
	end.end_ns = io_now(io);
	/* An early answer waits on: its request's write, in flight, is framed yet. */
	if (c->answer_active == CLAIMD_ANSWER_POPPED)
		egress_answer_close(c, io, c->rx.claim);
	for (i = 0; i < CLAIMD_FIFO_MAX; i++) {
		if (fifo_pop(c, &p) != 1)
			break;
		egress_close(io, &p, &c->remote, &end);
	}
	c->extra = 0;
	c->count = 0;
	c->flags |= CLAIMD_CONN_FAILED;
	return 0;
}

/*
 * The answers of every call waiting on c were lost with the framing: each
 * call ends with its outcome unknown, and the ingress that made it (on any
 * thread: pools share connections) becomes unknown.
 */
static __always_inline void egress_lose_all(struct claimd_conn *c, struct io *io)
{
	struct egress_end end = { .end_ns = io_now(io), .flags = CLAIMD_EG_LOST };
	struct claimd_pending p;
	int i;

	egress_early_drop(c);
	if (c->answer_active == CLAIMD_ANSWER_POPPED) {
		c->answer_active = CLAIMD_ANSWER_NONE;
		stat_inc(CLAIMD_ST_CALLS_LOST);
		egress_close(io, &c->answering, &c->remote, &end);
	}
	for (i = 0; i < CLAIMD_FIFO_MAX; i++) {
		if (fifo_pop(c, &p) != 1)
			break;
		stat_inc(CLAIMD_ST_CALLS_LOST);
		egress_close(io, &p, &c->remote, &end);
	}
	c->extra = 0;
	c->count = 0;
}

/*
 * The responses being written on inbound connection c lost their framing:
 * every request waiting on it ends now, unknown (CLAIMD_IN_LOST).
 */
static __always_inline void ingress_lose_all(struct claimd_conn *c, struct io *io)
{
	int i;

	for (i = 0; i <= CLAIMD_FIFO_MAX; i++) {
		if (!c->count && !c->extra)
			break;
		ingress_close(c, io, 0, CLAIMD_IN_LOST);
	}
}

/* A connection that never carried a request failed: one failed call, no request seen. */
__noinline int egress_connect_failed(struct io *io, const struct claimd_addr *callee)
{
	struct claimd_pending p = {};
	struct egress_end end = { .flags = CLAIMD_EG_TRANSPORT | CLAIMD_EG_CONNECT };

	if (!io || !callee)
		return 0;
	p.start_ns = io_now(io);
	p.tid = io->tid;
	end.end_ns = p.start_ns;
	egress_log(io, &p, callee);
	egress_close(io, &p, callee, &end);
	return 0;
}
