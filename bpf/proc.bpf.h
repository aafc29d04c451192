/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers every program uses: counters, records onto the ring buffer, and
 * the per-process word that lets untraced processes leave after one array
 * load. They use the maps observer.bpf.c owns (stats, events, traced,
 * outside_calls).
 */
#ifndef CLAIMD_PROC_BPF_H
#define CLAIMD_PROC_BPF_H

/*
 * Atomic though per CPU: a uprobe's program can be preempted between the
 * load and the store, and a plain add would then put back an older value
 * over the counts of the programs that ran meanwhile.
 */
static __always_inline void stat_add(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		__sync_fetch_and_add(v, n);
}

static __always_inline void stat_inc(__u32 which)
{
	stat_add(which, 1);
}

/*
 * Wake claimd only once records pile up: a wake-up per record (the default)
 * cost microseconds each on the writing syscall. A record wakes it when it
 * takes the backlog across a multiple of WAKEUP_BYTES: once per 64 KiB of
 * records, however far claimd lags (waking it at every record past the mark
 * cost a self-IPI per record while it caught up). claimd also drains the
 * ring on a timer (short while someone traces, a second otherwise), so a
 * quiet host's records are late by that much; submit_now for the few that
 * must not wait.
 */
#define WAKEUP_BYTES (64u << 10)

/* Flags for a record of size bytes that takes the backlog from 'before' on. */
static __always_inline __u64 rb_flags(__u64 before, __u64 size)
{
	return (before + size) / WAKEUP_BYTES != before / WAKEUP_BYTES ? BPF_RB_FORCE_WAKEUP
								       : BPF_RB_NO_WAKEUP;
}

/* Submit a record; a full ring buffer is counted, never silent. */
static __always_inline void emit(void *rec, __u64 size)
{
	__u64 before = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);

	if (bpf_ringbuf_output(&events, rec, size, rb_flags(before, size)))
		stat_inc(CLAIMD_ST_RB_DROPS);
	else
		stat_inc(CLAIMD_ST_RECORDS);
}

/* A reserved record, its header filled in: the backlog counts it already. */
static __always_inline void submit(void *rec)
{
	__u64 after = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 size = ((struct claimd_rec_hdr *)rec)->size;

	bpf_ringbuf_submit(rec, rb_flags(after > size ? after - size : 0, size));
	stat_inc(CLAIMD_ST_RECORDS);
}

/*
 * A reserved record claimd wants at once: a rare one that changes names (a
 * listener, an exit, a process's first root call). While nobody traces,
 * claimd drains the ring only once a second otherwise.
 */
static __always_inline void submit_now(void *rec)
{
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
	stat_inc(CLAIMD_ST_RECORDS);
}

/* traced[] bits (headers/observer.h): what we know of a process. */
#define PROC_TRACED	 CLAIMD_PROC_TRACED
#define PROC_CONTEXT	 CLAIMD_PROC_CONTEXT
#define PROC_MUX	 CLAIMD_PROC_MUX
#define PROC_GO		 CLAIMD_PROC_GO
#define PROC_GO_SERVES	 CLAIMD_PROC_GO_SERVES
#define PROC_UNREAD	 CLAIMD_PROC_UNREAD
#define PROC_GO_SYSCALLS CLAIMD_PROC_GO_SYSCALLS
#define PROC_NGINX	 CLAIMD_PROC_NGINX
#define PROC_NODE	 CLAIMD_PROC_NODE
#define PROC_THREADS	 CLAIMD_PROC_THREADS
#define PROC_SSL	 CLAIMD_PROC_SSL
#define PROC_CONNECTS	 CLAIMD_PROC_CONNECTS
#define PROC_UNSEEDED	 CLAIMD_PROC_UNSEEDED
/* Bits 16-31: its listening sockets (CLAIMD_PROC_LISTENER_ONE each): a
 * service, whose calls outside requests are no root calls. */
#define PROC_LISTENER_ONE CLAIMD_PROC_LISTENER_ONE

/*
 * The process's bits; a tgid beyond the array (pid_max above 4M) counts as
 * traced, and as one whose threads may have contexts in threads, since no
 * bit can be set for it.
 */
static __always_inline __u32 proc_flags(__u32 tgid)
{
	__u32 *t = bpf_map_lookup_elem(&traced, &tgid);

	return t ? *t : PROC_TRACED | PROC_THREADS;
}

