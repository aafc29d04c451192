// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c: where a TCP socket's bytes move (the socket
 * tracepoints, at the end of every read and write family syscall, their
 * arguments read from the task's saved registers). A socket born under
 * watch (sockstate.c) becomes a connection at its first bytes, under the
 * process and fd that moved them (claimd seeds the ones that already
 * existed); a connection ends with its socket (sockstate.c) or when its fd
 * is found naming another one. And the processes' exec and exit.
 */

#define EPIPE	     32
#define ENETUNREACH  101
#define ECONNABORTED 103
#define ECONNRESET   104
#define ETIMEDOUT    110
#define ECONNREFUSED 111
#define EHOSTUNREACH 113
#define MSG_PEEK     2

/* Syscall arguments, from the registers saved at syscall entry. */
struct sys_args {
	__u64 a0, a1, a2, a3;
};

static __always_inline void regs_sys_args(struct pt_regs *regs, struct sys_args *a)
{
	/*
	 * A trusted pointer: on x86 the macros are plain loads, no probe-read
	 * helper call per field; on arm64 the first argument is orig_x0 (x0
	 * holds the return value by the syscall's exit), read with CO-RE.
	 */
	a->a0 = PT_REGS_PARM1_SYSCALL(regs);
	a->a1 = PT_REGS_PARM2_SYSCALL(regs);
	a->a2 = PT_REGS_PARM3_SYSCALL(regs);
	a->a3 = PT_REGS_PARM4_SYSCALL(regs);
}

/*
 * The network namespace of the current task: one claimd per "host" of a
 * fleet made of namespaces follows only its own. Asked where a thread
 * makes a socket (its connect, its listen) and where a connection taken by
 * a listener first moves bytes, never on the read/write path after.
 */
static __always_inline int netns_wanted(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return BPF_CORE_READ(task, nsproxy, net_ns, ns.inum) == filter_netns;
}

/*
 * Was process tgid, the current one, started by a process --pid follows
 * (its workers, the commands it runs for a request)? A few loads of its
 * ancestors' task structs, where a process makes a socket, never on the
 * read/write path. A function of its own: its walk stays out of the
 * frames of the programs that ask.
 */
__noinline int pid_ancestor_listed(__u32 tgid)
{
	/* A prefork server's master above its workers; a service above a shell and its command. */
	return ancestor_found(ancestor_where(tgid, CLAIMD_FILTER_ANCESTORS, ANCESTOR_FOLLOWED));
}

/* Does --pid follow process tgid, the current one: by itself, or by an ancestor? */
static __always_inline int pid_wanted(__u32 tgid)
{
	return pid_followed(tgid) || pid_ancestor_listed(tgid);
}

/*
 * Connections and listeners are made only past these tests: a process that
 * fails them is never marked, so its later syscalls leave at
 * proc_may_be_traced's one load.
 */
