// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c: the syscall tracepoints. Connections appear at
 * accept, connect and listen (claimd seeds the ones that already existed),
 * move bytes through read and write families (handled at exit only, their
 * arguments read from the task's saved registers), and leave at close, dup2
 * over them, or the process's exit.
 */

#define EINTR	     4
#define EPIPE	     32
#define ENETUNREACH  101
#define ECONNABORTED 103
#define ECONNRESET   104
#define ETIMEDOUT    110
#define ECONNREFUSED 111
#define EHOSTUNREACH 113
#define EINPROGRESS  115
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

static __always_inline void sys_args(struct sys_args *a)
{
	regs_sys_args((struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()), a);
}

/*
 * The network namespace of the current task: one claimd per "host" of a
 * fleet made of namespaces follows only its own. Asked where connections
 * appear (accept, connect, listen), never on the read/write path.
 */
static __always_inline int netns_wanted(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return BPF_CORE_READ(task, nsproxy, net_ns, ns.inum) == filter_netns;
}

/*
 * Connections appear only here: a process that fails these tests is never
 * marked, so its later syscalls leave at proc_may_be_traced's one load.
 */
static __always_inline int proc_wanted(__u32 tgid)
{
	if (tgid == self_tgid)
		return 0;
	if ((filter_flags & CLAIMD_FILTER_NETNS) && !netns_wanted())
		return 0;
	if ((filter_flags & CLAIMD_FILTER_PID) && !bpf_map_lookup_elem(&pid_filter, &tgid))
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

__noinline int conn_stale(struct claimd_conn *c, struct claimd_conn_key *key, __u32 tid);

/* Start following the socket behind fd. */
static __always_inline struct claimd_conn *conn_add(__u32 tgid, int fd, struct sock *sk, __u8 role,
						    __u8 flags)
{
	struct claimd_conn_key key = { .tgid = tgid, .fd = fd };
	struct claimd_conn *c, *old = bpf_map_lookup_elem(&conns, &key);
	__u32 zero = 0;
	__u16 port;

	/*
	 * An entry left for this fd: its socket went without a close claimd
	 * saw (close_range, exec closing it). Gone as at a close, what waited
	 * on it ended, before the scratch below is filled.
	 */
	if (old)
		conn_stale(old, &key, (__u32)bpf_get_current_pid_tgid());
	c = bpf_map_lookup_elem(&conn_tmp, &zero);
	if (!c)
		return NULL;
	__builtin_memset(c, 0, sizeof(*c));
	sock_addrs(sk, &c->local, &c->remote);
	port = role == CLAIMD_ROLE_OUTBOUND ? c->remote.port : c->local.port;
	if (!port_wanted(port))
		return NULL;
	c->role = role;
	c->flags = flags;
	/* Inbound: we read requests and write responses; outbound the reverse. */
	http_framer_init(&c->rx,
			 role == CLAIMD_ROLE_OUTBOUND ? HTTP_KIND_RESPONSE : HTTP_KIND_REQUEST, 0);
	http_framer_init(&c->tx,
			 role == CLAIMD_ROLE_OUTBOUND ? HTTP_KIND_REQUEST : HTTP_KIND_RESPONSE, 0);
	/* Marked before it is in the table: never an entry its mark does not count. */
	c->ino = sock_ino(sk);
	sock_mark_add(c->ino, 1);
	if (bpf_map_update_elem(&conns, &key, c, BPF_ANY)) {
		sock_mark_add(c->ino, -1);
		stat_inc(CLAIMD_ST_CONN_FULL);
		return NULL;
	}
	mark_traced(tgid);
	stat_inc(CLAIMD_ST_CONNS);
	return c;
}

/*
 * claimd's change to the count of followed connections on a socket (the
 * ones it seeds from /proc, and forgets when their process is gone): run
 * with BPF_PROG_TEST_RUN, args[0] the socket's inode number, args[1] the
 * change. Never attached.
 */
SEC("raw_tp")
int claimd_mark(struct bpf_raw_tracepoint_args *ctx)
{
	sock_mark_add(ctx->args[0], (int)ctx->args[1]);
	return 0;
}

static __always_inline int on_accept(struct trace_event_raw_sys_exit *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	int fd = ctx->ret;
	struct sock *sk;

	if (fd < 0 || !proc_wanted(tgid))
		return 0;
	sk = sock_of_fd(fd);
	if (sk && sock_is_tcp(sk))
		conn_add(tgid, fd, sk, CLAIMD_ROLE_INBOUND, CLAIMD_CONN_CONNECTED);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_accept4")
int tp_accept4_x(struct trace_event_raw_sys_exit *ctx)
{
	return on_accept(ctx);
}

SEC("tracepoint/syscalls/sys_exit_accept")
int tp_accept_x(struct trace_event_raw_sys_exit *ctx)
{
	return on_accept(ctx);
}

SEC("tracepoint/syscalls/sys_exit_listen")
int tp_listen_x(struct trace_event_raw_sys_exit *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct claimd_listen *rec;
	struct claimd_conn *c;
	struct sys_args a;
	struct sock *sk;

	if (ctx->ret != 0 || !proc_wanted(tgid))
		return 0;
	sys_args(&a);
	sk = sock_of_fd(a.a0);
	if (!sk || !sock_is_tcp(sk))
		return 0;
	c = conn_add(tgid, a.a0, sk, CLAIMD_ROLE_LISTENER, 0);
	if (!c)
		return 0;
	proc_listeners_add(tgid, 1);
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		stat_inc(CLAIMD_ST_RB_DROPS);
		return 0;
	}
	rec->hdr.type = CLAIMD_REC_LISTEN;
	rec->hdr.version = CLAIMD_RECORD_VERSION;
	rec->hdr.size = sizeof(*rec);
	rec->tgid = tgid;
	rec->closed = 0;
	rec->local = c->local;
	proc_comm(rec->comm);
	submit_now(rec);
	return 0;
}

static __always_inline int connect_error_is_transport(long err)
{
	return err == -ECONNREFUSED || err == -ETIMEDOUT || err == -ENETUNREACH ||
	       err == -EHOSTUNREACH || err == -ECONNRESET;
}

SEC("tracepoint/syscalls/sys_exit_connect")
int tp_connect_x(struct trace_event_raw_sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	long ret = ctx->ret;
	struct sys_args a;
	struct sock *sk;

	if (ret != 0 && ret != -EINPROGRESS && !connect_error_is_transport(ret))
		return 0;
	if (!proc_wanted(tgid))
		return 0;
	sys_args(&a);
	sk = sock_of_fd(a.a0);
	if (!sk || !sock_is_tcp(sk))
		return 0;
	if (ret == 0 || ret == -EINPROGRESS) {
		conn_add(tgid, a.a0, sk, CLAIMD_ROLE_OUTBOUND,
			 ret == 0 ? CLAIMD_CONN_CONNECTED : 0);
	} else if (!(proc_flags(tgid) & PROC_GO)) {
		struct io io = { .now = bpf_ktime_get_ns(),
				 .key = { .tgid = tgid, .fd = a.a0 },
				 .tid = (__u32)id };
		struct claimd_addr callee;

		if (addr_from_user(&callee, (const void *)a.a1) && port_wanted(callee.port))
			egress_connect_failed(&io, &callee);
	}
	return 0;
}

static __always_inline int error_is_transport(long err)
{
	return connect_error_is_transport(err) || err == -EPIPE || err == -ECONNABORTED;
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
 * A socket of process tgid (task the current one, its leader marked) moved
 * ret bytes (or failed) in the syscall whose arguments are a: through the
 * framer. fd: the argument that names the socket, ino the socket's inode
 * number (0: unknown); peek: the bytes stay to be read (MSG_PEEK).
 */
static __always_inline void on_io(struct task_struct *task, __u32 tgid, const struct sys_args *a,
				  int fd, __u64 ino, long ret, __u32 dir, __u32 kind, int peek)
{
	struct claimd_conn_key key = { .tgid = tgid, .fd = fd };
	struct claimd_conn *c;
	struct scan_buf *buf;
	struct io io;
	__u32 zero = 0;

	if (!syscalls_frame(tgid))
		return;
	c = bpf_map_lookup_elem(&conns, &key);
	if (!c)
		return;
	/*
	 * The fd names another socket than the one followed there: that one
	 * went without a close claimd saw (close_range, an fd duplicated or
	 * passed in over it). It is gone as at a close, never framed with
	 * these bytes.
	 */
	if (ino && c->ino && c->ino != ino) {
		conn_stale(c, &key, task->pid);
		return;
	}
	/* Peeked bytes are read again: the look only keeps the entry in use (its LRU mark). */
	if (c->role < CLAIMD_ROLE_INBOUND || peek)
		return;
	io.key = key;
	io.now = bpf_ktime_get_ns();
	io.tid = task->pid;
	io.dir = dir;
	if (kind == IO_UNFRAMED) {
		if (ret > 0)
			feed_unframed(c, &io, ret);
		return;
	}
	if (ret <= 0) {
		io_failed(c, &io, ret, a->a1, a->a2);
		return;
	}
	c->flags |= CLAIMD_CONN_CONNECTED;
	/* TLS: the plaintext comes from the SSL_* probes; these bytes are ciphertext. */
	if (!(c->flags & (CLAIMD_CONN_HTTP | CLAIMD_CONN_TLS)) && kind == IO_BUF &&
	    tls_record(a->a1, ret))
		tls_mark(c);
	if (c->flags & CLAIMD_CONN_TLS) {
		tls_note_fd(c, &io);
		return;
	}
	/* Per CPU: a tracepoint's program is not preempted (a uprobe's is: tls.c). */
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		return;
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
	/* Bytes moved while this direction seeks a message start: whose, we cannot tell. */
	if (c->lost & lost_bit(&io))
		ingress_taint(&io, CLAIMD_IN_BLIND);
}

#define MSG_TRUNC    0x20
#define MSG_ERRQUEUE 0x2000

/*
 * Every time a TCP socket's bytes move: at the end of sock_recvmsg and
 * sock_sendmsg, whichever syscall called them (the section names the
 * receiving side; claimd attaches the same program to sock_send_length,
 * user/claimd/io_attach.c). These tracepoints fire only for sockets: a read
 * or write of a file, a pipe or a terminal runs no program at all, where
 * the syscalls' own tracepoints ran one for every read and write on the
 * host. Attached raw: the program gets the tracepoint's arguments (the
 * socket, the bytes moved or the error, the flags) as they are, where the
 * perf event behind a plain tracepoint program first builds its record in
 * a per-CPU buffer (an empty program costs a TCP syscall about 85 ns less
 * so, on every process of the host: docs/performance.md). The socket's
 * family and protocol are two loads from it; the syscall's number and
 * arguments come from its saved registers. One program for all of them,
 * told apart by that number: one copy of the framer's code in the
 * instruction cache. A socket no followed connection holds (sock_marks,
 * headers/observer.h), one of another kind (UDP, Unix), or bytes from the
 * error queue, leave before any helper call; a process not followed whose
 * socket shares a slot with a followed one, after one helper call and two
 * loads.
 */
SEC("raw_tp/sock_recv_length")
int tp_io_x(struct bpf_raw_tracepoint_args *ctx)
{
	/* TP_PROTO(struct sock *sk, int ret, int flags) */
	struct sock *sk =
		bpf_rdonly_cast((void *)ctx->args[0], bpf_core_type_id_kernel(struct sock));
	long ret = (int)ctx->args[1];
	int flags = (int)ctx->args[2];
	__u32 dir = DIR_RX, kind = IO_BUF, fd_arg = 0;
	struct task_struct *task;
	struct pt_regs *regs;
	struct sys_args a;
	__u16 family;
	__u64 ino;
	int fd;

	/*
	 * Unix sockets leave at their family; an IP socket nobody follows, the
	 * bulk of what is left, at its mark, before the checks only a marked
	 * one needs (3.7 ns a run less than all of them first: docs/performance.md).
	 */
	family = sk->__sk_common.skc_family;
	if (family != AF_INET && family != AF_INET6)
		return 0;
	ino = sock_ino(sk);
	if (!sock_marked(ino))
		return 0;
	if (sk->sk_protocol != IPPROTO_TCP || (flags & MSG_ERRQUEUE))
		return 0;
	task = bpf_get_current_task_btf();
	if (!task_may_be_traced(task))
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
		return 0; /* io_uring and kernel work: no syscall of the process's own */
	}
	/* A TCP read with MSG_TRUNC drops the bytes: none reached the buffer. */
	if (dir == DIR_RX && (flags & MSG_TRUNC))
		kind = IO_UNFRAMED;
	regs_sys_args(regs, &a);
	fd = fd_arg == 2 ? a.a2 : a.a0;
	/* One body for every syscall: no copy of on_io specialized per case. */
	barrier_var(dir);
	barrier_var(kind);
	on_io(task, task->tgid, &a, fd, ino, ret, dir, kind, flags & MSG_PEEK);
	return 0;
}

/*
 * The connection behind (tgid, fd) is gone: what waited on it ends, and we
 * forget it. fd_open: the fd still refers to the socket (close(2) at entry).
 */
static __always_inline void conn_gone(struct claimd_conn *c, struct claimd_conn_key key, __u32 tid,
				      int fd_open)
{
	struct io io;
	__u64 ino;
	int i;

	io.key = key;
	io.now = bpf_ktime_get_ns();
	io.tid = tid;
	io.dir = DIR_RX;
	if (c->role == CLAIMD_ROLE_INBOUND) {
		/* Requests read and never answered: the service failed them. */
		for (i = 0; i <= CLAIMD_FIFO_MAX; i++) {
			if (!c->count && !c->extra)
				break;
			ingress_close(c, &io, 0, CLAIMD_IN_CLOSED);
		}
	} else if (c->role == CLAIMD_ROLE_OUTBOUND) {
		http_close(&c->rx);
		if (c->count || c->extra || c->answer_active) {
			/* The caller gave up waiting. */
			egress_fail_all(c, &io);
		} else if (fd_open && !(c->flags & (CLAIMD_CONN_CONNECTED | CLAIMD_CONN_FAILED)) &&
			   !(proc_flags(key.tgid) & PROC_GO)) {
			/* Non-blocking connect never completed: refused or timed out. */
			struct sock *sk = sock_of_fd(key.fd);
			__u8 st = sk ? sock_state(sk) : 0;

			if (st == TCP_CLOSE || st == TCP_SYN_SENT)
				egress_connect_failed(&io, &c->remote);
		}
	} else if (c->role == CLAIMD_ROLE_LISTENER) {
		struct claimd_listen *rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);

		proc_listeners_add(key.tgid, -1);

		if (rec) {
			rec->hdr.type = CLAIMD_REC_LISTEN;
			rec->hdr.version = CLAIMD_RECORD_VERSION;
			rec->hdr.size = sizeof(*rec);
			rec->tgid = key.tgid;
			rec->closed = 1;
			rec->local = c->local;
			proc_comm(rec->comm);
			submit_now(rec);
		} else {
			stat_inc(CLAIMD_ST_RB_DROPS);
		}
	}
	if (c->role == CLAIMD_ROLE_INBOUND)
		bpf_map_delete_elem(&conn_ctx, &key);
	tls_forget(c, key.tgid);
	ino = c->ino;
	if (!bpf_map_delete_elem(&conns, &key)) {
		sock_mark_add(ino, -1); /* after it left the table */
		stat_inc(CLAIMD_ST_CONN_CLOSED);
	}
}

/*
 * The connection c at key went without a close claimd saw: its fd now
 * names another socket (on_io), or a new connection takes it (conn_add).
 * Gone as at a close, for thread tid. Not inline: one copy, off the hot
 * path.
 */
__noinline int conn_stale(struct claimd_conn *c, struct claimd_conn_key *key, __u32 tid)
{
	if (!c || !key)
		return 0;
	stat_inc(CLAIMD_ST_CONN_STALE);
	conn_gone(c, *key, tid, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_close")
int tp_close(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct claimd_conn_key key;
	struct claimd_conn *c;

	if (!is_traced(tgid))
		return 0;
	key.tgid = tgid;
	key.fd = ctx->args[0];
	c = bpf_map_lookup_elem(&conns, &key);
	if (c)
		conn_gone(c, key, (__u32)id, 1);
	return 0;
}

/*
 * dup2(old, new) and dup3 close what 'new' was without a close(2): a socket
 * we followed there is gone, and the fd now reads and writes something else.
 */
static __always_inline int on_dup(struct trace_event_raw_sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct claimd_conn_key key;
	struct claimd_conn *c;
	struct sys_args a;

	if (!is_traced(tgid) || ctx->ret < 0)
		return 0;
	sys_args(&a);
	if (a.a0 == a.a1)
		return 0;
	key.tgid = tgid;
	key.fd = ctx->ret;
	c = bpf_map_lookup_elem(&conns, &key);
	if (c)
		conn_gone(c, key, (__u32)id, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_dup2")
int tp_dup2_x(struct trace_event_raw_sys_exit *ctx)
{
	return on_dup(ctx);
}

SEC("tracepoint/syscalls/sys_exit_dup3")
int tp_dup3_x(struct trace_event_raw_sys_exit *ctx)
{
	return on_dup(ctx);
}

/*
 * A thread other than the leader that execs becomes the leader: the mark
 * (proc_mark) stayed with the old one. A followed process keeps it.
 */
SEC("tracepoint/sched/sched_process_exec")
int tp_proc_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 *t = bpf_map_lookup_elem(&traced, &tgid);

	if (t && *t)
		proc_mark_current();
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

SEC("tracepoint/sched/sched_process_exit")
int tp_proc_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	__u32 *t = bpf_map_lookup_elem(&traced, &tgid);
	struct claimd_exit *rec;

	/* Every thread, followed or not: its process's word may be gone before it. */
	thread_slot_free((__u32)id);
	/* Only the whole process leaving, and only one we followed. */
	if ((__u32)id != tgid || !t || !*t)
		return 0;
	*t = 0;
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		stat_inc(CLAIMD_ST_RB_DROPS);
		return 0;
	}
	rec->hdr.type = CLAIMD_REC_EXIT;
	rec->hdr.version = CLAIMD_RECORD_VERSION;
	rec->hdr.size = sizeof(*rec);
	rec->tgid = tgid;
	rec->pad = 0;
	submit_now(rec);
	return 0;
}