/*
 * Does tgid key its requests (bpf/keyed.c)? An event loop (it served two at
 * once on a thread, or nginx, known from its first request) that does not
 * name them itself (claim_context_enter), nor is a Go program whose
 * goroutines do (bpf/goroutine.bpf.h).
 */
static __always_inline int word_keyed(__u32 f)
{
	return (f & (PROC_MUX | PROC_NGINX | PROC_NODE)) &&
	       !(f & (PROC_CONTEXT | PROC_GO_SYSCALLS));
}

static __always_inline int proc_keyed(__u32 tgid)
{
	return word_keyed(proc_flags(tgid));
}

/*
 * Might the current process be followed? Every process traced[] names
 * carries proc_mark on its group leader: a leader with no task storage at
 * all carries none, and the process is not followed. One load from the
 * leader's task, at hand already, where traced[] is a page of its own to
 * fetch on every syscall of every process. (A leader with task storage, of
 * any map, is asked traced[]: looking the mark itself up cost more than
 * that.)
 */
static __always_inline int task_may_be_traced(struct task_struct *task)
{
	return task->group_leader->bpf_storage != NULL;
}

static __always_inline int proc_may_be_traced(void)
{
	return task_may_be_traced(bpf_get_current_task_btf());
}

/* tgid: the current process's. */
static __always_inline int is_traced(__u32 tgid)
{
	return proc_may_be_traced() && proc_flags(tgid) != 0;
}

/*
 * Does the syscall path frame the bytes of process tgid, the current one
 * (its leader known to carry the mark)? One it follows, unless the Go probes
 * follow its requests: seen twice, they would count twice (and as
 * multiplexed, goroutines sharing threads).
 */
static __always_inline int word_frames(__u32 f)
{
	return f && !(f & PROC_GO);
}

static __always_inline int syscalls_frame(__u32 tgid)
{
	return word_frames(proc_flags(tgid));
}

