// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c: connects whose failure nothing else shows.
 * A TCP connect refused or timed out changes its socket's state
 * (SYN_SENT -> CLOSE, sockstate.c); two kinds of connect fail at once,
 * before any packet, and change nothing:
 *
 * - to a socket file: no such file, nobody listening on it (a cache that
 *   died and left its file), its backlog full. To a name claimd saw
 *   served (unix_served), a failed call. To one listed as a probe (glibc
 *   asks nscd's socket before each name it resolves, nscd there or not;
 *   claimd's --probe-socket), no call. To any other name, nothing tells
 *   a dependency that died before claimd came from a probe of a file
 *   that never was: claimd is asked once what is there (a socket file
 *   nobody listens on is a dead server's, served from then on), and a
 *   request whose connect so failed meanwhile is unknown (untied-call,
 *   counted), never claimed;
 * - over TCP before its SYN leaves: no route to the network (ENETUNREACH),
 *   a host's firewall refusing it (a cgroup program, a prohibit route).
 *
 * A request that failed because its dependency could not be reached so
 * looked like one that made no call: claimed, where its dependency failed
 * it.
 *
 * So the connect itself is seen, by the cgroup hooks every connect of the
 * host passes through before it is tried (claimd attaches them at the
 * cgroup v2 root; the Unix one, BPF_CGROUP_UNIX_CONNECT, came with Linux
 * 6.7, and claimd runs without it on older kernels, saying so). A
 * followed process's stream connect made while it serves a request is
 * noted for that request's holder (connect_notes): the socket, its cookie,
 * the address it was given. A TCP one's note goes when its SYN leaves
 * (CLOSE -> SYN_SENT, in the connecting thread: connect_note_sent): its
 * failure from then on is the state change's. The outcome of a note left
 * is read when the holder next writes an answer (connect_settle, from
 * on_io), the connect having returned:
 *
 * - the socket still its own (its cookie the same) and connected (a Unix
 *   one given its peer's credentials, sk_peer_pid: set only by a connect
 *   that succeeded, and kept past its close until it is freed): nothing
 *   to do, its calls are followed at their bytes as any connection's;
 * - the socket its own and never connected (a TCP one still closed, no
 *   peer port): the connect failed, one failed call of that request to
 *   the address it was given (counted);
 * - another socket at that address now (the failed one closed and its
 *   memory taken again): the outcome cannot be read, the request unknown
 *   (untied-call, counted), never claimed.
 *
 * An event loop's connect is its process's, not a request's (keyed.c): a
 * failure is a call outside requests, every request open then unknown. So
 * is one a Go program makes on a goroutine serving no request (net/http
 * dials on goroutines of its own, several at once): its process keeps it
 * apart, read at any answer it writes once the dial has returned
 * (bpf/go_dials.c).
 */

#define SOCKADDR_UN_PATH 2 /* offsetof(struct sockaddr_un, sun_path) */

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

/*
 * connect_settle's state, off the stack (per CPU: a tracepoint's program
 * runs whole): the call it may log, the key it looks up, the note it
 * found. Its own scratch, declared here.
 */
struct connect_room {
	struct io io;
	struct claimd_owner owner;
	struct claimd_connect_note note; /* taken out of connect_notes */
	__u64 name_hash;		 /* a socket file's, looked up in unix_served */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct connect_room);
} connect_room SEC(".maps");

/* Its key, a global: one stack slot fewer in connect_settle's frame. */
static const __u32 connect_room_key = 0;

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
 * A followed process connects, for a request, to the socket file's name of
 * n bytes at name (its hash) that no listener was seen on: a probe listed
 * by claimd (0: no call), or a name it is asked about once (a
 * claimd_socket_file record), its connect's failure unsure meanwhile (1).
 */
static __always_inline int unserved_ask(__u64 hash, __u32 tgid, const __u8 *name, __u32 n)
{
	__u8 asked = CLAIMD_UNSERVED_ASKED, *state = bpf_map_lookup_elem(&unix_unserved, &hash);
	struct claimd_socket_file *rec;

	if (state)
		return *state != CLAIMD_UNSERVED_PROBE;
	/* Another CPU asked first: asked once all the same. */
	if (bpf_map_update_elem(&unix_unserved, &hash, &asked, BPF_NOEXIST))
		return 1;
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		stat_inc(CLAIMD_ST_RB_DROPS);
		bpf_map_delete_elem(&unix_unserved, &hash); /* asked again at its next connect */
		return 1;
	}
	rec->hdr.type = CLAIMD_REC_SOCKET_FILE;
	rec->hdr.version = CLAIMD_RECORD_VERSION;
	rec->hdr.size = sizeof(*rec);
	rec->tgid = tgid;
	rec->len = n < CLAIMD_UNIX_NAME_MAX ? n : CLAIMD_UNIX_NAME_MAX;
	rec->hash = hash;
	__builtin_memcpy(rec->name, name, CLAIMD_UNIX_NAME_MAX);
	rec->pad = 0;
	submit_now(rec);
	return 1;
}

