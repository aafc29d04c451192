// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c: connects to a socket file, whose failure
 * nothing else shows. A TCP connect that fails changes its socket's state
 * (SYN_SENT -> CLOSE, sockstate.c); a Unix one changes nothing and moves
 * no byte: no such file, nobody listening on it (a cache that died and
 * left its file), its backlog full. A request that failed because its
 * cache could not be reached looked like one that made no call: claimed,
 * where its dependency failed it.
 *
 * So the connect itself is seen, by a cgroup hook every Unix connect of
 * the host passes through before it is tried (BPF_CGROUP_UNIX_CONNECT,
 * Linux 6.7; claimd attaches it at the cgroup v2 root, and runs without
 * it on older kernels, saying so). A followed process's connect made for
 * a request is noted for that request's holder (unix_connects): the
 * socket, its cookie, the name it was given. Its outcome is read when the
 * holder next writes an answer (unix_connect_settle, from on_io), when
 * the connect has returned:
 *
 * - the socket still its own (its cookie the same) and given its peer's
 *   credentials (sk_peer_pid: set only by a connect that succeeded, and
 *   kept past its close until it is freed): connected, its calls followed
 *   at their bytes as any connection's;
 * - the socket its own and never connected: the connect failed, one failed
 *   call of that request to the name it was given (counted);
 * - another socket at that address now (the failed one closed and its
 *   memory taken again): the outcome cannot be read, the request unknown
 *   (untied-call, counted), never claimed.
 *
 * An event loop's connect is its process's, not a request's (keyed.c): a
 * failure is a call outside requests, every request open then unknown.
 */

#define SOCKADDR_UN_PATH 2 /* offsetof(struct sockaddr_un, sun_path) */

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

/*
 * unix_connect_settle's state, off the stack (per CPU: a tracepoint's
 * program runs whole): the call it may log, the key it looks up, the
 * connect it found. Its own scratch, declared here.
 */
struct unix_connect_room {
	struct io io;
	struct claimd_owner owner;
	struct claimd_unix_connect uc; /* the connect found, taken out of unix_connects */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unix_connect_room);
} unix_connect_room SEC(".maps");

/* Its key, a global: one stack slot fewer in unix_connect_settle's frame. */
static const __u32 unix_room_key = 0;

/*
 * The hash of the n bytes of a socket's name (headers/unixaddr.h): a path
 * ends at its NUL, an abstract name (a NUL first) at n.
 */
static __always_inline __u64 unix_name_hash(const __u8 *name, __u32 n)
{
	__u64 h = CLAIMD_UNIX_FNV_BASIS;
	int abstract = !name[0];
	__u32 i;

	for (i = 0; i < CLAIMD_UNIX_NAME_MAX; i++) {
		if (i >= n || (!abstract && !name[i]))
			break;
		h = claimd_unix_hash_step(h, name[i]);
	}
	return h;
}

/*
 * Every Unix connect of the host, before it is tried: a followed process's
 * stream connect, made while it serves a request, is noted for that
 * request's holder. Always lets the connect go on (1). The section is
 * any cgroup address hook's: claimd loads it for BPF_CGROUP_UNIX_CONNECT
 * (user/claimd/kernel/unix_connect.c), which libbpf 1.1 does not name.
 */
