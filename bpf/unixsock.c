// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c: Unix stream sockets (socket files), followed
 * as TCP ones. Their bytes reach tp_io_x (the sock tracepoints fire for
 * every family); nothing shows them born, accepted or closed (no state
 * change, and no syscall tracepoint: bpf/sockstate.c says why), so:
 *
 * - A socket becomes a connection at its first bytes in a followed
 *   process, or on an accepted end a followed process's call marked. Its
 *   role comes from its two ends' names: the kernel gives an accepted
 *   socket its listener's address (unix_stream_connect), a connecting one
 *   none unless it was bound. The named end serves (inbound), the unnamed
 *   one calls (outbound). Two unnamed ends are a socketpair (not followed);
 *   two named ones leave the role unknown: not followed, counted
 *   (CLAIMD_ST_UNIX_UNSURE), never guessed.
 * - Its framing may join mid-stream (a connection older than claimd meets
 *   no birth to see): framers start seeking a message start, as a seeded
 *   TCP connection's do.
 * - An outbound connection marks its peer, the accepted end in the server
 *   (unix_marks, a socks entry), so that a server that is not followed yet
 *   (a service on a socket file only) becomes followed at its first bytes.
 * - A server seen taking a connection on a socket file for the first time
 *   says so to claimd as a listener record (unix_services).
 * - Its end is what its reads and writes meet (sockio.c, on_io): an EOF,
 *   a reset or broken pipe, its fd naming another socket, its process's
 *   exit.
 *
 * Endpoints are headers/unixaddr.h's: 100::/64 and the hash of the
 * socket's name.
 */

/* What a Unix socket's end says of its name. */
struct unix_end {
	__u64 hash;	 /* headers/unixaddr.h; 0: unnamed */
	__u32 named;	 /* bound to a path or an abstract name by its owner */
	__u32 autobound; /* a name the kernel made up (SO_PASSCRED): no listener's */
};

/* The hash of a name being read (unix_end_of): one byte a step. */
struct unix_hash_walk {
	struct scan_buf *buf; /* the family's two bytes, then the name */
	__u32 n;	      /* the name's bytes */
	__u32 abstract;	      /* a path ends at its NUL, an abstract name at n */
	__u64 h;
};

static long unix_hash_step(__u64 i, void *data)
{
	struct unix_hash_walk *w = data;
	__u8 c;

	if (i >= w->n)
		return 1;
	/* masked: the verifier walks this once, i unknown */
	c = w->buf->data[(i + 2) & (SCAN_WINDOW - 1)];
	if (!w->abstract && !c)
		return 1;
	w->h = claimd_unix_hash_step(w->h, c);
	return 0;
}

/*
 * The name of the Unix socket us, read into the per-CPU window, hashed as
 * headers/unixaddr.h says. bpf_loop: once per connection, and the
 * verifier walks one step.
 */
static __always_inline void unix_end_of(struct unix_sock *us, struct unix_end *e)
{
	struct unix_address *ua = us->addr;
	struct unix_hash_walk w;
	__u32 zero = 0;

	e->hash = 0;
	e->named = 0;
	e->autobound = 0;
	if (!ua)
		return;
	w.buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!w.buf)
		return;
	w.n = ua->len - 2; /* the family's two bytes */
	if (w.n > CLAIMD_UNIX_NAME_MAX)
		w.n = CLAIMD_UNIX_NAME_MAX;
	/* The family's two bytes, then the name. */
	if (bpf_probe_read_kernel(w.buf->data, CLAIMD_UNIX_NAME_MAX + 2, ua->name))
		return;
	w.abstract = !w.buf->data[2];
	/* A name the kernel gives (unix_autobind): NUL and five hex digits. */
	e->autobound = w.abstract && w.n == 6;
	e->named = 1;
	w.h = CLAIMD_UNIX_FNV_BASIS;
	bpf_loop(CLAIMD_UNIX_NAME_MAX, unix_hash_step, &w, 0);
	e->hash = w.h;
}

/* A socket file process tgid serves on, seen: a listener record for claimd, the first time. */
static __always_inline void unix_service_seen(__u32 tgid, const struct claimd_addr *local)
{
	struct unix_service_key k = { .tgid = tgid, .hash = claimd_addr_unix_hash(local) };
	struct claimd_listener l = { .tgid = tgid, .local = *local };
	__u8 one = 1;

	if (bpf_map_update_elem(&unix_services, &k, &one, BPF_NOEXIST))
		return;
	proc_listeners_add(tgid, 1);
	listener_record(&l, 0);
}

/*
 * The Unix socket at skaddr, moving bytes through fd of process tgid (the
 * current one), becomes a connection, if it is one of a service's: 1 if
 * it did. Once per connection, beside on_io's chain.
 */
