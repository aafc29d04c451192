// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c. Ownership verdicts in the kernel
 * (headers/verdict.h has the rules): the classes claimd learned per edge, the
 * verdict of a failed ingress at the moment its response is written, and each
 * thread's running verdict in the mmapable map libclaim reads.
 */

_Static_assert(sizeof(struct claim_map_header) == sizeof(struct claim_slot),
	       "the header is slot 0");
_Static_assert(sizeof(struct claim_slot) == 64, "a slot is a cache line");

/* headers/outcome.h's rules under claimd's --fail-status. */
static __always_inline __u32 egress_outcome(const struct claimd_egress *e)
{
	return outcome_of_call(e->status, e->flags, fail_status_min);
}

static __always_inline int request_judged(__u32 status, __u32 in_flags)
{
	return outcome_judged(outcome_of_request(status, in_flags, fail_status_min));
}

static __always_inline int addr_eq(const struct claimd_addr *a, const struct claimd_addr *b)
{
	const __u64 *x = (const __u64 *)a->addr, *y = (const __u64 *)b->addr;

	return x[0] == y[0] && x[1] == y[1] && a->port == b->port;
}

/* Packs a verdict, the rule that gave it and the index of its cause. */
#define VERDICT(v, rule, cause) ((v) | ((rule) << 8) | ((cause) << 16))

struct verdict_walk {
	struct claimd_ingress *r;
	struct claimd_edge_key key;
	__u32 n;
	struct retry_walk retry;
	__u32 unknown;	  /* newest failed egress on an unknown edge */
	__u32 open;	  /* newest failed egress on a fail-open edge */
	__u32 unfinished; /* a call not awaited, still without an end */
	__u32 decided;	  /* a rule-2 verdict, packed, or 0 */
};

/* One egress, newest first; stops at the first rule-2 verdict. */
static long verdict_step(__u64 k, void *data)
{
	struct verdict_walk *w = data;
	__u32 i = w->n - 1 - (__u32)k;
	struct claimd_egress *e;
	__u8 *cls;

	if (i >= CLAIMD_EGRESS_MAX)
		return 1;
	e = &w->r->egress[i];
	if (!retry_walk__failed(&w->retry, e->status, e->flags, fail_status_min)) {
		if (outcome_call_left_running(e->flags))
			w->unfinished = 1;
		return 0;
	}
	if (e->claim == HTTP_CLAIM_UNCLAIMED) {
		w->decided = VERDICT(CLAIM_UNCLAIMED, CLAIM_RULE_HEADER, i);
		return 1;
	}
	w->key.callee_port = e->callee.port;
	__builtin_memcpy(w->key.callee_addr, e->callee.addr, 16);
	cls = bpf_map_lookup_elem(&edge_class, &w->key);
	if (cls && *cls == CLAIM_CLASS_FAIL_CLOSE) {
		w->decided = VERDICT(CLAIM_UNCLAIMED, CLAIM_RULE_FAIL_CLOSE, i);
		return 1;
	}
	if (cls && *cls == CLAIM_CLASS_FAIL_OPEN) {
		if (w->open == CLAIMD_NO_SLOT)
			w->open = i;
	} else if (w->unknown == CLAIMD_NO_SLOT) {
		w->unknown = i;
	}
	return 0;
}

/*
 * The verdict the ingress r would get if it failed now. Walks the log from
 * the newest call back: a call retried right after it (CLAIMD_EG_RETRY on
 * the next entry) is superseded by its retry. A global function, its loop a
 * bpf_loop: as a plain loop it cost 160k verified instructions per program
 * (clang 14, Linux 6.18), the walk's variables keeping states apart.
 */