/*
 * The stream connect ctx is about to try (kind: the hook's, a constant: each
 * hook may read only its own family's fields), noted for the request the current thread's holder serves, if its
 * process is followed and it serves one. Always lets the connect go on
 * (1).
 */
enum connect_kind { CONNECT_UNIX, CONNECT_INET4, CONNECT_INET6 };

static __always_inline int connect_note(struct bpf_sock_addr *ctx, enum connect_kind kind)
{
	__u32 tcp = kind != CONNECT_UNIX;
	__u64 id = bpf_get_current_pid_tgid();
	struct io io = { .key = { .tgid = id >> 32, .fd = -1 }, .tid = (__u32)id };
	struct claimd_connect_note note = { .tcp = tcp };
	struct bpf_sock_addr_kern *k;
	__u8 name[CLAIMD_UNIX_NAME_MAX];
	struct claimd_owner owner;
	struct claimd_thread *t;
	__u32 f, n, outside = 0;
	__u64 hash;

	if (ctx->type != SOCK_STREAM || io.key.tgid == self_tgid)
		return 1;
	if (tcp && (ctx->protocol != IPPROTO_TCP ||
		    !connect_wanted(io.key.tgid, bpf_ntohs(ctx->user_port))))
		return 1;
	f = proc_flags(io.key.tgid);
	/* Not followed, or Go followed by its own probes (its dials are theirs). */
	if (!word_frames(f))
		return 1;
	owner = current_owner(&io);
	if (!word_keyed(f)) {
		t = owner_ctx(&owner, io.key.tgid);
		if (!t || !t->conn.tgid) {
			/* Serving nothing: no answer of its own will read the outcome. */
			if (!(f & PROC_GO_SYSCALLS))
				return 1;
			/* Go's net/http dials on goroutines of its own: its process's (go_dials.c). */
			outside = 1;
		} else if (!(t->rec.flags & CLAIMD_IN_MUX)) {
			/* A thread juggling requests (CLAIMD_IN_MUX) makes its process's calls. */
			note.seq = t->rec.seq;
		}
	}
	k = bpf_cast_to_kern_ctx(ctx);
	if (!tcp) {
		n = k->uaddrlen;
		if (n <= SOCKADDR_UN_PATH)
			return 1;
		if (bpf_probe_read_kernel(name, sizeof(name), (__u8 *)k->uaddr + SOCKADDR_UN_PATH))
			return 1;
		hash = unix_name_hash(name, n - SOCKADDR_UN_PATH);
		/* A name never seen served: a probe listed (nscd's) is no call; another, unsure. */
		if (!bpf_map_lookup_elem(&unix_served, &hash)) {
			if (!unserved_ask(hash, io.key.tgid, name, n - SOCKADDR_UN_PATH))
				return 1;
			note.unserved = 1;
		}
		claimd_addr_unix(&note.callee, hash);
	} else if (kind == CONNECT_INET4) {
		addr_from_v4(&note.callee, ctx->user_ip4, bpf_ntohs(ctx->user_port));
	} else {
		__u32 w[4] = { ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2],
			       ctx->user_ip6[3] };

		__builtin_memcpy(note.callee.addr, w, sizeof(w));
		note.callee.port = bpf_ntohs(ctx->user_port);
	}
	note.sk = (__u64)k->sk;
	note.cookie = bpf_get_socket_cookie(ctx);
	proc_flag_set(io.key.tgid, PROC_CONNECTS);
	if (outside) {
		go_dial_put(io.key.tgid, io.tid, note.sk, note.cookie, tcp);
		return 1;
	}
	note.at_ns = bpf_ktime_get_ns();
	/* One a holder: a note of its own before it replaces the count's. */
	if (!bpf_map_update_elem(&connect_notes, &owner, &note, BPF_NOEXIST))
		connect_notes_add(io.key.tgid, 1);
	else
		bpf_map_update_elem(&connect_notes, &owner, &note, BPF_EXIST);
	return 1;
}

/*
 * Every Unix connect of the host, before it is tried. The section is any
 * cgroup address hook's: claimd loads it for BPF_CGROUP_UNIX_CONNECT
 * (user/claimd/kernel/connect_hooks.c), which libbpf 1.1 does not name.
 */
SEC("cgroup/connect4")
int cg_unix_connect(struct bpf_sock_addr *ctx)
{
	return connect_note(ctx, CONNECT_UNIX);
}

/* Every IPv4 connect of the host, before it is tried (its SYN is seen leave). */
SEC("cgroup/connect4")
int cg_inet4_connect(struct bpf_sock_addr *ctx)
{
	return connect_note(ctx, CONNECT_INET4);
}

