// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c. Counting in the kernel (headers/counts.h has
 * the rules): at its answer, a request goes into its service's counts and
 * its calls into their edges' counts, per CPU; its record goes to claimd
 * only when asked for (records_on, sample_every) or when a counter map had
 * no room.
 */

static const struct claimd_edge_counts zero_edge_counts;

/*
 * A new id for a request being counted, unique among this CPU's (a program
 * runs on one CPU from start to end, though it may be preempted there).
 */
static __always_inline __u64 count_next_id(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&count_ids, &zero);

	if (!n)
		return 0;
	return __sync_fetch_and_add(n, 1) + 1;
}

/* A map's value for key on this CPU, made (zero) if new; NULL: the map is full. */
static __always_inline void *counts_get(void *map, const void *key, const void *zero)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/*
 * A counter changed (this CPU's value; noted: its epoch field): the first
 * time in claimd's epoch, a place for its key in this CPU's dirty list of
 * lists (headers/counts.h). Returns the list with *i set, or NULL (noted
 * already, or the list full: then it says so). The index is taken
 * atomically: a preempting program takes the next one.
 */
static __always_inline void *dirty_claim(__u64 *noted, void *lists, __u32 *i)
{
	__u32 epoch = count_epoch, slot = epoch & 1;
	struct claimd_dirty_head *d;

	if (*noted == epoch)
		return NULL;
	*noted = epoch;
	d = bpf_map_lookup_elem(lists, &slot);
	if (!d)
		return NULL;
	*i = __sync_fetch_and_add(&d->n, 1);
	if (*i < CLAIMD_DIRTY_MAX)
		return d;
	d->overflow = 1;
	return NULL;
}

static __always_inline void dirty_edge(struct claimd_edge_counts *c,
				       const struct claimd_edge_key *key)
{
	struct claimd_dirty_edges *d;
	__u32 i;

	d = dirty_claim(&c->epoch, &dirty_edges, &i);
	if (d && i < CLAIMD_DIRTY_MAX)
		d->keys[i] = *key;
}

static __always_inline void dirty_service(struct claimd_service_counts *s,
					  const struct claimd_service_key *key)
{
	struct claimd_dirty_services *d;
	__u32 i;

	d = dirty_claim(&s->epoch, &dirty_services, &i);
	if (d && i < CLAIMD_DIRTY_MAX)
		d->keys[i] = *key;
}

struct count_walk {
	struct claimd_ingress *r;
	struct claimd_edge_key key;
	struct retry_walk retry;
	__u64 id;
	__u32 n;
	__u32 request_failed;
	__u32 teaches;
	__u32 refused;
};

/* One call, newest first. */
static long count_step(__u64 k, void *data)
{
	struct count_walk *w = data;
	__u32 i = w->n - 1 - (__u32)k;
	struct claimd_edge_counts *c;
	struct claimd_egress *e;
	int failed;

	if (i >= CLAIMD_EGRESS_MAX)
		return 1;
	e = &w->r->egress[i];
	failed = retry_walk__failed(&w->retry, e->status, e->flags, fail_status_min);
	w->key.callee_port = e->callee.port;
	__builtin_memcpy(w->key.callee_addr, e->callee.addr, 16);
	c = counts_get(&edge_counts, &w->key, &zero_edge_counts);
	if (!c) {
		e->flags |= CLAIMD_EG_UNCOUNTED;
		w->refused = 1;
		return 0;
	}
	counts_add_call(c, w->id, failed, w->request_failed, w->teaches, e->flags);
	dirty_edge(c, &w->key);
	return 0;
}

/*
 * The calls of the answered request r into their edges; teaches: whether
 * the request teaches their class too (headers/counts.h). Returns 1 if the
 * map refused one (marked CLAIMD_EG_UNCOUNTED), else 0. A global function,
 * its loop a bpf_loop, as verdict_of.
 */