static __always_inline int proc_wanted(__u32 tgid)
{
	if (tgid == self_tgid)
		return 0;
	if ((filter_flags & CLAIMD_FILTER_NETNS) && !netns_wanted())
		return 0;
	if ((filter_flags & CLAIMD_FILTER_PID) && !pid_wanted(tgid))
		return 0;
	if ((filter_flags & CLAIMD_FILTER_CGROUP) &&
	    bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return 0;
	return 1;
}

static __always_inline int port_wanted(__u16 port)
{
	return !(filter_flags & CLAIMD_FILTER_PORT) || bpf_map_lookup_elem(&port_filter, &port);
}

/*
 * Is a connect of the current process, tgid, to port followed? One to a
 * port --port lists, and any connect of a process that serves what the
 * filters follow, or of a command such a process ran: its requests'
 * verdicts need every call made for them, whatever port it goes to.
 * Unseen, a failed call would leave its request claimed. A lookup, and a
 * few loads of ancestors under --port, once per connect.
 */
static __always_inline int connect_wanted(__u32 tgid, __u16 port)
{
	return port_wanted(port) || proc_service_port(tgid) ||
	       ancestor_found(serving_ancestor(tgid));
}

/*
 * Under --port, process tgid made a connect connect_wanted left out: it
 * served nothing a port listed. Should it serve one later (a database pool
 * opened before listen()), those connections are looked for then.
 */
static __always_inline void connect_unfollowed(__u32 tgid)
{
	struct claimd_outside *o = bpf_map_lookup_elem(&outside_calls, &tgid);

	if (o && !o->unfollowed)
		o->unfollowed = 1;
}

/* Did process tgid make such connects? */
static __always_inline int connects_unfollowed(__u32 tgid)
{
	struct claimd_outside *o = bpf_map_lookup_elem(&outside_calls, &tgid);

	return o && o->unfollowed;
}

__noinline int conn_stale(struct claimd_conn *c, struct claimd_conn_key *key, __u32 tid);
__noinline int conn_end(struct claimd_conn *c, struct claimd_conn_key *key, __u32 tid, __u32 tag);
__noinline int conn_adopt_unix(__u64 skaddr, __u32 tgid, int fd);
__noinline int wire_on_io(struct claimd_conn *c, struct claimd_conn_key *key, struct io *io,
			  struct scan_buf *buf);
__noinline int wire_feed_segment(struct claimd_conn *c, struct io *io, struct scan_buf *buf,
				 struct wire_conn *w);
__noinline int unix_io_failed(struct claimd_conn *c, struct claimd_conn_key *key, struct io *io,
			      long ret);
__noinline int connect_settle(__u32 tgid, __u32 tid);
__noinline int connect_note_sent(__u32 tgid, __u32 tid, __u64 skaddr);

/*
 * A followed process's socket moved bytes by no syscall claimd reads:
 * io_uring's operations, submitted by its ring or run by its workers. The
 * calls they carry cannot be seen, so the requests its process has open
 * meanwhile are unsure (a call outside requests), never claimed for want
 * of a failed call. A function of its own, off the framing's walk.
 */
__noinline int io_unseen(__u32 tgid)
{
	if (!syscalls_frame(tgid))
		return 0;
	stat_inc(CLAIMD_ST_IO_UNSEEN);
	outside_call_untied(tgid);
	return 0;
}

/*
 * claimd's change to the count of followed sockets in a slot of the filter
 * (the connections it seeds, and forgets when their process is gone): run
 * with BPF_PROG_TEST_RUN, args[0] the slot (claimd_sock_slot), args[1] the
 * change. Never attached.
 */
SEC("raw_tp")
int claimd_mark(struct bpf_raw_tracepoint_args *ctx)
{
	sock_mark_add(ctx->args[0], (int)ctx->args[1]);
	return 0;
}

/*
 * The socket at skaddr, born under watch (s, its entry in socks), moved its
 * first bytes in process tgid through fd: it becomes a connection of the
 * table, under that name, if the process is one claimd follows. 1: it
 * did. rejoin: it was a connection before, whose entry the table evicted:
 * its framing joins mid-stream, as a seeded one's. A function of its own,
 * beside on_io's chain: once per connection.
 */
/*
 * The socket whose bytes thread tid of tgid moved through fd could not be
 * followed: the table's entry under that name, another socket's, is being
 * ended on another CPU (CLAIMD_SOCK_TAG_ENDING; a slot's would have the
 * new one beside it, conn_put). Its bytes go unseen: a call they may
 * carry too, so the request the thread serves is unsure (untied-call),
 * never judged without it. Counted.
 */
static __noinline int conn_end_raced(__u32 tgid, int fd, __u32 tid)
{
	struct io io = { .key = { .tgid = tgid, .fd = fd }, .tid = tid };

	stat_inc(CLAIMD_ST_CONN_END_RACED);
	ingress_taint(&io, CLAIMD_IN_UNTIED);
	return 0;
}

__noinline int conn_adopt(struct claimd_sock *s, __u64 skaddr, __u32 tgid, int fd, int rejoin)
{
	struct claimd_conn_key key = { .tgid = tgid, .fd = fd };
	struct sock *sk = (struct sock *)skaddr;
	struct claimd_conn *c;
	__u32 zero = 0;

	if (!s)
		return 0;
	/* Taken by a process the filters leave out: not ours, and its mark goes. */
	if (s->role == CLAIMD_ROLE_INBOUND && !proc_wanted(tgid)) {
		sock_unmark(s);
		bpf_map_delete_elem(&socks, &skaddr);
		return 0;
	}
	c = bpf_map_lookup_elem(&conn_tmp, &zero);
	if (!c)
		return 0;
	__builtin_memset(c, 0, sizeof(*c));
	sock_addrs(sk, &c->local, &c->remote);
	c->role = s->role;
	c->flags = s->flags & CLAIMD_CONN_FAILED;
	c->sk_tag = claimd_sock_tag(skaddr);
	/* Inbound: we read requests and write responses; outbound the reverse. */
	http_framer_init(&c->rx,
			 c->role == CLAIMD_ROLE_OUTBOUND ? HTTP_KIND_RESPONSE : HTTP_KIND_REQUEST,
			 rejoin);
	http_framer_init(&c->tx,
			 c->role == CLAIMD_ROLE_OUTBOUND ? HTTP_KIND_REQUEST : HTTP_KIND_RESPONSE,
			 rejoin);
	if (!conn_put(&key, c)) {
		struct claimd_conn *cur = conn_find(&key);

		if (cur && cur->sk_tag == CLAIMD_SOCK_TAG_ENDING)
			conn_end_raced(tgid, fd, (__u32)bpf_get_current_pid_tgid());
		return 0;
	}
	s->key = key;
	mark_traced(tgid);
	return 1;
}

/*
 * Is c a connection claimd seeded (its socket known by inode number only)
 * whose socket is the one at skaddr, moving bytes now? Then the entry
 * learns its tag and the socket's end will find it (socks). 1: it is.
 */
static __always_inline int conn_seeded_found(struct claimd_conn *c, struct claimd_conn_key *key,
					     __u64 skaddr)
{
	struct claimd_sock fresh = { .key = *key, .role = c->role }, *s;

	if (c->sk_tag || c->ino != sock_ino((void *)skaddr))
		return 0;
	c->sk_tag = claimd_sock_tag(skaddr);
	fresh.slot = claimd_sock_slot(c->local.port, c->remote.port);
	fresh.flags = CLAIMD_SOCK_MARKED; /* claimd counted it as it seeded it */
	s = bpf_map_lookup_elem(&socks, &skaddr);
	if (s) {
		/* Born under watch too, after claimd attached: counted twice, or now. */
		sock_unmark(s);
		s->slot = fresh.slot;
		s->flags |= CLAIMD_SOCK_MARKED;
		s->key = *key;
		return 1;
	}
	if (bpf_map_update_elem(&socks, &skaddr, &fresh, BPF_NOEXIST))
		stat_inc(CLAIMD_ST_CONN_FULL);
	return 1;
}

static __always_inline int connect_error_is_transport(long err)
{
	return err == -ECONNREFUSED || err == -ETIMEDOUT || err == -ENETUNREACH ||
	       err == -EHOSTUNREACH || err == -ECONNRESET;
}

static __always_inline int error_is_transport(long err)
{
	return connect_error_is_transport(err) || err == -EPIPE || err == -ECONNABORTED;
}

/*
 * A write of ret bytes on io was framed, or passed unframed: on an outbound
 * TCP connection (io->sk), the writes framed end where its bytes do. An
 * early answer whose request it did not carry will get none (its send's
 * bytes went unseen, or held no request).
 */
static __always_inline void conn_tx_framed(struct claimd_conn *c, const struct io *io, long ret)
{
	if (io->dir != DIR_TX || ret <= 0 || !io->sk)
		return;
	egress_early_drop(c);
	c->tx_seq = io->tx_from + (__u32)ret;
	c->flags |= CLAIMD_CONN_SEQ;
}

/* A read or write on a followed connection returned ret <= 0. */
static __always_inline void io_failed(struct claimd_conn *c, struct io *io, long ret, __u64 ubuf,
				      __u64 len)
{
	if (c->role == CLAIMD_ROLE_OUTBOUND) {
		if (ret == 0 && io->dir == DIR_RX) {
			/* EOF: ends a body framed by the close, fails calls still waiting. */
			http_close(&c->rx);
			if (c->count || c->extra || c->answer_active)
				egress_fail_all(c, io);
			return;
		}
		if (!error_is_transport(ret))
			return;
		if (c->count || c->extra || c->answer_active) {
			egress_fail_all(c, io);
		} else if (!(c->flags & (CLAIMD_CONN_SENT | CLAIMD_CONN_FAILED))) {
			/* A non-blocking connect that was refused shows up here. */
			c->flags |= CLAIMD_CONN_FAILED;
			egress_connect_failed(io, &c->remote);
		}
		return;
	}
	if (c->role == CLAIMD_ROLE_INBOUND && io->dir == DIR_TX && c->count &&
	    (ret == -EPIPE || ret == -ECONNRESET)) {
		/* The client left: record what the service tried to answer. */
		ingress_close(c, io, peek_status(ubuf, len), CLAIMD_IN_PEER_GONE);
	}
}

/*
 * How a syscall moved a socket's bytes: through one buffer, an iovec array,
 * a msghdr, or in a way claimd cannot read (sendfile, splice, the mmsg
 * calls, a read that drops them: bytes it must take as body, or lose the
 * framing).
 */
enum io_kind { IO_BUF, IO_IOV, IO_MSG, IO_UNFRAMED };

struct user_msghdr_head {
	void *name;
	__u64 namelen;
	__u64 iov;
	__u64 iovlen;
};

/*
 * The connection the socket at skaddr, born under watch, is when its first
 * bytes move through key (the current process and fd): made now, or, if it
 * became one under another name (an fd it was duplicated to, a process it
 * was inherited from), that one, and key says so. NULL: not followed.
 */
static __always_inline struct claimd_conn *conn_of_socket(struct claimd_conn_key *key, __u64 skaddr)
{
	struct claimd_sock *s = bpf_map_lookup_elem(&socks, &skaddr);
	struct claimd_conn *c;
	int rejoin = 0;

	/* A Unix socket needs no birth seen (bpf/unixsock.c): a TCP one is not ours. */
	if (!s || (s->flags & CLAIMD_SOCK_UNIX))
		return conn_adopt_unix(skaddr, key->tgid, key->fd) ? conn_find(key) : NULL;
	if (s->key.tgid) {
		c = conn_find(&s->key);
		if (c && c->sk_tag == claimd_sock_tag(skaddr)) {
			*key = s->key;
			return c;
		}
		/* That entry is gone (evicted, or its fd came to name another socket). */
		s->key.tgid = 0;
		s->key.fd = 0;
		rejoin = 1;
		stat_inc(CLAIMD_ST_CONN_REJOINED);
	}
	if (!conn_adopt(s, skaddr, key->tgid, key->fd, rejoin))
		return NULL;
	return conn_find(key);
}

/*
 * A socket of process tgid (task the current one) moved ret bytes (or
 * failed) in the syscall whose arguments are a: through the framer. fd: the
 * argument that names the socket, skaddr the socket; peek: the bytes stay
 * to be read (MSG_PEEK).
 */
static __always_inline void on_io(struct task_struct *task, __u32 tgid, const struct sys_args *a,
				  int fd, __u64 skaddr, long ret, __u32 dir, __u32 kind, int peek)
{
	struct claimd_conn_key key = { .tgid = tgid, .fd = fd };
	struct claimd_conn *c;
	struct scan_buf *buf;
	struct io io;
	__u32 zero = 0, pflags;

	c = conn_find(&key);
	/*
	 * The fd names another socket than the one followed there: that one
	 * lives on where claimd did not see its end (it was duplicated, or
	 * passed to another process, before this fd was closed or duplicated
	 * over). It is gone as at a close, never framed with these bytes.
	 */
	if (c &&
	    c->sk_tag != ((c->flags & CLAIMD_CONN_UNIX) ? unix_sock_tag(skaddr)
							: claimd_sock_tag(skaddr)) &&
	    !conn_seeded_found(c, &key, skaddr)) {
		conn_stale(c, &key, task->pid);
		c = NULL;
	}
	if (!c)
		c = conn_of_socket(&key, skaddr);
	pflags = c ? proc_flags(key.tgid) : 0;
	if (!c || !word_frames(pflags))
		return;
	/* Peeked bytes are read again: the look only keeps the entry in use (its LRU mark). */
	if (c->role < CLAIMD_ROLE_INBOUND || peek)
		return;
	io.key = key;
	io.now = 0; /* read where it is needed (io_now) */
	io.sk = 0;
	io.tid = task->pid;
	io.dir = dir;
	io.tx_from = 0;
	/* Where its answers may come before its requests are framed (egress_answer_early). */
	if (c->role == CLAIMD_ROLE_OUTBOUND && !(c->flags & CLAIMD_CONN_UNIX)) {
		io.sk = skaddr;
		if (dir == DIR_TX && ret > 0)
			io.tx_from = sock_write_seq(skaddr) - (__u32)ret;
	}
	/* A connect its request made has returned: how, where no state change says (bpf/connects.c). */
	if ((pflags & PROC_CONNECTS) && c->role == CLAIMD_ROLE_INBOUND && dir == DIR_TX &&
	    connect_notes_open(key.tgid))
		connect_settle(key.tgid, io.tid);
	if (kind == IO_UNFRAMED) {
		if (ret > 0)
			feed_unframed(c, &io, ret);
		conn_tx_framed(c, &io, ret);
		return;
	}
	/* Node.js: which read's bytes its HTTP parser parses next (bpf/node.bpf.h). */
	if ((pflags & PROC_NODE) && dir == DIR_RX && kind == IO_BUF && ret > 0)
		node_read_note(io.tid, key.fd, a->a1, c->role == CLAIMD_ROLE_INBOUND);
	if (ret <= 0) {
		io_failed(c, &io, ret, a->a1, a->a2);
		if (c->flags & CLAIMD_CONN_UNIX)
			unix_io_failed(c, &key, &io, ret);
		return;
	}
	/* TLS: the plaintext comes from the SSL_* probes; these bytes are ciphertext. */
	if (!(c->flags & (CLAIMD_CONN_HTTP | CLAIMD_CONN_TLS)) && kind == IO_BUF &&
	    tls_record(a->a1, ret))
		tls_mark(c);
	if (c->flags & CLAIMD_CONN_TLS) {
		tls_note_fd(c, &io);
		tls_unseen(c, &io, pflags);
		return;
	}
	/* Per CPU: a tracepoint's program is not preempted (a uprobe's is: tls.c). */
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		return;
	/* A database or a cache (bpf/wire.c): told by the first bytes, then framed there. */
	if (c->role == CLAIMD_ROLE_OUTBOUND && (!c->told || c->proto >= CLAIMD_PROTO_REDIS)) {
		int wire;

		buf->ubuf = kind == IO_BUF ? a->a1 : 0;
		buf->len = ret;
		wire = wire_on_io(c, &key, &io, buf);
		if (wire == 2) {
			/*
			 * Looked up again here, not framed from wire_on_io: a
			 * global function returns no pointer, and its frame under
			 * the framing's would take the deepest chain past 512 bytes.
			 */
			struct wire_conn *w = bpf_map_lookup_elem(&wire_conns, &key);

			if (w)
				wire_feed_segment(c, &io, buf, w);
		}
		if (wire)
			return;
	}
	if (kind == IO_BUF) {
		feed_buf(c, &io, buf, a->a1, ret);
	} else if (kind == IO_IOV) {
		feed_iov(c, &io, buf, a->a1, a->a2, ret);
	} else {
		/* Read into the window, not onto the stack: tp_io_x's frame is on its deepest chain. */
		struct user_msghdr_head *m = (struct user_msghdr_head *)buf->data;

		if (bpf_probe_read_user(m, sizeof(*m), (const void *)a->a1))
			__builtin_memset(m, 0, sizeof(*m));
		feed_iov(c, &io, buf, m->iov, m->iovlen, ret);
	}
	conn_tx_framed(c, &io, ret);
	conn_taint_io(c, &io);
}

#define MSG_TRUNC    0x20
#define MSG_ERRQUEUE 0x2000

/*
 * Every time a TCP socket's bytes move: at the end of sock_recvmsg and
 * sock_sendmsg, whichever syscall called them (the section names the
 * receiving side; claimd attaches the same program to sock_send_length,
 * user/claimd/kernel/io_attach.c). These tracepoints fire only for sockets: a read
 * or write of a file, a pipe or a terminal runs no program at all, where
 * the syscalls' own tracepoints ran one for every read and write on the
 * host. Attached raw: the program gets the tracepoint's arguments (the
 * socket, the bytes moved or the error, the flags) as they are, where the
 * perf event behind a plain tracepoint program first builds its record in
 * a per-CPU buffer (an empty program costs a TCP syscall about 85 ns less
 * so, on every process of the host: docs/performance.md). The syscall's
 * number and arguments come from the task's saved registers. One program
 * for all of them, told apart by that number: one copy of the framer's
 * code in the instruction cache.
 *
 * Its filter is paid by every socket read and write of the host: an IP
 * socket no followed connection holds (sock_marks, headers/observer.h)
 * leaves at its mark, after one load from the socket's first line
 * (sock_head_of) and one from the filter's array, before any helper call;
 * then UDP and the error queue. A process not followed whose socket shares
 * a slot with a followed one leaves after one helper call, two loads and a
 * miss in socks. A Unix socket goes at its family to its own filter
 * (unix_io_task, bpf/unix.bpf.h): a datagram's leaves at its type.
 */
SEC("raw_tp/sock_recv_length")
int tp_io_x(struct bpf_raw_tracepoint_args *ctx)
{
	/* TP_PROTO(struct sock *sk, int ret, int flags) */
	__u64 skaddr = ctx->args[0];
	struct sock *sk = bpf_rdonly_cast((void *)skaddr, bpf_core_type_id_kernel(struct sock));
	struct sock_head h = sock_head_of(skaddr);
	long ret = (int)ctx->args[1];
	int flags = (int)ctx->args[2];
	__u32 dir = DIR_RX, kind = IO_BUF, fd_arg = 0;
	struct task_struct *task;
	struct pt_regs *regs;
	struct sys_args a;
	int fd;

	if (h.family != AF_INET && h.family != AF_INET6) {
		if (h.family != AF_UNIX)
			return 0;
		/* A Unix socket: its own filter (bpf/unix.bpf.h), off the TCP path. */
		task = unix_io_task(sk, skaddr);
		if (!task)
			return 0;
	} else {
		if (!sock_marked(sock_head_slot(&h, skaddr)) && !sock_fastopen(&h, skaddr, ret))
			return 0;
		if (sk->sk_protocol != IPPROTO_TCP || (flags & MSG_ERRQUEUE))
			return 0;
		task = bpf_get_current_task_btf();
	}
	/*
	 * A process not followed yet becomes one only by a socket born under
	 * watch (a Unix one: the accepted end of a followed process's call).
	 */
	if (!task_may_be_traced(task) && !bpf_map_lookup_elem(&socks, &skaddr))
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	switch (SYSNR_OF(regs)) {
	case SYSNR_READ:
	case SYSNR_RECVFROM:
		break;
	case SYSNR_READV:
		kind = IO_IOV;
		break;
	case SYSNR_RECVMSG:
		kind = IO_MSG;
		break;
	case SYSNR_RECVMMSG:
		kind = IO_UNFRAMED;
		break;
	case SYSNR_WRITE:
	case SYSNR_SENDTO:
		dir = DIR_TX;
		break;
	case SYSNR_WRITEV:
		dir = DIR_TX;
		kind = IO_IOV;
		break;
	case SYSNR_SENDMSG:
		dir = DIR_TX;
		kind = IO_MSG;
		break;
	case SYSNR_SENDFILE64:
	case SYSNR_SENDMMSG:
		dir = DIR_TX;
		kind = IO_UNFRAMED;
		break;
	case SYSNR_SPLICE: /* splice(fd_in, off_in, fd_out, ...): the socket is fd_out */
		dir = DIR_TX;
		kind = IO_UNFRAMED;
		fd_arg = 2;
		break;
	default:
		/* io_uring's operations (its ring's, its workers'), or kernel work: unread. */
		io_unseen(task->tgid);
		return 0;
	}
	/* A TCP read with MSG_TRUNC drops the bytes: none reached the buffer. */
	if (dir == DIR_RX && (flags & MSG_TRUNC))
		kind = IO_UNFRAMED;
	regs_sys_args(regs, &a);
	fd = fd_arg == 2 ? a.a2 : a.a0;
	/* One body for every syscall: no copy of on_io specialized per case. */
	barrier_var(dir);
	barrier_var(kind);
	on_io(task, task->tgid, &a, fd, skaddr, ret, dir, kind, flags & MSG_PEEK);
	return 0;
}

/*
 * Forgets the connection c at key, whose socket's tag was tag when its end
 * began (held: the tag its entry holds now, CLAIMD_SOCK_TAG_ENDING when
 * conn_end claimed it): its entry, its explicit context, its SSL tie.
 * Unless the name went to another socket meanwhile: a socket's close is
 * seen when its owner's close returns, after the fd was freed, so another
 * thread may take the fd for its next socket and have it adopted (its old
 * entry found stale, conn_stale) on another CPU, in the very element c
 * pointed to. That entry is not this one's to forget. Nor is what the
 * name holds beside it (an explicit context, a wire state) once the next
 * socket is in the table beside the entry being ended (conn_put): that
 * socket's, or found stale by it.
 */
static __always_inline void conn_forget(struct claimd_conn *c, struct claimd_conn_key *key,
					__u32 tag, __u32 held)
{
	struct claimd_conn *cur;
	__u32 slot;

	if (c->sk_tag != held)
		return;
	cur = conn_find(key);
	if (cur && cur->sk_tag == held) {
		if (c->role == CLAIMD_ROLE_INBOUND) {
			struct claimd_thread *t = bpf_map_lookup_elem(&conn_ctx, key);

			/* An event loop's request unanswered: known by its keys no more. */
			if (t && keyed_known(t))
				keyed_forget(t);
			bpf_map_delete_elem(&conn_ctx, key);
		}
		if (c->proto >= CLAIMD_PROTO_REDIS)
			bpf_map_delete_elem(&wire_conns, key);
	}
	/* Keyed by its own SSL pointer: its, whoever has the name now. */
	tls_forget(c, key);
	/* Seeded, its socket never seen since: the filter's count for it is its own. */
	slot = tag ? CLAIMD_SOCK_MARKS : claimd_sock_slot(c->local.port, c->remote.port);
	if (conn_drop(key, held))
		return;
	if (slot < CLAIMD_SOCK_MARKS)
		sock_mark_add(slot, -1);
	stat_inc(CLAIMD_ST_CONN_CLOSED);
}

/*
 * The connection c, named key, is gone (its socket ended, or its fd came to
 * name another one): what waited on it ends, as thread tid saw it, and we
 * forget it. tag: its socket's, as the caller found it in c.
 *
 * Two may end it at once: its owner's close (sock_end, run once the fd is
 * free) and the fd's next socket on another CPU, which finds the entry
 * stale (conn_stale) and would be adopted in the very element c points to.
 * So the end is claimed first: the one that swaps the tag for
 * CLAIMD_SOCK_TAG_ENDING ends it; the other leaves it, and no socket's
 * entry is written over it until it is dropped (conn_put). Not inline: one
 * copy, off the hot path.
 */
__noinline int conn_end(struct claimd_conn *c, struct claimd_conn_key *key, __u32 tid, __u32 tag)
{
	struct io io;
	int i;

	if (!c || !key || tag == CLAIMD_SOCK_TAG_ENDING ||
	    __sync_val_compare_and_swap(&c->sk_tag, tag, CLAIMD_SOCK_TAG_ENDING) != tag)
		return 0;
	io.key = *key;
	io.now = bpf_ktime_get_ns();
	io.sk = 0;
	io.tid = tid;
	io.dir = DIR_RX;
	io.tx_from = 0;
	if (c->role == CLAIMD_ROLE_INBOUND) {
		/* Requests read and never answered: the service failed them. */
		for (i = 0; i <= CLAIMD_FIFO_MAX; i++) {
			if (!c->count && !c->extra)
				break;
			ingress_close(c, &io, 0, CLAIMD_IN_CLOSED);
		}
	} else if (c->role == CLAIMD_ROLE_OUTBOUND) {
		http_close(&c->rx);
		/* The caller gave up waiting. */
		if (c->count || c->extra || c->answer_active)
			egress_fail_all(c, &io);
	}
	conn_forget(c, key, tag, CLAIMD_SOCK_TAG_ENDING);
	return 0;
}

/*
 * The connection c at key went without an end claimd saw: its fd now names
 * another socket (on_io). Gone as at a close, for thread tid.
 */
__noinline int conn_stale(struct claimd_conn *c, struct claimd_conn_key *key, __u32 tid)
{
	__u32 tag;

	if (!c || !key)
		return 0;
	/* Being ended on another CPU: not stale, and not this one's to end. */
	tag = c->sk_tag;
	if (tag == CLAIMD_SOCK_TAG_ENDING)
		return 0;
	stat_inc(CLAIMD_ST_CONN_STALE);
	conn_end(c, key, tid, tag);
	return 0;
}

/*
 * A process that may be followed began a program claimd has not read: it
 * is asked to, once per file (a placeholder marks it asked), while the
 * program starts, so that its process is known at its first socket, most
 * often, instead of unread (unread-program) while claimd reads it then.
 */
static __always_inline void program_ask(void)
{
	struct claimd_program_id id = {};
	__u32 asked = CLAIMD_PROGRAM_ASKED, tgid = bpf_get_current_pid_tgid() >> 32;

	if (!programs_read || !proc_wanted(tgid))
		return;
	program_id_current(&id);
	if (!bpf_map_update_elem(&programs, &id, &asked, BPF_NOEXIST))
		proc_record(CLAIMD_REC_EXEC, tgid);
}

/* What a process's word knew of the program it ran: learned again after an exec. */
#define PROC_PROGRAM_BITS                                                                      \
	(PROC_GO | PROC_GO_SYSCALLS | PROC_GO_SERVES | PROC_UNREAD | PROC_MUX | PROC_CONTEXT | \
	 PROC_NGINX | PROC_NODE | PROC_SSL | PROC_CONNECTS)

/*
 * A thread other than the leader that execs becomes the leader: the mark
 * (proc_mark) stayed with the old one. A followed process keeps it, and
 * its word forgets its old program for what its new one is (the programs
 * map), or that it is unread.
 */
SEC("tracepoint/sched/sched_process_exec")
int tp_proc_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 *t = bpf_map_lookup_elem(&traced, &tgid);
	__u32 bits;

	if (!t || !*t) {
		program_ask();
		return 0;
	}
	proc_mark_current();
	bits = program_bits_current();
	__sync_fetch_and_and(t, ~PROC_PROGRAM_BITS);
	if (bits)
		__sync_fetch_and_or(t, bits);
	if (bits & PROC_UNREAD)
		program_unread_record(tgid);
	return 0;
}

