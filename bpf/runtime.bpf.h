/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a runtime hands the mechanism. A runtime is whatever finds requests
 * and calls: the syscall path frames a socket's bytes (sockio.c, stream.c,
 * ingress.c), OpenSSL's plaintext goes through the same framers (tls.c),
 * Go's probes read them out of net/http and grpc-go (runtimes/go.c). Each keeps
 * its own state for what is its own (connections' FIFOs and threads; SSL
 * pointers; goroutines and field offsets) and hands over, through these
 * helpers only:
 *
 *  - a request begins on a connection: ingress_reset() on the record
 *    holder (struct claimd_thread) the runtime keeps it in;
 *  - a call begins: egress_log_at() takes its entry in the log of the
 *    request it is tied to (the runtime's own tie: a thread's context, a
 *    goroutine's lineage), and the call keeps that tie (claimd_pending:
 *    ingress_seq, slot); a call tied to none is the runtime's to note as
 *    a call outside requests (outside_calls_add, proc.bpf.h);
 *  - a call ends with its outcome (struct egress_end): egress_ended(),
 *    given the holder of the request it was tied to, settles it in that
 *    request's log while the request is open (egress_settle), else counts
 *    it as a late call or a call outside any request
 *    (egress_count_outside);
 *  - a request ends with its status: ingress_end() judges it and emits
 *    its counts and record;
 *  - a request whose log cannot be trusted is marked so, with the reason,
 *    counted once: ingress_unsure(). A request ends untied
 *    (ingress_untied) if its process made a call outside requests while
 *    it was open (outside_calls_add, proc.bpf.h).
 *
 * Everything else (outcome rules, verdicts, counters, records, the verdict
 * map) is the mechanism's, and no runtime touches it. Static helpers over
 * the maps observer.bpf.c owns; included by it after the verdict and
 * counting fragments they call, before the runtimes.
 */
#ifndef CLAIMD_RUNTIME_BPF_H
#define CLAIMD_RUNTIME_BPF_H