__noinline __u32 verdict_of(struct claimd_ingress *r)
{
	struct verdict_walk w = {
		.r = r,
		.unknown = CLAIMD_NO_SLOT,
		.open = CLAIMD_NO_SLOT,
	};
	__u32 pf;

	if (!r)
		return VERDICT(CLAIM_UNKNOWN, CLAIM_RULE_NO_LOG, CLAIMD_NO_SLOT);
	pf = proc_flags(r->tgid);
	/*
	 * Its process's program unread: its syscalls may not tell its requests
	 * apart (Go). So for a request of a Go program framed by its syscalls
	 * read before that was known (not CLAIMD_IN_GO): held by a thread.
	 */
	if ((pf & PROC_UNREAD) || ((pf & PROC_GO_SYSCALLS) && !(r->flags & CLAIMD_IN_GO)))
		return VERDICT(CLAIM_UNKNOWN, CLAIM_RULE_UNREAD_PROGRAM, CLAIMD_NO_SLOT);
	/* Its log may hold other requests' calls: no confident answer (but keyed: keyed.c). */
	if ((r->flags & CLAIMD_IN_MUX) || (!(r->flags & CLAIMD_IN_KEYED) && (pf & PROC_MUX)))
		return VERDICT(CLAIM_UNKNOWN, CLAIM_RULE_MULTIPLEXED, CLAIMD_NO_SLOT);
	/* Its log may miss calls, or their answers: never a verdict built on them. */
	if ((r->flags & CLAIMD_IN_UNTIED) || r->egress_dropped || (pf & PROC_UNSEEDED))
		return VERDICT(CLAIM_UNKNOWN, CLAIM_RULE_UNTIED_CALL, CLAIMD_NO_SLOT);
	if (r->flags & (CLAIMD_IN_BLIND | CLAIMD_IN_LOST))
		return VERDICT(CLAIM_UNKNOWN, CLAIM_RULE_FRAMING_LOST, CLAIMD_NO_SLOT);
	w.key.tgid = r->tgid;
	w.key.local_port = r->local.port;
	w.n = r->n_egress < CLAIMD_EGRESS_MAX ? r->n_egress : CLAIMD_EGRESS_MAX;
	bpf_loop(CLAIMD_EGRESS_MAX, verdict_step, &w, 0);
	if (w.decided)
		return w.decided;
	if (w.unknown != CLAIMD_NO_SLOT)
		return VERDICT(CLAIM_UNCLAIMED, CLAIM_RULE_UNKNOWN_EDGE, w.unknown);
	/*
	 * A call the request did not wait for was still running: it may be
	 * the one its service gave up on, the cause, or one left to finish on
	 * its own; so may a call handed to a connection, its head not yet
	 * seen written (claimd_ingress.unwritten). Rules 2 and 4 stand
	 * without it (a failed call that passed the failure up is seen);
	 * rules 1 and 3 would not.
	 */
	if (w.unfinished || r->unwritten)
		return VERDICT(CLAIM_UNKNOWN, CLAIM_RULE_UNFINISHED_CALL, CLAIMD_NO_SLOT);
	/* So may a dependency claimd cannot read (a database): it may have failed. */
	if (r->flags & CLAIMD_IN_OPAQUE)
		return VERDICT(CLAIM_UNKNOWN, CLAIM_RULE_OPAQUE_CALL, CLAIMD_NO_SLOT);
	if (w.open != CLAIMD_NO_SLOT)
		return VERDICT(CLAIM_CLAIMED, CLAIM_RULE_FAIL_OPEN, w.open);
	return VERDICT(CLAIM_CLAIMED, CLAIM_RULE_NO_FAILED_EGRESS, CLAIMD_NO_SLOT);
}

/*
 * Does slot s say already what slot_fill would write, cause (port, addr)
 * aside? A slot not being written (even seq) only.
 */
static __always_inline int slot_says(const struct claim_slot *s, __u32 tid, __u32 tgid, __u64 g,
				     __u8 active, __u32 packed, __u32 outside_seen)
{
	return !(s->seq & 1) && s->tid == tid && s->goroutine == g && s->tgid == tgid &&
	       s->outside_seen == outside_seen && s->active == active &&
	       s->verdict == (packed & 0xff) && s->rule == ((packed >> 8) & 0xff);
}

/*
 * Slot idx of the verdict map, seqlock-written: thread tid's (goroutine g
 * 0), or goroutine g's of process tgid (tid 0); outside_seen, its request's
 * (struct claimd_thread), for claim_proc_unsure. Its proc_word is not the
 * slot's: proc_word_publish's. A write that would change nothing is not
 * made: a reader never waits on it (a request's log settles a call on one
 * thread while the goroutine or thread serving it reads its slot on
 * another, and a writer preempted mid-write holds the slot odd).
 */
