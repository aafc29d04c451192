/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Go programs followed by their syscalls (CLAIMD_PROC_GO_SYSCALLS: net/http
 * alone, user/claimd/probes/go/goexec.c says which). Their requests are
 * framed from their bytes as any process's are, each held by its
 * connection (conn_ctx), as an explicit context's is: a goroutine, not a
 * thread, serves it, and Go moves goroutines between threads.
 *
 *  - net/http's server reads a connection's requests and runs their
 *    handler on one goroutine, the connection's own (conn.serve): the
 *    goroutine that reads a request is bound to its connection
 *    (go_serving), and a socket syscall it makes later is that request's
 *    (go_owner_current). No probe.
 *  - net/http's client writes a request and reads its answer on goroutines
 *    of its own (a connection's write and read loops): the calling
 *    goroutine hands its request over at (*persistConn).roundTrip, one
 *    probe (bpf/runtimes/go.c), which notes whose request the connection's
 *    next one is (handoffs, handoff.bpf.h); the syscall path takes that note
 *    when the request's head is written (egress_open).
 *
 * The running goroutine is runtime.g, which Go keeps in the thread's TLS
 * at fs - 8 (claimd checked the program's TLS segment); its id tells a
 * goroutine from a later one that reuses its g.
 */
#ifndef CLAIMD_GOROUTINE_BPF_H
#define CLAIMD_GOROUTINE_BPF_H

/*
 * runtime.g's goid, set by claimd with the first program it follows so
 * (observer__go_goid_offset); 0 until then.
 */
volatile __u32 go_goid_offset = 0;

/* A goroutine bound to the inbound connection whose requests it reads. */
struct go_serving {
	__s32 fd;
	__u32 pad;
	__u64 goid; /* the goroutine's id: a later one reusing its g is not bound */
};

/*
 * By (process, g): added when the goroutine reads a request's head
 * (go_serving_bind, at ingress_open), replaced by its next one; the oldest
 * goes when the map is full, and a goroutine that ended is told by its id.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_GOROUTINES);
	__type(key, struct go_key);
	__type(value, struct go_serving);
} go_serving SEC(".maps");

/* The id of goroutine g in *goid: 1, or 0 if unreadable. */
static __always_inline int go_id_of(__u64 g, __u64 *goid)
{
	*goid = 0;
	return g && go_goid_offset &&
	       !bpf_probe_read_user(goid, sizeof(*goid), (const void *)(g + go_goid_offset));
}

/* The goroutine task runs (the current task): its g, and its id in *goid; 0 if unreadable. */
static __always_inline __u64 go_running_g(struct task_struct *task, __u64 *goid)
{
	__u64 fs = task->thread.fsbase, g = 0;

	*goid = 0;
	if (!fs || bpf_probe_read_user(&g, sizeof(g), (const void *)(fs - 8)) || !go_id_of(g, goid))
		return 0;
	return g;
}

/*
 * The current goroutine of process tgid reads a request on its connection
 * fd: bound to it. Returns its g (0: not known, its calls then untied).
 */
static __always_inline __u64 go_serving_bind(__u32 tgid, __s32 fd)
{
	struct go_serving v = { .fd = fd }, *was;
	struct go_key k = { .tgid = tgid };

	k.g = go_running_g(bpf_get_current_task_btf(), &v.goid);
	if (!k.g)
		return 0;
	/* Its connection's next requests find it bound already: written only when it changes. */
	was = bpf_map_lookup_elem(&go_serving, &k);
	if (!was || was->fd != fd || was->goid != v.goid)
		bpf_map_update_elem(&go_serving, &k, &v, BPF_ANY);
	return k.g;
}

/*
 * The connection whose request goroutine g (id goid) of process tgid
 * serves: its fd, or -1.
 */
static __always_inline __s32 go_serving_fd(__u32 tgid, __u64 g, __u64 goid)
{
	struct go_key k = { .tgid = tgid, .g = g };
	struct go_serving *s = bpf_map_lookup_elem(&go_serving, &k);

	return s && s->goid == goid ? s->fd : -1;
}

/*
 * Who holds what the current goroutine of process tgid works on: the
 * connection it serves, or none (tgid 0, id 0) for a goroutine that reads
 * no request (the client's loops, a worker), or outside the process's own
 * syscalls (a socket's state changing in softirq).
 */
static __always_inline struct claimd_owner go_owner_current(__u32 tgid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct claimd_owner o = {};
	__u64 g, goid;
	__s32 fd;

	if (task->tgid != tgid)
		return o;
	g = go_running_g(task, &goid);
	fd = g ? go_serving_fd(tgid, g, goid) : -1;
	if (fd >= 0) {
		o.tgid = tgid;
		o.id = fd;
	}
	return o;
}

#endif /* CLAIMD_GOROUTINE_BPF_H */