SEC("cgroup/connect4")
int cg_unix_connect(struct bpf_sock_addr *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct io io = { .key = { .tgid = id >> 32, .fd = -1 }, .tid = (__u32)id };
	struct claimd_unix_connect uc = {};
	__u8 name[CLAIMD_UNIX_NAME_MAX];
	struct bpf_sock_addr_kern *k;
	struct claimd_owner owner;
	struct claimd_thread *t;
	__u32 f, n;

	if (ctx->type != SOCK_STREAM || io.key.tgid == self_tgid)
		return 1;
	f = proc_flags(io.key.tgid);
	/* Not followed, or Go followed by its own probes (its dials are theirs). */
	if (!word_frames(f))
		return 1;
	owner = current_owner(&io);
	if (!word_keyed(f)) {
		t = owner_ctx(&owner, io.key.tgid);
		/* Serving nothing: no answer of its own will read the outcome. */
		if (!t || !t->conn.tgid)
			return 1;
		/* A thread juggling requests (CLAIMD_IN_MUX) makes its process's calls. */
		if (!(t->rec.flags & CLAIMD_IN_MUX))
			uc.seq = t->rec.seq;
	}
	k = bpf_cast_to_kern_ctx(ctx);
	n = k->uaddrlen;
	if (n <= SOCKADDR_UN_PATH)
		return 1;
	n -= SOCKADDR_UN_PATH;
	if (bpf_probe_read_kernel(name, sizeof(name), (__u8 *)k->uaddr + SOCKADDR_UN_PATH))
		return 1;
	claimd_addr_unix(&uc.callee, unix_name_hash(name, n));
	uc.sk = (__u64)k->sk;
	uc.cookie = bpf_get_socket_cookie(ctx);
	uc.at_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&unix_connects, &owner, &uc, BPF_ANY);
	proc_flag_set(io.key.tgid, PROC_UNIX_CONNECTS);
	return 1;
}

/*
 * current_owner's answer for thread tid of process tgid, packed (tgid <<
 * 32 | id): a frame of its own (a Go thread's goroutine is read onto the
 * stack), beside the chain on which unix_connect_settle logs a call.
 */
__noinline __u64 unix_connect_owner(__u32 tgid, __u32 tid)
{
	struct io io = { .key = { .tgid = tgid, .fd = -1 }, .tid = tid };
	struct claimd_owner o = current_owner(&io);

	return (__u64)o.tgid << 32 | (__u32)o.id;
}

/*
 * Thread tid of process tgid writes an answer: a connect to a socket file
 * its holder began has returned (the thread is past it, or, for a request
 * held by its connection, the answer is written after it), and its outcome
 * is read now, before the answer is framed and its request judged. A
 * function of its own beside on_io's chain, given numbers, its state in a
 * per-CPU room (unix_connect_room), its owner found by a function beside
 * it: a frame of more than 32 bytes would take the chain to a failed
 * call's end past 512. Once per answer written in
 * a process that connects to socket files: a miss in unix_connects for
 * most.
 */
__noinline int unix_connect_settle(__u32 tgid, __u32 tid)
{
	struct unix_connect_room *w = bpf_map_lookup_elem(&unix_connect_room, &unix_room_key);
	struct claimd_unix_connect *found;
	struct claimd_thread *t;
	struct sock *sk;
	__u64 packed;

	if (!w)
		return 0;
	packed = unix_connect_owner(tgid, tid);
	__builtin_memset(&w->io, 0, sizeof(w->io));
	w->io.key.tgid = tgid;
	w->io.key.fd = -1;
	w->io.tid = tid;
	w->owner.tgid = packed >> 32;
	w->owner.id = (__s32)packed;
	found = bpf_map_lookup_elem(&unix_connects, &w->owner);
	if (!found)
		return 0;
	w->uc = *found;
	bpf_map_delete_elem(&unix_connects, &w->owner);
	/* Read through a cast: the socket may be gone, its memory another's or free. */
	sk = bpf_rdonly_cast((void *)w->uc.sk, bpf_core_type_id_kernel(struct sock));
	if (sk->__sk_common.skc_cookie.counter != w->uc.cookie)
		w->uc.sk = 0; /* another socket's now: the outcome cannot be read */
	else if (sk->sk_peer_pid)
		return 0; /* connected: its calls are its bytes' */
	if (w->uc.seq) {
		t = owner_ctx(&w->owner, w->io.key.tgid);
		/* Its request answered already (this is another's answer): not to judge now. */
		if (!t || !t->conn.tgid || t->rec.seq != w->uc.seq)
			return 0;
	}
	w->io.now = w->uc.at_ns;
	if (!w->uc.sk) {
		stat_inc(CLAIMD_ST_UNIX_CONNECT_UNSEEN);
		ingress_taint(&w->io, CLAIMD_IN_UNTIED);
		return 0;
	}
	/* A failed call of its request, when the connect was tried. */
	stat_inc(CLAIMD_ST_UNIX_CONNECT_FAILED);
	egress_connect_failed(&w->io, &w->uc.callee);
	return 0;
}
