// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A runtime of observer.bpf.c (bpf/runtimes/). Go services, followed per goroutine: uprobes
 * on the Go runtime and net/http (user/claimd/probes/go/ attaches them per
 * executable, the executable's slot in go_exes as their cookie). A Go
 * server runs many requests' goroutines on a few threads, and its client
 * does its socket I/O on goroutines of the library's own, so the thread
 * (the syscall path's key) tells nothing; the goroutine does.
 *
 * A program with net/http alone is framed by its syscalls instead
 * (bpf/goroutine.bpf.h): one probe here, (*persistConn).roundTrip, where
 * a goroutine hands its request to a connection (go_conn_round_trip), and
 * lineage's when asked for. Every other program gets the probes below, at
 * each request's and call's start and end:
 *
 *  - serverHandler.ServeHTTP, entry: a request begins on this goroutine
 *    (its connection, from the response's net.Conn down to the socket's fd,
 *    plain or under TLS, gives the addresses the syscall path knows); at
 *    each RET it ends, with
 *    the status the *response holds (what WriteHeader set, from whichever
 *    goroutine; 200 when nothing was written, as finishRequest answers;
 *    read there rather than probed in WriteHeader: each uprobe hit costs a
 *    trap, docs/go.md), and gets its verdict, counts
 *    and record exactly as any other ingress (ingress_end, runtime.bpf.h).
 *  - (*Transport).roundTrip, entry: a call of the request this goroutine
 *    serves, or of the one its creator served (go_lineage); at each RET it
 *    ends with the *Response's StatusCode, or a transport failure when the
 *    error is not nil.
 *  - runtime.newproc1: a goroutine inherits its creator's request, if that
 *    request is still the one its goroutine serves (a goroutine outliving
 *    its request ties nothing to the next one on the same goroutine).
 *    Probed only in a program that needs it (go_lineage_wanted): it runs
 *    for every goroutine started, net/http's server starts one per
 *    request, and a trap costs microseconds.
 *
 * A call on a goroutine tied to no request is recorded as a call of its
 * own. In a process that serves, it may have been made for a request
 * (handed over through a channel to a worker, or on a goroutine the
 * handler started before lineage was probed): every request open when it
 * began or ended gets no confident verdict (untied-call, through
 * outside_calls_add), rather than a claim that ignores a call it could not
 * see; and its program asks for lineage.
 *
 * Go's register ABI on amd64: arguments in RAX, RBX, RCX, RDI, RSI, ...;
 * results in RAX, RBX, RCX; the running g in R14. Returns are probed at
 * their RET instructions: a uretprobe rewrites the return address on a
 * stack Go may move.
 *
 * No per-CPU scratch here: these programs can be preempted on this kernel;
 * each works on its own goroutine's map entries and on the stack.
 */

/*
 * The Go probes' state, owned here: what is Go's alone, goroutines and
 * field offsets; the requests' records themselves are the mechanism's
 * (struct claimd_thread), held per serving goroutine rather than per
 * thread.
 */

/* Who holds a goroutine's request, and which request (its ingress's seq). */
struct go_owner {
	union {
		__u64 g;  /* followed per goroutine: the goroutine serving it */
		__s64 fd; /* framed by syscalls: the inbound connection holding it */
	};
	__u64 seq;
};

/* A request held by its serving goroutine. */
struct go_req {
	__u32 status; /* gRPC: from WriteStatus */
	__u64 resp;   /* net/http: the *response, whose status is read at the end */
	__u64 entry;  /* what its entry probe saw (go_entry_of) */
	struct claimd_thread t;
};

/* A call in progress on a goroutine. */
struct go_call {
	struct claimd_pending p; /* start, target, method; its ingress's seq and slot */
	struct claimd_addr callee;
	__u64 owner_g;
	__u64 entry; /* what its entry probe saw (go_entry_of) */
};

/* runtime.newproc1 in progress on a thread: the creator's request. */
struct go_spawn {
	struct go_owner owner;
	__u32 tgid;
	__u32 pad;
};

/*
 * Per Go executable probed, the offsets its probes read (headers/goprobe.h),
 * in the slot their BPF cookie names: written by claimd once per executable
 * (user/claimd/probes/go/goattach.c), in order, never cleared (a slot is not reused
 * while claimd runs).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CLAIMD_GO_EXES_MAX);
	__type(key, __u32);
	__type(value, struct go_offsets);
} go_exes SEC(".maps");

/*
 * Per Go executable (the slot its probes' cookie names): 1 once one of its
 * serving processes made a call on a goroutine tied to no request, which
 * lineage may tie next time (a handler's go func()). claimd reads it each
 * tick and probes runtime.newproc1 in that executable
 * (user/claimd/probes/go/goprobes.c); never cleared.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CLAIMD_GO_EXES_MAX);
	__type(key, __u32);
	__type(value, __u32);
} go_lineage_wanted SEC(".maps");

/*
 * The request each serving goroutine holds (idle once answered:
 * t.conn.tgid 0). Added at a goroutine's first request (go_req_open),
 * removed when its next request is on a connection claimd does not follow;
 * an idle entry is reused by the goroutine's next request, and the oldest
 * goes when the map is full.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX);
	__type(key, struct go_key);
	__type(value, struct go_req);
} go_reqs SEC(".maps");

/*
 * Goroutines started while their creator served a request: that request.
 * Added when runtime.newproc1 returns the new goroutine (go_newproc_ret),
 * removed there when a goroutine is started again at the same address by a
 * creator serving none; full, the oldest goes. An entry whose request ended
 * ties nothing (go_owner_find compares its seq).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_GOROUTINES);
	__type(key, struct go_key);
	__type(value, struct go_owner);
} go_lineage SEC(".maps");

/*
 * The call each goroutine has in progress: added at its entry
 * (go_call_open), removed at its return (go_call_close); a goroutine that
 * never returns (it panicked through) leaves its entry until its next call
 * replaces it, or the map, full, drops the oldest.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_GOROUTINES);
	__type(key, struct go_key);
	__type(value, struct go_call);
} go_calls SEC(".maps");

/*
 * A runtime.newproc1 in progress on a thread (by tid): added at its entry
 * when the creator serves a request (go_newproc), removed at its return
 * (go_newproc_ret) or at the thread's next newproc1 by a creator serving
 * none; full, the oldest goes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX);
	__type(key, __u32); /* tid */
	__type(value, struct go_spawn);
} go_spawns SEC(".maps");

/* Its types and maps are observer.bpf.c's (go_exes, go_reqs, go_lineage, go_calls, go_spawns). */

static const struct go_req zero_go_req;

#define GO_TARGET_MAX 64 /* bytes of a path hashed */
#define GO_HOST_MAX   32 /* a power of two: "255.255.255.255:65535" fits */

struct go_string {
	__u64 ptr;
	__u64 len;
};

/* The executable's slot in go_exes, from the probe's cookie. */
static __always_inline __u32 go_slot(struct pt_regs *ctx)
{
	return (__u32)bpf_get_attach_cookie(ctx) & CLAIMD_GO_SLOT_MASK;
}

static __always_inline const struct go_offsets *go_layout(struct pt_regs *ctx)
{
	__u32 i = go_slot(ctx);

	return bpf_map_lookup_elem(&go_exes, &i);
}

/* EFLAGS' carry and zero flags: a JBE's branch is taken when either is set. */
#define X86_FLAGS_CF 0x01
#define X86_FLAGS_ZF 0x40

/*
 * go_layout, for a probe at a function's start: its first instruction, or
 * the JBE of its stack check (CLAIMD_GO_AT_STACK_CHECK), which the kernel
 * emulates where a first instruction is stepped out of line, a second trap
 * that costs more than the first on this VM (docs/performance.md). There,
 * a branch about to be taken means the goroutine's stack is too small: the
 * function grows it and starts over, to pass here again. NULL then, and
 * when the executable has no layout.
 */
static __always_inline const struct go_offsets *go_entry_layout(struct pt_regs *ctx)
{
	if ((bpf_get_attach_cookie(ctx) & CLAIMD_GO_AT_STACK_CHECK) &&
	    (ctx->flags & (X86_FLAGS_CF | X86_FLAGS_ZF))) {
		stat_inc(CLAIMD_ST_GO_STARTED_OVER);
		return NULL;
	}
	return go_layout(ctx);
}

static __always_inline int go_read_str(struct go_string *s, __u64 addr)
{
	if (!addr || bpf_probe_read_user(s, sizeof(*s), (const void *)addr)) {
		s->ptr = 0;
		s->len = 0;
		return -1;
	}
	return 0;
}

/* The executable of slot exe is asked to probe goroutine lineage (go_lineage_wanted). */
static __always_inline void go_lineage_ask(__u32 exe)
{
	__u32 *want = bpf_map_lookup_elem(&go_lineage_wanted, &exe);

	if (want && !*want)
		*want = 1;
}

/* A method name into enum http_method, as the framer reads one. */
static __always_inline __u8 go_method(__u64 addr)
{
	struct go_string s;
	__u8 b[8] = {};
	__u64 tok = 0;
	__u32 i;

	/*
	 * s.len is 1..7 by the test before it; masked too, so the read's size
	 * is bounded in the register the helper takes whatever clang does with
	 * the test (Linux 6.18 with clang 14 loads it unmasked as well).
	 */
	if (go_read_str(&s, addr) || !s.len || s.len > 7 ||
	    bpf_probe_read_user(b, s.len & 7, (const void *)s.ptr))
		return HTTP_M_NONE;
	for (i = 0; i < 7; i++)
		if (i < s.len)
			tok = tok << 8 | b[i];
	return http_method_of(tok, s.len);
}

/* FNV-1a of a Go string's bytes (the first GO_TARGET_MAX), as the framer hashes a target. */
static __always_inline __u32 go_hash_bytes(const struct go_string *s)
{
	__u8 b[GO_TARGET_MAX] = {};
	__u32 h = HTTP_FNV_OFFSET, i, n;

	n = s->len < GO_TARGET_MAX ? s->len : GO_TARGET_MAX;
	/*
	 * The size as a bound the read's register carries itself: n is 1..MAX,
	 * the mask keeps it below MAX and ?: gives MAX back for the one value
	 * it folds to 0. Linux 6.18 with clang 14 loads the clamp alone too.
	 */
	if (!n ||
	    bpf_probe_read_user(b, n & (GO_TARGET_MAX - 1) ?: GO_TARGET_MAX, (const void *)s->ptr))
		return h;
	for (i = 0; i < GO_TARGET_MAX; i++) {
		if (i >= n)
			break;
		h = (h ^ b[i]) * HTTP_FNV_PRIME;
	}
	return h;
}

/* FNV-1a of the string at addr (a path, a gRPC method). */
static __always_inline __u32 go_target_hash(__u64 addr)
{
	struct go_string s;

	if (go_read_str(&s, addr))
		return HTTP_FNV_OFFSET;
	return go_hash_bytes(&s);
}

/* Does the host start with "localhost:"? */
static __always_inline int go_is_localhost(const char *b)
{
	static const char lh[] = "localhost:";
	int i;

	for (i = 0; i < 10; i++)
		if (b[i] != lh[i])
			return 0;
	return 1;
}

/*
 * The callee of a call from its URL's host: "a.b.c.d:port" or
 * "localhost:port" (loopback). 0; -1 for a name or a host without a port,
 * whose address the probes cannot know.
 */
static __always_inline int go_callee(struct claimd_addr *a, __u64 host_addr)
{
	struct go_string s;
	char b[GO_HOST_MAX] = {};
	__u32 octet = 0, part = 0, port = 0, i, n, digits = 0;
	int in_port = 0;

	__builtin_memset(a, 0, sizeof(*a));
	if (go_read_str(&s, host_addr) || !s.len || s.len > GO_HOST_MAX)
		return -1;
	n = s.len;
	/* n is 1..GO_HOST_MAX: masked and mapped back as in go_hash_bytes, a size bounded in itself. */
	if (bpf_probe_read_user(b, n & (GO_HOST_MAX - 1) ?: GO_HOST_MAX, (const void *)s.ptr))
		return -1;
	if (n > 10 && go_is_localhost(b)) {
		a->addr[12] = 127;
		a->addr[15] = 1;
		part = 3;
		in_port = 1;
		i = 10;
	} else {
		i = 0;
	}
	for (; i < GO_HOST_MAX; i++) {
		char c;

		if (i >= n)
			break;
		c = b[i];
		if (c >= '0' && c <= '9') {
			if (in_port)
				port = port * 10 + (c - '0');
			else
				octet = octet * 10 + (c - '0');
			if (++digits > 5 || octet > 255 || port > 65535)
				return -1;
		} else if (c == '.' && !in_port && digits && part < 3) {
			a->addr[12 + part++] = octet;
			octet = 0;
			digits = 0;
		} else if (c == ':' && !in_port && digits && part == 3) {
			a->addr[15] = octet;
			in_port = 1;
			digits = 0;
		} else {
			return -1;
		}
	}
	if (!in_port || !digits || !port)
		return -1;
	a->addr[10] = 0xff;
	a->addr[11] = 0xff;
	a->port = port;
	return 0;
}

/* The request goroutine g of tgid serves or was started for; its owner in *o. */
static __always_inline struct go_req *go_owner_find(__u32 tgid, __u64 g, struct go_owner *o)
{
	struct go_key k = { .tgid = tgid, .g = g };
	struct go_req *q = bpf_map_lookup_elem(&go_reqs, &k);
	struct go_owner *l;

	if (q && q->t.conn.tgid) {
		o->g = g;
		o->seq = q->t.rec.seq;
		return q;
	}
	l = bpf_map_lookup_elem(&go_lineage, &k);
	if (!l)
		return NULL;
	*o = *l;
	k.g = o->g;
	q = bpf_map_lookup_elem(&go_reqs, &k);
	/* The request it was started for has ended: none. */
	if (q && q->t.conn.tgid && q->t.rec.seq == o->seq)
		return q;
	return NULL;
}

/* The port at the end of an "ip:port" string; 0: none. */
static __always_inline __u16 go_addr_port(__u64 addr)
{
	struct go_string s;
	__u8 b[8] = {};
	__u32 port = 0, mul = 1;
	int i;

	/* The last eight bytes, a fixed size: ":65535" and up to two more fit. */
	if (go_read_str(&s, addr) || s.len < 8 ||
	    bpf_probe_read_user(b, sizeof(b), (const void *)(s.ptr + s.len - 8)))
		return 0;
	for (i = 7; i >= 0; i--) {
		if (b[i] == ':')
			return port <= 65535 ? port : 0;
		if (b[i] < '0' || b[i] > '9' || mul > 10000)
			return 0;
		port += (b[i] - '0') * mul;
		mul *= 10;
	}
	return 0;
}

/* The socket of a *net.TCPConn (net.conn -> netFD -> poll.FD.Sysfd); -1: none. */
static __always_inline __s32 go_netconn_fd(const struct go_offsets *off, __u64 nc)
{
	__u64 fd = user_ptr(nc + off->netconn_fd);

	return fd ? (__s32)user_ptr(fd + off->netfd_pfd + off->pfd_sysfd) : -1;
}

/*
 * The connection a response goes out on, from the table (its fd in key):
 * *response -> conn -> rwc, a *net.TCPConn, or a *tls.Conn holding one.
 * Which of the two the interface holds is not read (its type word is not
 * known without symbols): each is tried, and only the socket whose peer
 * port is the one the connection names (conn.remoteAddr) is taken.
 */
static __always_inline struct claimd_conn *go_server_conn(const struct go_offsets *off, __u64 resp,
							  struct claimd_conn_key *key)
{
	__u64 conn = user_ptr(resp + off->resp_conn);
	/* An interface value is two words, type then data: +8 is the data word. */
	__u64 nc = conn ? user_ptr(conn + off->conn_rwc + 8) : 0;
	__u16 port = conn ? go_addr_port(conn + off->conn_remote_addr) : 0;
	struct claimd_conn *c;
	int i;

	for (i = 0; i < 2 && nc && port; i++) {
		key->fd = go_netconn_fd(off, nc);
		c = key->fd >= 0 ? conn_find(key) : NULL;
		if (c && c->role == CLAIMD_ROLE_INBOUND && c->remote.port == port)
			return c;
		/* tls.Conn.conn is a net.Conn interface too: +8, its data word. */
		nc = user_ptr(nc + off->tls_conn + 8);
	}
	return NULL;
}

/*
 * What an entry probe sees of one call: an argument that names it, and the
 * return address. A function whose prologue finds its goroutine's stack
 * too small grows it (runtime.morestack) and runs again from its entry, so
 * its entry probe fires twice for one call, seeing the same both times
 * (the frame is copied, the arguments kept).
 */
static __always_inline __u64 go_entry_of(struct pt_regs *ctx, __u64 arg)
{
	__u64 ret = 0;

	/* At a function's first instruction the stack's top word is its return address. */
	bpf_probe_read_user(&ret, sizeof(ret), (const void *)ctx->sp);
	/* 2^64 / golden ratio (Fibonacci hashing): spreads arg over the word against ret. */
	return (arg * 0x9e3779b97f4a7c15ULL) ^ ret;
}

/* The current process, a probed Go program: followed by goroutine, its program read. */
static __always_inline __u32 go_tgid(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 *t = bpf_map_lookup_elem(&traced, &tgid);

	if (t && (*t & (PROC_GO | PROC_UNREAD)) != PROC_GO) {
		__sync_fetch_and_or(t, PROC_GO);
		__sync_fetch_and_and(t, ~PROC_UNREAD);
	}
	return tgid;
}

/*
 * The running verdict of the request q (NULL: none) that goroutine g of
 * process tgid serves, in that goroutine's slot of the verdict map, where
 * libclaim's Go package finds it (claim_goroutine_index): what ingress_end
 * would judge if the request failed now.
 */
static __always_inline void go_slot_show(__u32 tgid, __u64 g, struct go_req *q)
{
	__u32 idx = claim_goroutine_index(tgid, g);

	if (!q) {
		slot_fill(idx, 0, tgid, g, 0, VERDICT(CLAIM_NONE, CLAIM_RULE_NONE, CLAIMD_NO_SLOT),
			  NULL, 0);
		return;
	}
	egress_log_settle(&q->t);
	if (ingress_untied(&q->t))
		slot_fill(idx, 0, tgid, g, 1,
			  VERDICT(CLAIM_UNKNOWN, CLAIM_RULE_UNTIED_CALL, CLAIMD_NO_SLOT), NULL,
			  q->t.outside_seen);
	else
		slot_fill(idx, 0, tgid, g, 1, verdict_of(&q->t.rec), &q->t.rec, q->t.outside_seen);
}

/*
 * A request begins on goroutine k.g, served by thread tid, on connection c
 * named key (c NULL: one claimd does not follow, not counted), as p says
 * (start, method, target); entry: what the entry probe saw (go_entry_of).
 * The same entry again, its request open, is the same request: its
 * function ran its entry again.
 */
static __always_inline void go_req_open(struct go_key *k, __u32 tid, struct claimd_conn *c,
					const struct claimd_conn_key *key,
					const struct claimd_pending *p, __u64 resp, __u64 entry)
{
	struct go_req *q = bpf_map_lookup_elem(&go_reqs, k);

	if (q && q->t.conn.tgid && q->entry == entry) {
		stat_inc(CLAIMD_ST_GO_REENTERED);
		return;
	}
	proc_flag_set(k->tgid, PROC_GO_SERVES);
	if (!c) {
		stat_inc(CLAIMD_ST_GO_UNSEEN);
		bpf_map_delete_elem(&go_reqs, k);
		return;
	}
	if (!q) {
		bpf_map_update_elem(&go_reqs, k, &zero_go_req, BPF_NOEXIST);
		q = bpf_map_lookup_elem(&go_reqs, k);
		if (!q) {
			stat_inc(CLAIMD_ST_THREAD_FULL);
			return;
		}
	} else if (q->t.conn.tgid) {
		/* The last request on it never returned (a panic): not recorded. */
		stat_inc(CLAIMD_ST_ABANDONED);
	}
	ingress_reset(&q->t, c, key, tid, p->start_ns, p, CLAIMD_IN_GO);
	q->status = 0;
	q->resp = resp;
	q->entry = entry;
	stat_inc(CLAIMD_ST_INGRESS);
	stat_inc(CLAIMD_ST_GO_REQUESTS);
	go_slot_show(k->tgid, k->g, q);
}

/* net/http.serverHandler.ServeHTTP(sh, rw ResponseWriter, req *Request): RCX rw's data, RDI req. */
SEC("uprobe")
int go_serve(struct pt_regs *ctx)
{
	const struct go_offsets *off = go_entry_layout(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	struct go_key k = { .g = ctx->r14 };
	struct claimd_pending p = { .start_ns = bpf_ktime_get_ns() };
	struct claimd_conn_key key = {};
	__u64 req = ctx->di, url;

	if (!off || !proc_wanted(id >> 32))
		return 0;
	k.tgid = go_tgid();
	key.tgid = k.tgid;
	url = user_ptr(req + off->req_url);
	p.method = go_method(req + off->req_method);
	p.target_hash = url ? go_target_hash(url + off->url_path) : HTTP_FNV_OFFSET;
	go_req_open(&k, (__u32)id, go_server_conn(off, ctx->cx, &key), &key, &p, ctx->cx,
		    go_entry_of(ctx, ctx->cx));
	return 0;
}

/*
 * The status a net/http *response holds once its handler returned: what
 * WriteHeader set (a final status: 1xx are written apart), else 200, which
 * finishRequest answers for a handler that wrote nothing.
 */
static __always_inline __u32 go_response_status(const struct go_offsets *off, __u64 resp)
{
	__u8 wrote = 0;
	__u64 status;

	if (bpf_probe_read_user(&wrote, 1, (const void *)(resp + off->resp_wrote_header)) || !wrote)
		return 200;
	status = user_ptr(resp + off->resp_status);
	return status >= 100 && status <= 999 ? status : 0;
}

/*
 * At each RET of ServeHTTP and of gRPC's handleStream: the handler
 * returned; its answer is what it wrote.
 */
SEC("uprobe")
int go_serve_ret(struct pt_regs *ctx)
{
	const struct go_offsets *off = go_layout(ctx);
	struct go_key k = { .tgid = bpf_get_current_pid_tgid() >> 32, .g = ctx->r14 };
	struct go_req *q = bpf_map_lookup_elem(&go_reqs, &k);
	__u32 status;

	if (!q || !q->t.conn.tgid || !off)
		return 0;
	/* net/http: what the *response holds; gRPC: what WriteStatus wrote, OK if nothing. */
	status = q->resp ? go_response_status(off, q->resp) : q->status ?: 200;
	ingress_end(&q->t, bpf_ktime_get_ns(), status, 0);
	go_slot_show(k.tgid, k.g, NULL);
	return 0;
}

/*
 * A call begins now on goroutine k.g (call: its method and target; its
 * callee when known), in the executable of slot exe: logged in the request
 * the goroutine serves or was started for, if any, and remembered until it
 * returns.
 */
static __always_inline void go_call_open(struct go_key *k, struct go_call *call, int known,
					 __u32 exe)
{
	struct go_call *open = bpf_map_lookup_elem(&go_calls, k);
	struct go_owner o = {};
	struct go_req *q;

	/* The same entry again, its call open: the same call (go_entry_of). */
	if (open && open->entry == call->entry) {
		stat_inc(CLAIMD_ST_GO_REENTERED);
		return;
	}
	call->p.start_ns = bpf_ktime_get_ns();
	call->p.tid = (__u32)bpf_get_current_pid_tgid();
	call->p.slot = CLAIMD_NO_SLOT;
	stat_inc(CLAIMD_ST_EGRESS);
	stat_inc(CLAIMD_ST_GO_CALLS);
	q = go_owner_find(k->tgid, k->g, &o);
	if (!known) {
		stat_inc(CLAIMD_ST_GO_NO_CALLEE);
		if (q) {
			ingress_unsure(&q->t.rec, CLAIMD_IN_UNTIED);
			go_slot_show(k->tgid, o.g, q);
		}
		return;
	}
	if (q) {
		call->p.ingress_seq = o.seq;
		call->owner_g = o.g;
		/* Fan-out goroutines begin calls of one request on several CPUs: slots taken atomically. */
		call->p.slot = egress_log_next(&q->t, &call->p, &call->callee, 0);
		/*
		 * Its request's running verdict with the call running (verdict_of;
		 * past the log's end, egress_dropped): a handler that gives up on
		 * it reads that, not the verdict of a request without it.
		 */
		go_slot_show(k->tgid, o.g, q);
	} else {
		stat_inc(CLAIMD_ST_GO_OUTSIDE);
		/*
		 * A goroutine tied to no request may be a worker fed one through a
		 * channel, or one its handler started: the requests open now are
		 * unknown (and those open at its end, egress_ended), and lineage is
		 * asked for.
		 */
		if (proc_flags(k->tgid) & PROC_GO_SERVES) {
			outside_calls_add(k->tgid);
			go_lineage_ask(exe);
		}
	}
	bpf_map_update_elem(&go_calls, k, call, BPF_ANY);
}

/* The call goroutine k.g made returned as end says: into its request's log, or a record. */
static __always_inline void go_call_close(struct go_key *k, struct go_call *call,
					  const struct egress_end *end)
{
	struct go_key ok = { .tgid = k->tgid, .g = call->owner_g };
	struct go_req *q = call->p.ingress_seq ? bpf_map_lookup_elem(&go_reqs, &ok) : NULL;

	/* Its request's running verdict, in the slot of the goroutine serving it. */
	if (egress_ended(q ? &q->t : NULL, k->tgid, &call->p, &call->callee, end))
		go_slot_show(k->tgid, ok.g, q);
	bpf_map_delete_elem(&go_calls, k);
}

/* net/http.(*Transport).roundTrip(t, req *Request): RBX req. */
SEC("uprobe")
int go_round_trip(struct pt_regs *ctx)
{
	const struct go_offsets *off = go_entry_layout(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	struct go_key k = { .g = ctx->r14 };
	struct go_call call = {};
	__u64 req = ctx->bx, url;
	int known;

	if (!off || !proc_wanted(id >> 32))
		return 0;
	k.tgid = go_tgid();
	call.entry = go_entry_of(ctx, req);
	url = user_ptr(req + off->req_url);
	known = url && !go_callee(&call.callee, url + off->url_host);
	call.p.method = go_method(req + off->req_method);
	call.p.target_hash = url ? go_target_hash(url + off->url_path) : HTTP_FNV_OFFSET;
	go_call_open(&k, &call, known, go_slot(ctx));
	return 0;
}

/* At each RET of roundTrip: RAX the *Response, RBX the error's type word (nil: none). */
SEC("uprobe")
int go_round_trip_ret(struct pt_regs *ctx)
{
	const struct go_offsets *off = go_layout(ctx);
	struct go_key k = { .tgid = bpf_get_current_pid_tgid() >> 32, .g = ctx->r14 };
	struct go_call *call = bpf_map_lookup_elem(&go_calls, &k);
	struct egress_end end = { .end_ns = bpf_ktime_get_ns() };

	if (!call || !off)
		return 0;
	/* The results (*Response, error): RAX, then the error's two words from RBX on. */
	if (ctx->bx || !ctx->ax)
		end.flags = CLAIMD_EG_TRANSPORT;
	else
		end.status = (__u16)user_ptr(ctx->ax + off->response_status);
	go_call_close(&k, call, &end);
	return 0;
}

/* A gRPC status code as the records' status (headers/goprobe.h). */
static __always_inline __u32 go_grpc_code_status(__u64 code)
{
	if (code == 0)
		return CLAIMD_GRPC_STATUS_OK;
	if (code >= CLAIMD_GRPC_CODES)
		code = 2; /* UNKNOWN */
	return ((grpc_fail_codes >> code) & 1 ? CLAIMD_GRPC_STATUS_FAILED
					      : CLAIMD_GRPC_STATUS_OTHER) +
	       code;
}

/* The code of a *spb.Status (genproto rpc/status): UNKNOWN when unreadable. */
static __always_inline __u64 go_spb_code(const struct go_offsets *off, __u64 spb)
{
	__u32 code = 2;

	if (spb &&
	    bpf_probe_read_user(&code, sizeof(code), (const void *)(spb + off->grpc_spb_code)))
		code = 2;
	return code;
}

/*
 * The connection of a gRPC server transport (*http2Server): its conn, a
 * *net.TCPConn, whose peer port must be remoteAddr's (a *net.TCPAddr).
 */
static __always_inline struct claimd_conn *go_grpc_conn(const struct go_offsets *off, __u64 st,
							struct claimd_conn_key *key)
{
	/* conn (net.Conn) and remoteAddr (net.Addr) are interfaces: +8, the data word. */
	__u64 nc = st ? user_ptr(st + off->grpc_h2s_conn + 8) : 0;
	__u64 ra = st ? user_ptr(st + off->grpc_h2s_remote + 8) : 0;
	__u64 port = ra ? user_ptr(ra + off->tcpaddr_port) : 0;
	struct claimd_conn *c;

	if (!nc || !port)
		return NULL;
	key->fd = go_netconn_fd(off, nc);
	c = key->fd >= 0 ? conn_find(key) : NULL;
	if (c && c->role == CLAIMD_ROLE_INBOUND && c->remote.port == port)
		return c;
	return NULL;
}

/*
 * grpc.(*Server).handleStream(s, t ServerTransport, stream *Stream, trInfo):
 * RCX t's data, RDI stream. A request on its own goroutine; it ends at the
 * RETs (go_serve_ret), its status from WriteStatus.
 */
SEC("uprobe")
int go_grpc_serve(struct pt_regs *ctx)
{
	const struct go_offsets *off = go_entry_layout(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	struct go_key k = { .g = ctx->r14 };
	struct claimd_pending p = { .start_ns = bpf_ktime_get_ns(), .method = HTTP_M_POST };
	struct claimd_conn_key key = {};

	if (!off || !proc_wanted(id >> 32))
		return 0;
	k.tgid = go_tgid();
	key.tgid = k.tgid;
	p.target_hash = go_target_hash(ctx->di + off->grpc_stream_method);
	go_req_open(&k, (__u32)id, go_grpc_conn(off, ctx->cx, &key), &key, &p, 0,
		    go_entry_of(ctx, ctx->di));
	return 0;
}

/* transport.(*http2Server).WriteStatus(t, s *Stream, st *status.Status): RCX st. */
SEC("uprobe")
int go_grpc_status(struct pt_regs *ctx)
{
	const struct go_offsets *off = go_entry_layout(ctx);
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct go_owner o;
	struct go_req *q = go_owner_find(tgid, ctx->r14, &o);
	__u64 spb;

	if (!q || !off || q->status)
		return 0;
	spb = ctx->cx ? user_ptr(ctx->cx + off->grpc_status_s) : 0;
	/* A nil *spb.Status is OK. */
	q->status = spb ? go_grpc_code_status(go_spb_code(off, spb)) : CLAIMD_GRPC_STATUS_OK;
	return 0;
}

/*
 * grpc.(*ClientConn).Invoke(cc, ctx, method string, args, reply, opts...):
 * RAX cc, RDI and RSI the method. A unary call; its callee from cc.target.
 */
SEC("uprobe")
int go_grpc_invoke(struct pt_regs *ctx)
{
	const struct go_offsets *off = go_entry_layout(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	struct go_key k = { .g = ctx->r14 };
	struct go_call call = { .p = { .method = HTTP_M_POST } };
	struct go_string m = { .ptr = ctx->di, .len = ctx->si };
	int known;

	if (!off || !proc_wanted(id >> 32))
		return 0;
	k.tgid = go_tgid();
	/* Named by its ClientConn and its method's bytes together: one cc serves many methods. */
	call.entry = go_entry_of(ctx, ctx->ax ^ ctx->di);
	known = ctx->ax && !go_callee(&call.callee, ctx->ax + off->grpc_cc_target);
	call.p.target_hash = go_hash_bytes(&m);
	go_call_open(&k, &call, known, go_slot(ctx));
	return 0;
}

/* At each RET of Invoke: RAX and RBX the error (nil: OK; else a *status.Error). */
SEC("uprobe")
int go_grpc_invoke_ret(struct pt_regs *ctx)
{
	const struct go_offsets *off = go_layout(ctx);
	struct go_key k = { .tgid = bpf_get_current_pid_tgid() >> 32, .g = ctx->r14 };
	struct go_call *call = bpf_map_lookup_elem(&go_calls, &k);
	struct egress_end end = { .end_ns = bpf_ktime_get_ns() };
	__u64 code = 0;

	if (!call || !off)
		return 0;
	/* An error is an interface: RAX its type word (nil: no error), RBX its data word. */
	if (ctx->ax)
		code = go_spb_code(off, ctx->bx ? user_ptr(ctx->bx + off->grpc_error_e) : 0);
	end.status = go_grpc_code_status(code);
	go_call_close(&k, call, &end);
	return 0;
}

/*
 * The request goroutine g of process tgid serves, in a program framed by
 * its syscalls: the connection it reads requests on (go_serving), or the
 * one its creator served when it was started (go_lineage), if that
 * request is still open. Its connection's fd and seq in *h; returns its
 * holder, NULL for none.
 */
static __always_inline struct claimd_thread *go_framed_request(__u32 tgid, __u64 g,
							       struct handoff *h)
{
	struct go_key k = { .tgid = tgid, .g = g };
	struct claimd_conn_key held = { .tgid = tgid };
	struct go_owner *l;
	__u64 goid = 0, seq = 0;

	if (!go_id_of(g, &goid))
		return NULL;
	held.fd = go_serving_fd(tgid, g, goid);
	if (held.fd < 0) {
		l = bpf_map_lookup_elem(&go_lineage, &k);
		if (!l)
			return NULL;
		held.fd = l->fd;
		seq = l->seq;
	}
	return handoff_holder(&held, seq, h);
}

/*
 * A call of process tgid its bytes will not show (over TLS, or on a
 * connection not found): the request t holds (go_framed_request; NULL:
 * none) cannot be judged, nor (none) any open in the process.
 */
static __always_inline void go_call_unseen(__u32 tgid, struct claimd_thread *t)
{
	if (!t) {
		outside_call_untied(tgid);
		return;
	}
	ingress_unsure(&t->rec, CLAIMD_IN_UNTIED);
	slot_refresh(&t->rec);
}

/*
 * net/http.(*persistConn).roundTrip(pc, req *transportRequest): RAX pc. In
 * a program framed by its syscalls: the calling goroutine (R14) hands its
 * request to pc's connection, whose write loop writes it next. Whose
 * request it is waits there (handoffs) for the syscall path, which
 * frames the call from its bytes (egress_log_handed).
 */
SEC("uprobe")
int go_conn_round_trip(struct pt_regs *ctx)
{
	const struct go_offsets *off = go_entry_layout(ctx);
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct claimd_conn_key out = { .tgid = tgid, .fd = -1 };
	struct claimd_thread *t;
	struct handoff h = {};
	__u64 nc = 0;

	if (!off || !proc_wanted(tgid))
		return 0;
	stat_inc(CLAIMD_ST_GO_CALLS);
	t = go_framed_request(tgid, ctx->r14, &h);
	if (user_ptr(ctx->ax + off->pc_tls_state)) {
		/* Over TLS: its bytes are ciphertext, the call is not framed. */
		stat_inc(CLAIMD_ST_GO_TLS_CALLS);
		go_call_unseen(tgid, t);
		return 0;
	}
	/* pc.conn, a net.Conn: +8, its data word, a *net.TCPConn. */
	nc = user_ptr(ctx->ax + off->pc_conn + 8);
	if (nc)
		out.fd = go_netconn_fd(off, nc);
	if (out.fd < 0) {
		go_call_unseen(tgid, t);
		return 0;
	}
	if (t) {
		stat_inc(CLAIMD_ST_GO_HANDED);
		handoff_leave(&out, &h, t);
		/* Until its head is seen written, its request's running verdict is unknown. */
		slot_refresh(&t->rec);
		return 0;
	}
	/*
	 * A goroutine tied to no request: its call is one outside requests
	 * when its head is written. In a service, it may have been made for
	 * one (a handler's go func()): lineage is asked for.
	 */
	bpf_map_delete_elem(&handoffs, &out);
	stat_inc(CLAIMD_ST_GO_OUTSIDE);
	if (proc_service_port(tgid))
		go_lineage_ask(go_slot(ctx));
	return 0;
}

/* runtime.newproc1(fn, callergp *g, callerpc): on the system stack, RBX the creator. */
SEC("uprobe")
int go_newproc(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct go_spawn s = { .tgid = id >> 32 };
	struct handoff h = {};
	__u64 creator = ctx->bx; /* read once: a ctx pointer moved per branch is refused */
	int found;

	if (proc_flags(s.tgid) & PROC_GO_SYSCALLS) {
		found = go_framed_request(s.tgid, creator, &h) != NULL;
		s.owner.fd = h.fd;
		s.owner.seq = h.seq;
	} else {
		found = go_owner_find(s.tgid, creator, &s.owner) != NULL;
	}
	if (found)
		bpf_map_update_elem(&go_spawns, &tid, &s, BPF_ANY);
	else
		bpf_map_delete_elem(&go_spawns, &tid);
	return 0;
}

/* At newproc1's RET: RAX the new goroutine, which inherits (or loses, reused) a request. */
SEC("uprobe")
int go_newproc_ret(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct go_key k = { .tgid = id >> 32, .g = ctx->ax };
	struct go_spawn *s = bpf_map_lookup_elem(&go_spawns, &tid);

	if (s && s->tgid == k.tgid) {
		bpf_map_update_elem(&go_lineage, &k, &s->owner, BPF_ANY);
		bpf_map_delete_elem(&go_spawns, &tid);
	} else {
		bpf_map_delete_elem(&go_lineage, &k);
	}
	return 0;
}