/*
 * The exiting thread tid gives its context's slot back, if it holds it.
 * Whatever it was serving can no longer be logged: its answer, if one
 * comes, is recorded without the calls (requests_context_lost).
 */
static __always_inline void thread_slot_free(__u32 tid)
{
	struct claimd_thread_slot *s = thread_slot_of(tid);

	if (!s || !tid || s->tid != tid)
		return;
	s->t.conn.tgid = 0;
	s->t.conn.fd = 0;
	if (__sync_val_compare_and_swap(&s->tid, tid, 0) == tid)
		stat_inc(CLAIMD_ST_THREAD_SLOTS_FREED);
}

/*
 * A process forks, under --pid: a child of a process it follows is
 * followed from its birth (pid_filter), whatever becomes of its parent: a
 * daemon forked twice has init, or a subreaper, for its parent by the time
 * it makes a socket, and a worker outlives a master restarted. A thread
 * leaves at once. Once per fork on the host, in the parent; one flag's
 * test where no --pid is given.
 */
SEC("raw_tp/sched_process_fork")
int tp_proc_fork(struct bpf_raw_tracepoint_args *ctx)
{
	/* TP_PROTO(struct task_struct *parent, struct task_struct *child) */
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 tgid, child_tgid;
	__u8 one = 1;

	if (!(filter_flags & CLAIMD_FILTER_PID))
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	child_tgid = BPF_CORE_READ(child, tgid);
	if (child_tgid == tgid || !pid_wanted(tgid))
		return 0;
	if (bpf_map_update_elem(&pid_filter, &child_tgid, &one, BPF_ANY))
		stat_inc(CLAIMD_ST_PID_FILTER_FULL);
	return 0;
}