/* Every IPv6 connect of the host (IPv4 mapped into it included), before it is tried. */
SEC("cgroup/connect6")
int cg_inet6_connect(struct bpf_sock_addr *ctx)
{
	return connect_note(ctx, CONNECT_INET6);
}

/*
 * current_owner's answer for thread tid of process tgid, packed (tgid <<
 * 32 | id): a frame of its own (a Go thread's goroutine is read onto the
 * stack), beside the chain on which connect_settle logs a call.
 */
__noinline __u64 connect_owner(__u32 tgid, __u32 tid)
{
	struct io io = { .key = { .tgid = tgid, .fd = -1 }, .tid = tid };
	struct claimd_owner o = current_owner(&io);

	return (__u64)o.tgid << 32 | (__u32)o.id;
}

/*
 * The TCP socket at skaddr sends its SYN (CLOSE -> SYN_SENT) in thread tid
 * of tgid, the one that connects: the note of its connect goes, its
 * failure from now on the state change's (sockstate.c). A function of its
 * own, beside tp_sock_state's chain; in processes that make notes only.
 */
__noinline int connect_note_sent(__u32 tgid, __u32 tid, __u64 skaddr)
{
	__u64 packed = connect_owner(tgid, tid);
	struct claimd_owner owner = { .tgid = packed >> 32, .id = (__s32)packed };
	struct claimd_connect_note *note;

	/* A Go goroutine serving nothing: its process's dial (go_dials.c). */
	if (!packed) {
		go_dial_sent(tgid, skaddr);
		return 0;
	}
	note = bpf_map_lookup_elem(&connect_notes, &owner);
	if (note && note->sk == skaddr && !bpf_map_delete_elem(&connect_notes, &owner))
		connect_notes_add(tgid, -1);
	return 0;
}

/*
 * Thread tid of process tgid writes an answer: a connect its holder began
 * whose failure no state change would show has returned (the thread is
 * past it, or, for a request held by its connection, the answer is written
 * after it), and its outcome is read now, before the answer is framed and
 * its request judged. A function of its own beside on_io's chain, given
 * numbers, its state in a per-CPU room (connect_room), its owner found by
 * a function beside it: a frame of more than 32 bytes would take the chain
 * to a failed call's end past 512. Once per answer written in a process
 * that made such connects: a miss in connect_notes for most.
 */
__noinline int connect_settle(__u32 tgid, __u32 tid)
{
	struct connect_room *w = bpf_map_lookup_elem(&connect_room, &connect_room_key);
	struct claimd_connect_note *found;
	struct claimd_thread *t;
	int made;
	__u64 packed;

	if (!w)
		return 0;
	packed = connect_owner(tgid, tid);
	__builtin_memset(&w->io, 0, sizeof(w->io));
	w->io.key.tgid = tgid;
	w->io.key.fd = -1;
	w->io.tid = tid;
	w->owner.tgid = packed >> 32;
	w->owner.id = (__s32)packed;
	/* The dials of its process's own goroutines: read at any answer it writes. */
	if (proc_flags(tgid) & PROC_GO_SYSCALLS)
		go_dials_settle(tgid, tid);
	found = bpf_map_lookup_elem(&connect_notes, &w->owner);
	if (!found)
		return 0;
	w->note = *found;
	if (!bpf_map_delete_elem(&connect_notes, &w->owner))
		connect_notes_add(tgid, -1);
	/* Returned: connected, its calls are its bytes'; else failed, or its outcome unread. */
	made = connect_outcome(w->note.sk, w->note.cookie, w->note.tcp);
	if (made == CONNECT_MADE)
		return 0;
	if (w->note.seq) {
		t = owner_ctx(&w->owner, tgid);
		/* Its request answered already (this is another's answer): not to judge now. */
		if (!t || !t->conn.tgid || t->rec.seq != w->note.seq)
			return 0;
	}
	w->io.now = w->note.at_ns;
	if (made == CONNECT_UNREAD) {
		stat_inc(CLAIMD_ST_CONNECT_UNREAD);
		ingress_taint(&w->io, CLAIMD_IN_UNTIED);
		return 0;
	}
	/* To a name still not known served: a dead server's, or a probe not listed. */
	if (w->note.unserved) {
		w->name_hash = claimd_addr_unix_hash(&w->note.callee);
		if (!bpf_map_lookup_elem(&unix_served, &w->name_hash)) {
			stat_inc(CLAIMD_ST_CONNECT_UNSERVED);
			ingress_taint(&w->io, CLAIMD_IN_UNTIED);
			return 0;
		}
	}
	/* A failed call of its request, when the connect was tried. */
	stat_inc(CLAIMD_ST_CONNECT_FAILED_AT_ONCE);
	egress_connect_failed(&w->io, &w->note.callee);
	return 0;
}