/* The 8 bytes at addr in the current process's memory (a pointer a runtime follows), or 0. */
static __always_inline __u64 user_ptr(__u64 addr)
{
	__u64 v = 0;

	if (!addr || bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/* A power of two: masking an index by it is a bound the verifier can see. */
#define EGRESS_MASK (CLAIMD_EGRESS_MAX - 1)

/* How a call ended. */
struct egress_end {
	__u64 end_ns;
	__u32 status;
	__u32 flags;
	__u32 claim;
	__u32 pad;
};

/*
 * The ingress r cannot be trusted to have seen all its calls: why is
 * CLAIMD_IN_BLIND (bytes moved where the framing was lost) or
 * CLAIMD_IN_UNTIED (a call it may have made that could not be followed).
 * Its verdict becomes unknown (verdict_of). Counted once per ingress, by
 * its first reason, and that reason is the one it keeps.
 */
static __always_inline void ingress_unsure(struct claimd_ingress *r, __u32 why)
{
	if (r->flags & (CLAIMD_IN_BLIND | CLAIMD_IN_UNTIED))
		return;
	r->flags |= why;
	stat_inc(why == CLAIMD_IN_BLIND ? CLAIMD_ST_BLIND : CLAIMD_ST_UNTIED);
}

/*
 * Did the request held by t have a call made for it outside its log? Its
 * process counted a call outside any request begun or ended while it was
 * open (outside_calls, against the count at its start): a worker thread
 * may have made it. A call that began
 * before and ends after goes unnoticed: one that served this request began
 * after it was read, and a failure it caused came back before the answer.
 */
static __always_inline int ingress_untied(const struct claimd_thread *t)
{
	return outside_calls_of(t->rec.tgid) != t->outside_seen;
}

/* The fields an ingress record takes from its connection and request. */
static __always_inline void ingress_fill(struct claimd_ingress *r, struct claimd_conn *c,
					 __u32 tgid, __u32 tid, const struct claimd_pending *p)
{
	r->hdr.type = CLAIMD_REC_INGRESS;
	r->hdr.version = CLAIMD_RECORD_VERSION;
	r->tgid = tgid;
	r->tid = tid;
	r->start_ns = p->start_ns;
	r->local = c->local;
	r->peer = c->remote;
	/* A context is reused for the thread's next requests: its name is kept. */
	if (!r->comm[0])
		proc_comm(r->comm);
	r->egress_dropped = 0;
	r->target_hash = p->target_hash;
	r->method = p->method;
	r->n_egress = 0;
	r->unwritten = 0;
	r->cause = CLAIMD_NO_SLOT;
}

/* bpf/keyed.c: an event loop's request known by its keys no more. */
__noinline int keyed_forget(struct claimd_thread *t);

/* Is the request t holds known by keys, or a stray of them (bpf/keyed.c)? */
static __always_inline __u32 keyed_known(const struct claimd_thread *t)
{
	return t->key_id | t->key_relay | (t->rec.flags & CLAIMD_IN_KEY_STRAY);
}

/*
 * A request begins at time now on connection c (named key), as p says,
 * served by thread tid; t, the holder the runtime keeps it in, starts its
 * record afresh with flags. Returns the request's seq, which ties calls to
 * it: its start, or one more than the holder's last if the clock did not
 * move.
 */
static __always_inline __u64 ingress_reset(struct claimd_thread *t, struct claimd_conn *c,
					   const struct claimd_conn_key *key, __u32 tid, __u64 now,
					   const struct claimd_pending *p, __u32 flags)
{
	struct claimd_outside *o = bpf_map_lookup_elem(&outside_calls, &key->tgid);
	struct claimd_ingress *r = &t->rec;
	__u64 seq = now > r->seq ? now : r->seq + 1;

	/* The request it held, unanswered (pipelined behind), is known by its keys no more. */
	if (keyed_known(t))
		keyed_forget(t);
	ingress_fill(r, c, key->tgid, tid, p);
	t->outside_seen = 0;
	t->slots = 0;
	if (o) {
		t->outside_seen = o->calls;
		/*
		 * It serves: its calls outside requests go on this port's
		 * edges from now on (struct claimd_outside). Written only
		 * when it changes, the line read here anyway.
		 */
		if (o->port != c->local.port)
			o->port = c->local.port;
	}
	r->seq = seq;
	r->end_ns = 0;
	r->flags = flags;
	r->status = 0;
	r->verdict = CLAIM_NONE;
	r->rule = CLAIM_RULE_NONE;
	t->conn = *key;
	return seq;
}

/*
 * The ingress held by t ends with the verdict 'packed' (status 0: no
 * answer) at time now (0: the clock's, read only if the record goes out):
 * its counts, and its record if claimd wants it.
 */
static __always_inline void ingress_emit(struct claimd_thread *t, __u64 now, __u32 status,
					 __u32 flags, __u32 packed, int with_edges)
{
	struct claimd_ingress *r = &t->rec;
	__u32 n = r->n_egress;
	__u32 size;

	if (n > CLAIMD_EGRESS_MAX)
		n = CLAIMD_EGRESS_MAX;
	/*
	 * clang 14 computes the size before the clamp and the verifier
	 * then rejects it ("R2 min value is outside of the allowed memory
	 * range"); the barrier keeps the clamp first.
	 */
	barrier_var(n);
	size = offsetof(struct claimd_ingress, egress) + n * sizeof(struct claimd_egress);
	r->status = status;
	r->flags |= flags;
	r->hdr.size = size;
	/* Unpacked as VERDICT() packed it: verdict, rule, cause, a byte each from the bottom. */
	r->verdict = packed & 0xff;
	r->rule = (packed >> 8) & 0xff;
	r->cause = packed >> 16;
	if (count_request(r, with_edges)) {
		r->end_ns = now ?: bpf_ktime_get_ns();
		emit(r, size);
	}
	slot_show(t, 0, VERDICT(CLAIM_NONE, CLAIM_RULE_NONE, CLAIMD_NO_SLOT), NULL, 0);
	if (keyed_known(t))
		keyed_forget(t);
	t->conn.tgid = 0;
	t->conn.fd = 0;
}

/*
 * The log's length as the slots of the request t holds were taken
 * (egress_log_next): two CPUs logging at once may have stored it out of
 * order; past the log's end, the calls are its egress_dropped.
 */
static __always_inline void egress_log_settle(struct claimd_thread *t)
{
	t->rec.n_egress = t->slots < CLAIMD_EGRESS_MAX ? t->slots : CLAIMD_EGRESS_MAX;
}

/*
 * The request held by t is answered with status (0: none will come), its
 * flags added: untied if a call may have been made for it outside its log
 * (ingress_untied), judged if it failed (verdict_of), then emitted.
 */
static __always_inline void ingress_end(struct claimd_thread *t, __u64 now, __u32 status,
					__u32 flags)
{
	__u32 packed = VERDICT(CLAIM_NONE, CLAIM_RULE_NONE, CLAIMD_NO_SLOT);

	t->rec.flags |= flags;
	egress_log_settle(t);
	if (ingress_untied(t))
		ingress_unsure(&t->rec, CLAIMD_IN_UNTIED);
	if (request_judged(status, t->rec.flags))
		packed = verdict_of(&t->rec);
	ingress_emit(t, now, status, flags, packed, 1);
}

/*
 * A call outside any ingress (or finished after it), of process tgid, on
 * the edge of its service on port (CLAIMD_ROOT_PORT: a root edge): a record
 * of its own.
 */
static __always_inline void egress_emit_root(__u32 tgid, __u16 port, const struct claimd_pending *p,
					     const struct claimd_addr *callee, __u32 status,
					     __u32 flags, __u32 claim, __u64 end_ns, int now)
{
	struct claimd_root_egress *r;

	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		stat_inc(CLAIMD_ST_RB_DROPS);
		return;
	}
	r->hdr.type = CLAIMD_REC_EGRESS;
	r->hdr.version = CLAIMD_RECORD_VERSION;
	r->hdr.size = sizeof(*r);
	r->tgid = tgid;
	r->tid = p->tid;
	proc_comm(r->comm);
	r->local_port = port;
	__builtin_memset(r->pad, 0, sizeof(r->pad));
	r->egress.start_ns = p->start_ns;
	r->egress.end_ns = end_ns;
	r->egress.callee = *callee;
	r->egress.target_hash = p->target_hash;
	r->egress.status = status;
	r->egress.method = p->method;
	r->egress.flags = flags | CLAIMD_EG_DONE;
	r->egress.claim = claim;
	r->egress.proto = p->proto;
	__builtin_memset(r->egress.pad, 0, sizeof(r->egress.pad));
	if (now) {
		/* The process's first: named by its environment even if gone before claimd reads it. */
		service_env_read(r->service);
		submit_now(r);
	} else {
		__builtin_memset(r->service, 0, sizeof(r->service));
		submit(r);
	}
}

/*
 * Would the call p to callee, next after entry n-1 of r's log, retry that
 * entry? The same call again, right after it failed. A refused connect
 * never sent its request: any call to the same callee next is its retry.
 */
static __always_inline __u8 egress_retry_flag(struct claimd_ingress *r, __u32 n,
					      const struct claimd_pending *p,
					      const struct claimd_addr *callee)
{
	struct claimd_egress *prev;

	if (n == 0 || n > CLAIMD_EGRESS_MAX)
		return 0;
	/* Below CLAIMD_EGRESS_MAX by the test above; the mask bounds the index itself. */
	prev = &r->egress[(n - 1) & EGRESS_MASK];
	if ((prev->flags & CLAIMD_EG_DONE) && addr_eq(&prev->callee, callee) &&
	    outcome_is_retry(egress_outcome(prev), prev->flags, prev->method, prev->target_hash,
			     p->method, p->target_hash))
		return CLAIMD_EG_RETRY;
	return 0;
}

/* A log entry for the call p to callee, begun and not answered yet. */
static __always_inline void egress_entry_init(struct claimd_egress *e,
					      const struct claimd_pending *p,
					      const struct claimd_addr *callee, __u8 flags)
{
	e->start_ns = p->start_ns;
	e->end_ns = 0;
	e->callee = *callee;
	e->target_hash = p->target_hash;
	e->status = 0;
	e->method = p->method;
	e->flags = flags;
	e->claim = HTTP_CLAIM_NONE;
	e->proto = p->proto;
}

/*
 * The call p to callee begins, the n-th of the request whose record is r:
 * its entry in r's log, with flags; returns its slot. Past the log's end it
 * is counted in r's egress_dropped (its verdict then unknown: verdict_of),
 * here and nowhere else, and gets CLAIMD_NO_SLOT. Atomic: a runtime's
 * calls of one request may begin on several CPUs at once (Go's fan-out
 * goroutines).
 */
static __always_inline __u8 egress_log_at(struct claimd_ingress *r, __u32 n,
					  const struct claimd_pending *p,
					  const struct claimd_addr *callee, __u8 flags)
{
	if (n >= CLAIMD_EGRESS_MAX) {
		__sync_fetch_and_add(&r->egress_dropped, 1);
		stat_inc(CLAIMD_ST_EGRESS_OVERFLOW);
		return CLAIMD_NO_SLOT;
	}
	/* Below CLAIMD_EGRESS_MAX by the test above; the mask bounds the index itself. */
	egress_entry_init(&r->egress[n & EGRESS_MASK], p, callee,
			  egress_retry_flag(r, n, p, callee) | flags);
	return n;
}

/*
 * A call's entry at the end of the log of the request t holds, flagged
 * flags: its slot (egress_log_at). Taken atomically (t->slots); the log's
 * length follows the highest slot taken (and is settled from the slots
 * before the request is judged: egress_log_settle).
 */
static __always_inline __u8 egress_log_next(struct claimd_thread *t, const struct claimd_pending *p,
					    const struct claimd_addr *callee, __u8 flags)
{
	__u32 n = __sync_fetch_and_add(&t->slots, 1);
	__u8 slot = egress_log_at(&t->rec, n, p, callee, flags);

	if (n < CLAIMD_EGRESS_MAX && t->rec.n_egress <= n)
		t->rec.n_egress = n + 1;
	return slot;
}

/*
 * A call of process tgid that no open request's log takes ended as end
 * says: late (CLAIMD_EG_LATE in its flags: its request was answered),
 * counted apart; else a call outside any request, on the edge of the
 * service the process is (port: proc_service_port) or a root edge
 * (count_root_call). Returns the record claimd wants of it (enum
 * root_record) and its flags as counted (CLAIMD_EG_RETRY added): bits 8
 * to 15, and the low 8. A function of its own: the counting's keys take
 * a frame that calls nothing, beside the record's (egress_emit_outside),
 * not under it, off the stack of the deepest chains (egress_close); global
 * functions both, which the verifier checks once, not at each call site.
 */
__noinline __u32 egress_count_outside(__u32 tgid, __u16 port, const struct claimd_pending *p,
				      const struct claimd_addr *callee,
				      const struct egress_end *end)
{
	enum root_record want;
	__u32 flags;

	if (!p || !callee || !end)
		return ROOT_RECORD_NONE << 8;
	flags = end->flags;
	if (flags & CLAIMD_EG_LATE) {
		/*
		 * Written after its request's answer: in no log, so on its edge
		 * here; ended after it: its request's log counted it.
		 */
		if (p->late)
			want = count_late_call(tgid, port, callee, end->status, &flags);
		else
			want = records_wanted(count_next_id()) ? ROOT_RECORD : ROOT_RECORD_NONE;
		/* Last: claimd reads the counters again once it moves. */
		stat_inc(CLAIMD_ST_LATE_CALLS);
		return want << 8 | (flags & 0xff);
	}
	flags |= CLAIMD_EG_DONE;
	want = count_root_call(tgid, callee, p->start_ns, end->end_ns, p->method, p->target_hash,
			       end->status, &flags, port, p->ancestor);
	return want << 8 | (flags & 0xff);
}

/*
 * Its record, as egress_count_outside said (counted: its answer in the low
 * 16 bits, the port above): a frame of its own beside it.
 */
__noinline int egress_emit_outside(__u32 tgid, const struct claimd_pending *p,
				   const struct claimd_addr *callee, const struct egress_end *end,
				   __u32 counted)
{
	__u32 want = (counted >> 8) & 0xff;

	if (p && callee && end && want != ROOT_RECORD_NONE)
		egress_emit_root(tgid, counted >> 16, p, callee, end->status, counted & 0xff,
				 end->claim, end->end_ns, want == ROOT_RECORD_NOW);
	return 0;
}

/* The call in slot of r's log ended as end says. */
static __always_inline void egress_settle(struct claimd_ingress *r, __u32 slot,
					  const struct egress_end *end)
{
	if (slot < CLAIMD_EGRESS_MAX) {
		/* Below CLAIMD_EGRESS_MAX by the test above; the mask bounds the index itself. */
		struct claimd_egress *e = &r->egress[slot & EGRESS_MASK];

		e->status = end->status;
		e->end_ns = end->end_ns;
		e->flags |= end->flags | CLAIMD_EG_DONE;
		e->claim = end->claim;
	}
	if (end->flags & CLAIMD_EG_LOST)
		ingress_unsure(r, CLAIMD_IN_BLIND);
}

/*
 * The call p to callee, of process tgid, ended as end says. t: the holder
 * of the request it was tied to (p->ingress_seq), as the runtime found it
 * (NULL: none). Into that request's log while it is the same request and
 * still open: its record is returned, for the runtime to show its running
 * verdict if it keeps one. Else the request was answered first (a late
 * call) or there was none: counted apart (egress_count_outside), NULL.
 */
static __always_inline struct claimd_ingress *egress_ended(struct claimd_thread *t, __u32 tgid,
							   const struct claimd_pending *p,
							   const struct claimd_addr *callee,
							   const struct egress_end *end)
{
	struct egress_end late;
	__u32 counted;
	__u16 port;

	if (p->ingress_seq) {
		if (t && t->conn.tgid && t->rec.seq == p->ingress_seq) {
			egress_settle(&t->rec, p->slot, end);
			return &t->rec;
		}
		late = *end;
		late.flags |= CLAIMD_EG_LATE;
		end = &late;
	}
	port = proc_service_port(tgid);
	counted = egress_count_outside(tgid, port, p, callee, end);
	egress_emit_outside(tgid, p, callee, end, counted | (__u32)port << 16);
	return NULL;
}

#endif /* CLAIMD_RUNTIME_BPF_H */