/*
 * The exiting thread was its process's last: the process leaves with its
 * last thread, not with its leader. A leader that leaves first (a main
 * thread ending in pthread_exit) stays a zombie while the others serve, and
 * its pid is not reused before they are gone. do_exit takes the thread out
 * of signal->live before this tracepoint; two threads leaving at once may
 * both see 0.
 */
static __always_inline bool process_gone(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return BPF_CORE_READ(task, signal, live.counter) == 0;
}

SEC("tracepoint/sched/sched_process_exit")
int tp_proc_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	__u32 *t = bpf_map_lookup_elem(&traced, &tgid);
	struct claimd_outside *o;

	/* Every thread, followed or not: its process's word may be gone before it. */
	thread_slot_free((__u32)id);
	node_thread_gone((__u32)id);
	/* Only the whole process leaving from here on (process_gone). */
	if (!process_gone())
		return 0;
	/* A pid --pid follows leaves the filter with its process: its next owner is another. */
	if (filter_flags & CLAIMD_FILTER_PID)
		bpf_map_delete_elem(&pid_filter, &tgid);
	/* Nor did its next owner make its connects (connect_unfollowed: --port only). */
	o = bpf_map_lookup_elem(&outside_calls, &tgid);
	if (o && o->unfollowed)
		o->unfollowed = 0;
	/* And only one we followed, once: two last threads may both see it gone. */
	if (!t || !*t || !__sync_lock_test_and_set(t, 0))
		return 0;
	/* A reused pid serves nothing until it does (struct claimd_outside). */
	if (o) {
		o->port = 0;
		o->key_strays = 0;
		o->connect_notes = 0;
	}
	bpf_map_delete_elem(&go_dials, &tgid);
	proc_record(CLAIMD_REC_EXIT, tgid);
	return 0;
}