/* The current process is one traced[] names: its leader carries the mark. */
static __always_inline void proc_mark_current(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	bpf_task_storage_get(&proc_mark, task->group_leader, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

static __always_inline void proc_flag_set(__u32 tgid, __u32 flag)
{
	__u32 *t = bpf_map_lookup_elem(&traced, &tgid);

	if (t && !(*t & flag))
		__sync_fetch_and_or(t, flag);
}

/* A listener opened (+1) or closed (-1) by process tgid. */
static __always_inline void proc_listeners_add(__u32 tgid, int n)
{
	__u32 *t = bpf_map_lookup_elem(&traced, &tgid);

	if (!t)
		return;
	if (n > 0)
		__sync_fetch_and_add(t, PROC_LISTENER_ONE);
	else if (*t >= PROC_LISTENER_ONE)
		__sync_fetch_and_sub(t, PROC_LISTENER_ONE);
}

/* Does process tgid listen? */
static __always_inline int proc_listens(__u32 tgid)
{
	return proc_flags(tgid) >= PROC_LISTENER_ONE;
}

/*
 * The port of the service process tgid is (struct claimd_outside): 0 if it
 * serves nothing (neither served a request nor listens). A process that
 * listens has one: its first listener's.
 */
static __always_inline __u16 proc_service_port(__u32 tgid)
{
	struct claimd_outside *o = bpf_map_lookup_elem(&outside_calls, &tgid);

	return o ? o->port : 0;
}

/* Process tgid opened a listener on port: its service's port, unless it has one. */
static __always_inline void proc_service_listens(__u32 tgid, __u16 port)
{
	struct claimd_outside *o = bpf_map_lookup_elem(&outside_calls, &tgid);

	if (o && !o->port)
		o->port = port;
}

/*
 * tgid's count of calls outside requests is now n: in its main thread's
 * slot of the verdict map (claim_slot.proc_word), where libclaim finds
 * that a request's running verdict may miss a call. A slot another
 * process wrote first is marked collided, for good.
 */
static __always_inline void proc_word_publish(__u32 tgid, __u32 n)
{
	__u32 idx = claim_thread_index(tgid);
	struct claim_slot *s = bpf_map_lookup_elem(&verdicts, &idx);
	__u32 who;

	if (!s)
		return;
	who = s->proc_word >> 32;
	if (who && who != tgid)
		s->proc_word = (__u64)CLAIM_PROC_COLLIDED << 32;
	else
		s->proc_word = (__u64)tgid << 32 | n;
}

/*
 * A call outside any request (made by a thread serving none) began or ended
 * in process tgid, which serves: the requests open meanwhile learn it at
 * their answer (ingress_untied, runtime.bpf.h). A worker pool's thread
 * calling for a request another thread read is the shape.
 */
static __always_inline void outside_calls_add(__u32 tgid)
{
	struct claimd_outside *o = bpf_map_lookup_elem(&outside_calls, &tgid);

	if (o)
		proc_word_publish(tgid, __sync_fetch_and_add(&o->calls, 1) + 1);
}

/*
 * The parent process of *task, into *task: its tgid, or 0 at the top, or
 * at init (every process descends from it).
 */
static __always_inline __u32 ancestor_next(struct task_struct **task)
{
	__u32 tgid;

	*task = (*task)->real_parent;
	if (!*task)
		return 0;
	tgid = (*task)->tgid;
	return tgid > 1 ? tgid : 0;
}

/*
 * Does --pid follow process tgid by itself: listed, or a service it
 * followed (struct claimd_outside's port: set only past the filters, and
 * cleared at its exit)? A service stays followed when the process listed
 * above it exits (a launcher's shell, a supervisor restarted): its calls
 * on connections it opens after must be seen as its first ones were, or a
 * failed one would leave its request claimed. Its children (its workers,
 * its commands) are followed as a listed process's are.
 */
static __always_inline int pid_followed(__u32 tgid)
{
	return bpf_map_lookup_elem(&pid_filter, &tgid) || proc_service_port(tgid);
}

/* What an ancestor is asked (ancestor_where). */
enum ancestor_test {
	ANCESTOR_FOLLOWED, /* --pid follows it by itself (pid_followed) */
	ANCESTOR_SERVES,   /* it serves (proc_service_port) */
};

/*
 * The nearest of the current process's (tgid's) ancestors, up to depth up,
 * of which test is true: its tgid; CLAIMD_ANCESTOR_NONE when none is, 0
 * when it could not ask (tgid is not the current process). A few loads of
 * their task structs, where a process makes a socket or a call outside
 * requests, never on the read/write path.
 */
static __always_inline __u32 ancestor_where(__u32 tgid, int depth, enum ancestor_test test)
{
	struct task_struct *task = bpf_get_current_task_btf();
	int i;

	if (task->tgid != tgid)
		return 0;
	for (i = 0; i < depth; i++) {
		tgid = ancestor_next(&task);
		if (!tgid)
			break;
		if (test == ANCESTOR_FOLLOWED ? pid_followed(tgid) : !!proc_service_port(tgid))
			return tgid;
	}
	return CLAIMD_ANCESTOR_NONE;
}

/* Did ancestor_where find one (not none, and could ask)? */
static __always_inline int ancestor_found(__u32 up)
{
	return up && up != CLAIMD_ANCESTOR_NONE;
}

/*
 * The nearest ancestor of the current process (tgid) that serves: its
 * parent, or a shell or two between it and the service
 * (CLAIMD_SERVING_ANCESTORS); as ancestor_where answers.
 */
static __always_inline __u32 serving_ancestor(__u32 tgid)
{
	return ancestor_where(tgid, CLAIMD_SERVING_ANCESTORS, ANCESTOR_SERVES);
}

/*
 * A call outside any request began or ended in process tgid, which serves
 * nothing: a command a service ran while serving (curl or a cloud CLI run
 * from a handler, a CGI script) makes its request's calls in a process of
 * its own. The nearest ancestor that serves counts it as its own call
 * outside requests (outside_calls_add): the requests it has open meanwhile
 * may have been served by it. A few loads per call outside requests, none
 * on a request's path. Asked only in the process's own syscall: a socket's
 * end in softirq runs on whichever task it interrupted. Returns that
 * ancestor (claimd_pending.ancestor): CLAIMD_ANCESTOR_NONE when none
 * serves, 0 when it could not ask.
 */
static __always_inline __u32 outside_calls_add_ancestor(__u32 tgid)
{
	__u32 up = serving_ancestor(tgid);

	if (ancestor_found(up))
		outside_calls_add(up);
	return up;
}

/*
 * The same at the call's end, its ancestor found at its start (0: not
 * asked then): the walk's loads, cold task structs of other processes,
 * once per call, not twice. An ancestor that began to serve during the
 * call is missed: no request of it that began after the call can be the
 * one the call was made for.
 */
static __always_inline void outside_calls_add_known(__u32 tgid, __u32 ancestor)
{
	if (!ancestor)
		outside_calls_add_ancestor(tgid);
	else if (ancestor != CLAIMD_ANCESTOR_NONE)
		outside_calls_add(ancestor);
}

/* Process tgid has n more connects noted (n -1: one taken; bpf/connects.c). */
static __always_inline void connect_notes_add(__u32 tgid, int n)
{
	struct claimd_outside *o = bpf_map_lookup_elem(&outside_calls, &tgid);

	if (o)
		__sync_fetch_and_add(&o->connect_notes, n);
}

/* Has process tgid connects noted and not yet read? */
static __always_inline int connect_notes_open(__u32 tgid)
{
	struct claimd_outside *o = bpf_map_lookup_elem(&outside_calls, &tgid);

	return !o || *(volatile __u32 *)&o->connect_notes;
}

/*
 * Process tgid made a call no request of it can be tied to: its open
 * requests' (a service), or its nearest serving ancestor's (a command).
 * Returns the ancestor asked (outside_calls_add_ancestor; 0 for a
 * service).
 */
static __always_inline __u32 outside_call_untied(__u32 tgid)
{
	if (proc_service_port(tgid)) {
		outside_calls_add(tgid);
		return 0;
	}
	return outside_calls_add_ancestor(tgid);
}

/* How many times one did so far, in process tgid. */
static __always_inline __u32 outside_calls_of(__u32 tgid)
{
	struct claimd_outside *o = bpf_map_lookup_elem(&outside_calls, &tgid);

	return o ? o->calls : 0;
}

/* The current process's program file, as the programs map names it. */
static __always_inline void program_id_current(struct claimd_program_id *id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct inode *inode = task->mm->exe_file->f_inode;

	id->ino = inode->i_ino;
	id->dev = inode->i_sb->s_dev;
}

/*
 * The bits the current process's program gives its word (the programs
 * map): what claimd found reading it, PROC_UNREAD if it has not read it
 * yet, 0 if claimd reads no programs.
 */
static __always_inline __u32 program_bits_current(void)
{
	struct claimd_program_id id = {};
	__u32 *bits;

	if (!programs_read)
		return 0;
	program_id_current(&id);
	bits = bpf_map_lookup_elem(&programs, &id);
	return bits && !(*bits & CLAIMD_PROGRAM_ASKED) ? *bits : PROC_UNREAD;
}

/* A record of type (CLAIMD_REC_EXIT, CLAIMD_REC_UNREAD) about process tgid, for claimd now. */
static __always_inline void proc_record(__u32 type, __u32 tgid)
{
	struct claimd_exit *rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);

	if (!rec) {
		stat_inc(CLAIMD_ST_RB_DROPS);
		return;
	}
	rec->hdr.type = type;
	rec->hdr.version = CLAIMD_RECORD_VERSION;
	rec->hdr.size = sizeof(*rec);
	rec->tgid = tgid;
	rec->pad = 0;
	submit_now(rec);
}

/* claimd is asked to read the program of process tgid, now. */
static __always_inline void program_unread_record(__u32 tgid)
{
	stat_inc(CLAIMD_ST_PROC_UNREAD);
	proc_record(CLAIMD_REC_UNREAD, tgid);
}

/*
 * The current process, tgid, follows a socket. The first time, its word
 * learns what its program is, or that it is unread and claimd is asked to
 * read it: until then its requests get no confident verdict (a Go
 * program's goroutines share threads that its syscalls would take for
 * requests of their own).
 */
static __always_inline void mark_traced(__u32 tgid)
{
	__u32 *t = bpf_map_lookup_elem(&traced, &tgid);
	__u32 bits;

	if (t && !(*t & PROC_TRACED)) {
		bits = PROC_TRACED | program_bits_current();
		__sync_fetch_and_or(t, bits);
		if (bits & PROC_UNREAD)
			program_unread_record(tgid);
	}
	proc_mark_current();
}

#endif /* CLAIMD_PROC_BPF_H */