__noinline __u32 count_edges(struct claimd_ingress *r, __u64 id, __u32 request_failed,
			     __u32 teaches)
{
	struct count_walk w = {
		.r = r, .id = id, .request_failed = request_failed, .teaches = teaches
	};

	if (!r)
		return 0;
	w.key.tgid = r->tgid;
	w.key.local_port = r->local.port;
	w.n = r->n_egress < CLAIMD_EGRESS_MAX ? r->n_egress : CLAIMD_EGRESS_MAX;
	bpf_loop(w.n, count_step, &w, 0);
	return w.refused;
}

/*
 * The slot of this CPU that owner's counts go to: the first of its probes
 * that it holds, or that is free and it takes (a program preempting this
 * one on the CPU may take it first: then it is held, or another's). NULL:
 * all held by others.
 */
static __always_inline struct claimd_service_counts *service_slot(__u64 owner)
{
	struct claimd_service_counts *s;
	__u32 probe, idx;
	__u64 held;

	for (probe = 0; probe < CLAIMD_SERVICE_PROBES; probe++) {
		idx = claimd_service_slot(owner, probe);
		s = bpf_map_lookup_elem(&service_counts, &idx);
		if (!s)
			return NULL;
		held = s->owner;
		/* Free: taken, unless a preempting program took it first (the swap says whom for). */
		if (!held)
			held = __sync_val_compare_and_swap(&s->owner, 0, owner) ?: owner;
		if (held == owner)
			return s;
	}
	return NULL;
}

/*
 * A request of service instance owner (claimd_service_owner), answered
 * with status and flags, judged verdict by rule (VR), into its counts;
 * false when its slots were all held. A function of its own: the slots'
 * walk would widen ingress_close's frame, on the deepest chain (stream.c).
 */
#define VR(verdict, rule) ((verdict) << 8 | (rule))
static __noinline int count_service(__u64 owner, __u32 status, __u32 flags, __u32 vr)
{
	struct claimd_service_key sk = claimd_service_key_of(owner);
	struct claimd_service_counts *s = service_slot(owner);

	if (!s)
		return 0;
	counts_add_request(s, status, flags, vr >> 8, vr & 0xff, fail_status_min);
	dirty_service(s, &sk);
	return 1;
}

/* At most this many CPUs' slots are given back (bpf_map_lookup_percpu_elem stops sooner). */
#define FORGET_CPUS_MAX 8192

/* Zeroes and frees, on CPU cpu, the slots *owner holds; 1 past the last CPU. */
static long forget_service_on(__u64 cpu, void *owner)
{
	__u64 who = *(__u64 *)owner;
	struct claimd_service_counts *s;
	__u32 probe, idx, i;

	for (probe = 0; probe < CLAIMD_SERVICE_PROBES; probe++) {
		idx = claimd_service_slot(who, probe);
		s = bpf_map_lookup_percpu_elem(&service_counts, &idx, (__u32)cpu);
		if (!s)
			return 1;
		if (s->owner != who)
			continue;
		/* The counts first, the owner last: whoever takes the slot next finds it zeroed. */
		for (i = 2; i < sizeof(*s) / sizeof(__u64); i++)
			((__u64 *)s)[i] = 0;
		s->epoch = 0;
		__sync_val_compare_and_swap(&s->owner, who, 0);
	}
	return 0;
}

/*
 * claimd gives back the slots of a service instance whose process is gone
 * (claimd_service_slot, headers/counts.h), on every CPU, after its last
 * read: run with BPF_PROG_TEST_RUN, args[0] its owner word. Never attached.
 */
SEC("raw_tp")
int claimd_forget_services(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 owner = ctx->args[0];

	if (owner)
		bpf_loop(FORGET_CPUS_MAX, forget_service_on, &owner, 0);
	return 0;
}

/* Does claimd want the record of the request counted as id? */
static __always_inline int records_wanted(__u64 id)
{
	return records_on || (sample_every && id % sample_every == 0);
}

/*
 * Counts the answered request r (its status, flags and verdict set), its
 * egress log its own: every call of its log on its edge, teaching the
 * edge's class only if the request can (counts_teaches_edges, not
 * multiplexed, but for an event loop's request its calls were tied to by
 * keys: keyed.c); with_edges 0 (a constant) where the log is lost with the
 * framing, to keep count_edges's frames off deep paths. Returns true when
 * its record must go to claimd: asked for, or a counter map refused part
 * of it (then marked in r).
 */
