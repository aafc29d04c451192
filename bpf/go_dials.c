// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c: the connects a Go program framed by its
 * syscalls makes on goroutines serving no request. net/http's transport
 * dials on goroutines of its own, several at once, and hands the new
 * connection (or the dial's error) to whichever request waits. A dial
 * whose failure no state change shows (to a socket file; over TCP, before
 * its SYN) is a call outside requests: every request the process has open
 * is then unsure (untied-call).
 *
 * Each such dial takes a slot of its process's table (go_dials) where the
 * connect begins, and gives it back when its SYN leaves, or when an answer
 * the process writes finds it returned (go_dials_settle): connected, its
 * calls are its bytes'; failed, or its socket another's by then, the
 * process's open requests become unknown. An answer may be written by
 * another thread while the dial is still in its connect: a socket file's
 * peer is set, and a TCP socket's SYN leaves, only at the connect's end,
 * so the socket would look failed then. Such a dial keeps its slot until
 * an answer finds its thread out of connect(2) (go_dial_under_way). The
 * request waiting on the dial cannot answer before the dial returns, and
 * the thread leaves the call before its error reaches that request.
 */

/*
 * Is the thread tid, whose task_struct was at task, still in connect(2)?
 * Its saved registers, at the top of its kernel stack (as far from its
 * stack's base as the current task's are from its own), name the syscall
 * it is in, or, once it is back in user space, the last one until its
 * next entry (an interrupt's, at the latest the next tick). A thread gone
 * (its memory another task's, or freed: read through a cast, a fault
 * reads 0) is not. Asked only of a dial that looks unconnected.
 */
static __always_inline int go_dial_under_way(__u64 task, __u32 tid)
{
	struct task_struct *me = bpf_get_current_task_btf();
	struct task_struct *t =
		bpf_rdonly_cast((void *)task, bpf_core_type_id_kernel(struct task_struct));
	struct pt_regs *mine = (struct pt_regs *)bpf_task_pt_regs(me), *regs;
	__u64 at = 0;

	if (t->pid != tid)
		return 0;
	/* The current task's registers' address as a number: the verifier adds no pointer to one. */
	if (bpf_probe_read_kernel(&at, sizeof(at), &mine))
		return 1;
	regs = bpf_rdonly_cast((void *)((__u64)t->stack + (at - (__u64)me->stack)),
			       bpf_core_type_id_kernel(struct pt_regs));
	return SYSNR_OF(regs) == SYSNR_CONNECT;
}

/* A zeroed table, a process's first. */
static const struct go_dials go_dials_empty;

/*
 * Process tgid's thread tid begins a connect of the socket at sk (its
 * cookie, over TCP if tcp) on a goroutine serving no request: a slot of
 * its table. None to be had (the table full, or the process's dials too
 * many at once): its outcome will not be read, so the requests open now,
 * the one it is for among them, are unsure at once.
 */
static __always_inline void go_dial_put(__u32 tgid, __u32 tid, __u64 sk, __u64 cookie, __u32 tcp)
{
	struct go_dials *w = bpf_map_lookup_elem(&go_dials, &tgid);
	__u32 i;

	if (!w) {
		bpf_map_update_elem(&go_dials, &tgid, &go_dials_empty, BPF_NOEXIST);
		w = bpf_map_lookup_elem(&go_dials, &tgid);
	}
	for (i = 0; w && i < GO_DIAL_SLOTS; i++) {
		struct go_dial *d = &w->d[i];

		if (__sync_val_compare_and_swap(&d->sk, 0, sk) != 0)
			continue;
		d->cookie = cookie;
		d->task = bpf_get_current_task();
		d->tid = tid;
		d->armed =
			GO_DIAL_ARMED | (tcp ? GO_DIAL_TCP : 0) | (__u32)cookie << GO_DIAL_COOKIE;
		connect_notes_add(tgid, 1);
		return;
	}
	stat_inc(CLAIMD_ST_CONNECT_UNREAD);
	outside_call_untied(tgid);
}

/*
 * The slot d, armed as armed, given back: 1 if this CPU did (another may
 * race it). armed carries its socket's cookie: a slot given back and taken
 * again by another dial while this CPU read it is not this one's to take.
 */
static __always_inline int go_dial_take(__u32 tgid, struct go_dial *d, __u32 armed)
{
	if (__sync_val_compare_and_swap(&d->armed, armed, 0) != armed)
		return 0;
	d->sk = 0;
	connect_notes_add(tgid, -1);
	return 1;
}

/* The SYN of the socket at sk leaves, in process tgid: its failure is the state change's now. */
static __always_inline void go_dial_sent(__u32 tgid, __u64 sk)
{
	struct go_dials *w = bpf_map_lookup_elem(&go_dials, &tgid);
	__u32 i;

	for (i = 0; w && i < GO_DIAL_SLOTS; i++) {
		struct go_dial *d = &w->d[i];
		__u32 armed = d->armed;

		if (armed && d->sk == sk) {
			go_dial_take(tgid, d, armed);
			return;
		}
	}
}

/* go_dials_settle's walk through one process's slots. */
struct go_settle {
	struct go_dials *w;
	__u32 tgid;
	__u32 tid;    /* the thread writing the answer */
	__u32 failed; /* dials found failed */
	__u32 unread; /* ... found with their socket another's: outcome unknown */
};

static long go_dial_step(__u64 i, void *data)
{
	struct go_settle *g = data;
	struct go_dial *d = &g->w->d[i & (GO_DIAL_SLOTS - 1)];
	__u32 armed = d->armed;
	int made;

	if (!armed)
		return 0;
	made = connect_outcome(d->sk, d->cookie, armed & GO_DIAL_TCP);
	if (made == CONNECT_FAILED && d->tid != g->tid && go_dial_under_way(d->task, d->tid)) {
		stat_inc(CLAIMD_ST_CONNECT_UNDER_WAY);
		return 0;
	}
	if (go_dial_take(g->tgid, d, armed)) {
		g->unread += made == CONNECT_UNREAD;
		g->failed += made == CONNECT_FAILED;
	}
	return 0;
}

/*
 * Thread tid of process tgid, a Go program, writes an answer: each dial
 * of its own goroutines that has returned is read. One failed, or one
 * whose outcome cannot be read: a call outside requests, every request
 * open now unsure (the one being answered among them). A frame of its
 * own, beside connect_settle's chain.
 */
static __noinline int go_dials_settle(__u32 tgid, __u32 tid)
{
	struct go_settle g = { .w = bpf_map_lookup_elem(&go_dials, &tgid),
			       .tgid = tgid,
			       .tid = tid };

	if (!g.w)
		return 0;
	bpf_loop(GO_DIAL_SLOTS, go_dial_step, &g, 0);
	if (!g.failed && !g.unread)
		return 0;
	stat_add(CLAIMD_ST_CONNECT_FAILED_AT_ONCE, g.failed);
	stat_add(CLAIMD_ST_CONNECT_UNREAD, g.unread);
	outside_call_untied(tgid);
	return 0;
}