__noinline int conn_adopt_unix(__u64 skaddr, __u32 tgid, int fd)
{
	struct unix_sock *us =
		bpf_rdonly_cast((void *)skaddr, bpf_core_type_id_kernel(struct unix_sock));
	struct claimd_conn_key key = { .tgid = tgid, .fd = fd };
	struct unix_end own, peer_end;
	struct claimd_sock *marked;
	struct unix_sock *pu;
	struct claimd_conn *c;
	__u64 peer;
	__u32 zero = 0;
	__u8 role;

	if (us->sk.__sk_common.skc_family != AF_UNIX)
		return 0; /* a TCP socket born unseen: not followed */
	/* Marked by the followed process that called it: its mark goes now. */
	marked = bpf_map_lookup_elem(&socks, &skaddr);
	if (marked && (marked->flags & CLAIMD_SOCK_UNIX)) {
		unix_mark_add(marked->slot, -1);
		bpf_map_delete_elem(&socks, &skaddr);
	}
	/* As a number, read (a load would give a pointer, which may not be hashed into a slot). */
	peer = (__u64)BPF_CORE_READ(us, peer);
	if (!peer)
		return 0; /* not connected (yet, or any more) */
	pu = bpf_rdonly_cast((void *)peer, bpf_core_type_id_kernel(struct unix_sock));
	unix_end_of(us, &own);
	unix_end_of(pu, &peer_end);
	if (own.named && !own.autobound && !(peer_end.named && !peer_end.autobound)) {
		role = CLAIMD_ROLE_INBOUND;
	} else if (peer_end.named && !peer_end.autobound && !(own.named && !own.autobound)) {
		role = CLAIMD_ROLE_OUTBOUND;
	} else {
		/* Both named: who serves is unknown. Neither: a socketpair, no service's. */
		if (own.named && peer_end.named)
			stat_inc(CLAIMD_ST_UNIX_UNSURE);
		return 0;
	}
	if (!proc_wanted(tgid))
		return 0;
	/*
	 * --port lists TCP ports: a service on a socket file has none, and is
	 * not followed; a Unix connection is a call of a service it follows
	 * (its cache, its database), as a TCP call to a port not listed.
	 */
	if ((filter_flags & CLAIMD_FILTER_PORT) &&
	    (role == CLAIMD_ROLE_INBOUND || !connect_wanted(tgid, 0)))
		return 0;
	c = bpf_map_lookup_elem(&conn_tmp, &zero);
	if (!c)
		return 0;
	__builtin_memset(c, 0, sizeof(*c));
	claimd_addr_unix(&c->local, own.autobound ? 0 : own.hash);
	claimd_addr_unix(&c->remote, peer_end.autobound ? 0 : peer_end.hash);
	c->role = role;
	c->flags = CLAIMD_CONN_UNIX;
	c->sk_tag = unix_sock_tag(skaddr);
	/* Maybe older than claimd: both framers seek a message start (a new one's first bytes are one). */
	http_framer_init(&c->rx,
			 role == CLAIMD_ROLE_OUTBOUND ? HTTP_KIND_RESPONSE : HTTP_KIND_REQUEST, 1);
	http_framer_init(&c->tx,
			 role == CLAIMD_ROLE_OUTBOUND ? HTTP_KIND_REQUEST : HTTP_KIND_RESPONSE, 1);
	c = conn_put(&key, c);
	if (!c)
		return 0;
	mark_traced(tgid);
	stat_inc(CLAIMD_ST_UNIX_CONNS);
	/* A name served: a connect to it that fails is a failed call (bpf/connects.c). */
	{
		__u64 served = role == CLAIMD_ROLE_INBOUND ? own.hash : peer_end.hash;
		__u8 one = 1;

		bpf_map_update_elem(&unix_served, &served, &one, BPF_ANY);
	}
	if (role == CLAIMD_ROLE_INBOUND) {
		unix_service_seen(tgid, &c->local);
		return 1;
	}
	/* The server's end: followed from its first bytes, its process followed or not. */
	{
		struct claimd_sock s = {
			.role = CLAIMD_ROLE_INBOUND,
			.flags = CLAIMD_SOCK_UNIX,
			.slot = unix_slot(peer),
		};

		if (!bpf_map_update_elem(&socks, &peer, &s, BPF_NOEXIST))
			unix_mark_add(s.slot, 1);
	}
	return 1;
}

/*
 * A read or write on the Unix connection c (key) returned ret <= 0, in io:
 * no state change ends a Unix socket, so its end is what its reads and
 * writes meet: an EOF read, a reset, a broken pipe. An EOF with requests
 * still to answer on an inbound one is the client's half close: they may
 * yet be answered. A function of its own, off tp_io_x's walk.
 */
__noinline int unix_io_failed(struct claimd_conn *c, struct claimd_conn_key *key, struct io *io,
			      long ret)
{
	if (!c || !key || !io)
		return 0;
	if (ret == 0 ? io->dir == DIR_RX &&
			       (c->role == CLAIMD_ROLE_OUTBOUND || !(c->count || c->extra))
		     : error_is_transport(ret))
		conn_end(c, key, io->tid, c->sk_tag);
	return 0;
}