static __always_inline int count_request(struct claimd_ingress *r, int with_edges)
{
	int edges = with_edges && r->n_egress;
	/*
	 * An id only where one is used (an edge's failure counted once per
	 * request, or a sample taken): taking one is an atomic add on a cache
	 * line of its own, in a profile of a traced service the costliest
	 * instruction of answering a request.
	 */
	__u64 id = edges || sample_every ? count_next_id() : 0;
	int refused = 0;

	if (!count_service(claimd_service_owner(r->tgid, r->local.port), r->status, r->flags,
			   VR(r->verdict, r->rule))) {
		r->flags |= CLAIMD_IN_UNCOUNTED;
		refused = 1;
	}
	if (edges)
		refused |= count_edges(
			r, id,
			outcome_judged(outcome_of_request(r->status, r->flags, fail_status_min)),
			counts_teaches_edges(r->rule, r->flags, r->egress_dropped) &&
				((r->flags & CLAIMD_IN_KEYED) ||
				 !(proc_flags(r->tgid) & PROC_MUX)));
	if (refused)
		stat_inc(CLAIMD_ST_COUNTS_FULL);
	/* Last: claimd reads the counters again once it sees this one move. */
	stat_inc(CLAIMD_ST_COUNTED);
	return refused || records_wanted(id);
}

/*
 * Is the root call of tgid, the current process (begun at start_ns, method,
 * target) to callee, which ended with outcome at end_ns, a retry of its last
 * call there? Remembers it as that callee's last call. *first: this is the
 * process's first call outside requests claimd sees. own_thread: only a
 * last call of the same thread is retried (a service's, headers/counts.h).
 */
static __always_inline int root_call_is_retry(__u32 tgid, const struct claimd_addr *callee,
					      __u64 start_ns, __u64 end_ns, __u32 method,
					      __u32 target_hash, __u32 outcome, __u32 flags,
					      int own_thread, int *first)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	struct root_memory *m;
	struct root_memory_slot *s = NULL;
	int retry = 0, i;

	*first = 0;
	if (id >> 32 != tgid)
		return 0; /* not the caller's own thread: no memory at hand */
	m = bpf_task_storage_get(&root_memory, task->group_leader, 0, 0);
	if (!m) {
		*first = 1;
		m = bpf_task_storage_get(&root_memory, task->group_leader, 0,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!m)
			return 0;
	}
	for (i = 0; i < ROOT_MEMORY_SLOTS; i++)
		if (m->slot[i].last.end_ns && addr_eq(&m->slot[i].callee, callee)) {
			s = &m->slot[i];
			retry = counts_root_is_retry(&s->last, start_ns, method, target_hash) &&
				(!own_thread || s->last.tid == (__u32)id);
			break;
		}
	if (!s) {
		/* Round robin over a power of two: the mask wraps it and bounds the index. */
		s = &m->slot[m->next & (ROOT_MEMORY_SLOTS - 1)];
		m->next++;
		s->callee = *callee;
	}
	s->last.end_ns = end_ns ? end_ns : 1;
	s->last.target_hash = target_hash;
	s->last.flags = flags;
	s->last.method = method;
	s->last.outcome = outcome;
	s->last.tid = (__u32)id;
	return retry;
}

/* What a root call's record needs: none, one, one claimd reads at once. */
enum root_record {
	ROOT_RECORD_NONE = 0,
	ROOT_RECORD,
	ROOT_RECORD_NOW,
};

/*
 * One call, counted as request id, on the edge key names (the callee's
 * half filled in here from callee), ended with outcome: 1; 0 when the
 * counter map had no room (CLAIMD_EG_UNCOUNTED added to *flags: claimd
 * counts it from its record). A call alone teaches no class.
 */