static __always_inline void slot_fill(__u32 idx, __u32 tid, __u32 tgid, __u64 g, __u8 active,
				      __u32 packed, const struct claimd_ingress *r,
				      __u32 outside_seen)
{
	struct claim_slot *s = bpf_map_lookup_elem(&verdicts, &idx);
	__u32 cause = packed >> 16;
	__u16 port = 0;
	__u64 a0 = 0, a1 = 0;

	if (!s)
		return;
	if (r && cause < CLAIMD_EGRESS_MAX) {
		port = r->egress[cause].callee.port;
		__builtin_memcpy(&a0, r->egress[cause].callee.addr, 8);
		__builtin_memcpy(&a1, r->egress[cause].callee.addr + 8, 8);
	}
	if (slot_says(s, tid, tgid, g, active, packed, outside_seen) && s->cause_port == port &&
	    *(__u64 *)s->cause_addr == a0 && *(__u64 *)(s->cause_addr + 8) == a1)
		return;
	s->seq++;
	barrier();
	s->tid = tid;
	s->goroutine = g;
	s->tgid = tgid;
	s->outside_seen = outside_seen;
	s->active = active;
	/* As VERDICT() packs them: verdict, rule, cause, from the bottom byte up. */
	s->verdict = packed & 0xff;
	s->rule = (packed >> 8) & 0xff;
	s->cause_port = port;
	__builtin_memcpy(s->cause_addr, &a0, 8);
	__builtin_memcpy(s->cause_addr + 8, &a1, 8);
	barrier();
	s->seq++;
}

/* The thread's slot in the verdict map. */
static __always_inline void slot_write(__u32 tid, __u8 active, __u32 packed,
				       const struct claimd_ingress *r, __u32 outside_seen)
{
	slot_fill(claim_thread_index(tid), tid, 0, 0, active, packed, r, outside_seen);
}

/*
 * The slot that shows the request t holds: its goroutine's, for a Go
 * program framed by its syscalls (libclaim's Go package reads that one),
 * else its thread's.
 */
static __always_inline void slot_show(const struct claimd_thread *t, __u8 active, __u32 packed,
				      const struct claimd_ingress *r, __u32 outside_seen)
{
	if (t->g)
		slot_fill(claim_goroutine_index(t->rec.tgid, t->g), 0, t->rec.tgid, t->g, active,
			  packed, r, outside_seen);
	else
		slot_write(t->rec.tid, active, packed, r, outside_seen);
}

/* The holder of ingress record r (every slot's ingress is one's: struct claimd_thread). */
static __always_inline const struct claimd_thread *holder_of(const struct claimd_ingress *r)
{
	return (const void *)((const char *)r - offsetof(struct claimd_thread, rec));
}

/*
 * Writes the map's header: claimd runs it with BPF_PROG_TEST_RUN (the map is
 * frozen to the bpf() syscall, even for claimd). Never attached.
 */
SEC("raw_tp")
int claimd_hdr(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 arg = ctx->args[0]; /* struct claim_hdr_args, as one u64 */
	struct claim_hdr_args a = { .alive = (__u32)arg, .generation = arg >> 32 };
	struct claim_map_header *h;
	__u32 zero = 0;

	h = bpf_map_lookup_elem(&verdicts, &zero);
	if (!h)
		return 1;
	h->magic = CLAIM_MAP_MAGIC;
	h->version = CLAIM_MAP_VERSION;
	h->slots = CLAIM_SLOTS;
	h->slot_size = sizeof(struct claim_slot);
	h->generation = a.generation;
	h->alive = a.alive;
	return 0;
}

/* The running verdict of the ingress r after its log changed. */
static __always_inline void slot_refresh(struct claimd_ingress *r)
{
	const struct claimd_thread *t = holder_of(r);

	slot_show(t, 1, verdict_of(r), r, t->outside_seen);
}
