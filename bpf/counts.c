// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c. Counting in the kernel (headers/counts.h has
 * the rules): at its answer, a request goes into its service's counts and
 * its calls into their edges' counts, per CPU; its record goes to claimd
 * only when asked for (records_on, sample_every) or when a counter map had
 * no room.
 */

static const struct claimd_edge_counts zero_edge_counts;
static const struct claimd_service_counts zero_service_counts;

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

struct count_walk {
	struct claimd_ingress *r;
	struct claimd_edge_key key;
	struct retry_walk retry;
	__u64 id;
	__u32 n;
	__u32 request_failed;
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
	counts_add_call(c, w->id, failed, w->request_failed, e->flags);
	return 0;
}

/*
 * The calls of the answered request r into their edges. Returns 1 if the
 * map refused one (marked CLAIMD_EG_UNCOUNTED), else 0. A global function,
 * its loop a bpf_loop, as verdict_of.
 */
__noinline __u32 count_edges(struct claimd_ingress *r, __u64 id, __u32 request_failed)
{
	struct count_walk w = { .r = r, .id = id, .request_failed = request_failed };

	if (!r)
		return 0;
	w.key.tgid = r->tgid;
	w.key.local_port = r->local.port;
	w.n = r->n_egress < CLAIMD_EGRESS_MAX ? r->n_egress : CLAIMD_EGRESS_MAX;
	bpf_loop(w.n, count_step, &w, 0);
	return w.refused;
}

/* A request into its service's counts; false when the map refused it. */
static __always_inline int count_service(__u32 tgid, __u16 port, __u32 status, __u32 flags,
					 __u32 verdict, __u32 rule)
{
	struct claimd_service_key sk = { .tgid = tgid, .local_port = port };
	struct claimd_service_counts *s;

	s = counts_get(&service_counts, &sk, &zero_service_counts);
	if (!s)
		return 0;
	counts_add_request(s, status, flags, verdict, rule, fail_status_min);
	return 1;
}

/* Does claimd want the record of the request counted as id? */
static __always_inline int records_wanted(__u64 id)
{
	return records_on || (sample_every && id % sample_every == 0);
}

/*
 * Counts the answered request r (its status, flags and verdict set), its
 * egress log its own; with_edges 0 (a constant) where the request cannot
 * teach its edges, to keep count_edges's frames off deep paths. Returns true when its record must go to claimd: asked
 * for, or a counter map refused part of it (then marked in r).
 */
static __always_inline int count_request(struct claimd_ingress *r, int with_edges)
{
	__u64 id = count_next_id();
	int refused = 0;

	if (!count_service(r->tgid, r->local.port, r->status, r->flags, r->verdict, r->rule)) {
		r->flags |= CLAIMD_IN_UNCOUNTED;
		refused = 1;
	}
	if (with_edges && r->n_egress &&
	    counts_teaches_edges(r->rule, r->flags, r->egress_dropped) &&
	    !(proc_flags(r->tgid) & PROC_MUX))
		refused |= count_edges(
			r, id,
			outcome_judged(outcome_of_request(r->status, r->flags, fail_status_min)));
	if (refused)
		stat_inc(CLAIMD_ST_COUNTS_FULL);
	/* Last: claimd reads the counters again once it sees this one move. */
	stat_inc(CLAIMD_ST_COUNTED);
	return refused || records_wanted(id);
}