static __always_inline int count_edge_call(struct claimd_edge_key *key,
					   const struct claimd_addr *callee, __u64 id,
					   __u32 outcome, __u32 *flags)
{
	struct claimd_edge_counts *c;

	key->callee_port = callee->port;
	__builtin_memcpy(key->callee_addr, callee->addr, 16);
	c = counts_get(&edge_counts, key, &zero_edge_counts);
	if (!c) {
		*flags |= CLAIMD_EG_UNCOUNTED;
		stat_inc(CLAIMD_ST_COUNTS_FULL);
		return 0;
	}
	counts_add_call(c, id, outcome == CLAIMD_OUTCOME_FAILED, 0, 0, *flags);
	dirty_edge(c, key);
	return 1;
}

/*
 * A call of the service tgid (port: its service's, proc_service_port)
 * written after the request it was made for was answered
 * (claimd_pending.late): in no request's log, so counted here on its
 * service's edge, as a call outside requests is, but for whose it is: no
 * request open meanwhile is made unknown by it, and no retry is looked
 * for (that is the log's). It teaches no class. Its record when asked
 * for, or at once if the counter map refused it (CLAIMD_EG_UNCOUNTED).
 * The caller counts it in late_calls, last: claimd reads the counters
 * again once that moves.
 */
static __always_inline enum root_record count_late_call(__u32 tgid, __u16 port,
							const struct claimd_addr *callee,
							__u32 status, __u32 *flags)
{
	struct claimd_edge_key key = { .tgid = tgid, .local_port = port };
	__u64 id = count_next_id();

	if (!count_edge_call(&key, callee, id, outcome_of_call(status, *flags, fail_status_min),
			     flags))
		return ROOT_RECORD_NOW;
	return records_wanted(id) ? ROOT_RECORD : ROOT_RECORD_NONE;
}

/*
 * A call of the process tgid outside any request ended. A process that
 * serves (it served a request or listens: proc_service_port) counts it on
 * its service's edge (headers/counts.h), and makes the requests open
 * meanwhile unknown (outside_calls_add): its thread may have served one of
 * them. Any other's is a root call, on its root edge; and a call outside
 * the requests of its nearest ancestor that serves, if a service ran it
 * (ancestor: the one found at the call's start, outside_calls_add_known).
 * Either way CLAIMD_EG_RETRY is added to *flags when it retries the last
 * one. port: the process's service's (proc_service_port), the edge it goes
 * on (CLAIMD_ROOT_PORT: a root edge), read by the caller, whose record says
 * it too. Its record goes to claimd (enum root_record) when asked for,
 * when the counter map refused it (then CLAIMD_EG_UNCOUNTED), and at once
 * for the process's first (claimd names it while it lives).
 */
static __always_inline enum root_record count_root_call(__u32 tgid,
							const struct claimd_addr *callee,
							__u64 start_ns, __u64 end_ns, __u32 method,
							__u32 target_hash, __u32 status,
							__u32 *flags, __u16 port, __u32 ancestor)
{
	struct claimd_edge_key key = { .tgid = tgid, .local_port = port };
	__u32 outcome = outcome_of_call(status, *flags, fail_status_min);
	__u64 id = count_next_id();
	int first;

	if (key.local_port != CLAIMD_ROOT_PORT)
		outside_calls_add(tgid);
	else /* a root call, unless a service ran the command that made it */
		outside_calls_add_known(tgid, ancestor);
	if (root_call_is_retry(tgid, callee, start_ns, end_ns, method, target_hash, outcome, *flags,
			       key.local_port != CLAIMD_ROOT_PORT, &first))
		*flags |= CLAIMD_EG_RETRY;
	if (!count_edge_call(&key, callee, id, outcome, flags))
		return first ? ROOT_RECORD_NOW : ROOT_RECORD;
	/* Last, as for requests: claimd reads the counters once either moves. */
	stat_inc(key.local_port != CLAIMD_ROOT_PORT ? CLAIMD_ST_CALLS_OUTSIDE
						    : CLAIMD_ST_ROOT_CALLS);
	if (first)
		return ROOT_RECORD_NOW;
	return records_wanted(id) ? ROOT_RECORD : ROOT_RECORD_NONE;
}
