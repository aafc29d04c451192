// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c. Where TCP sockets are born and end, from the
 * state changes TCP makes (sock:inet_sock_set_state) and the socket's free
 * (tcp:tcp_destroy_sock), in place of the syscall tracepoints accept,
 * connect, listen, close and dup: a syscall tracepoint, whatever its
 * program, puts every syscall of every process on the kernel's slow path
 * (docs/performance.md), where these fire a few times per connection.
 *
 * Births: a connect's SYN sent (CLOSE -> SYN_SENT, in the connecting
 * thread) by a process claimd follows; a connection taken by a listener
 * (LISTEN -> SYN_RECV, in softirq: which process accepts it is learned at
 * its first bytes, conn_adopt; with a process filter, only on a followed
 * listener's port). Each goes into socks and is marked in the filter (an
 * outbound one once connected, or at bytes it moves before, once its local
 * port is known: sock_mark_connecting), and becomes a connection at its
 * first bytes. A listener of a followed process is kept in listeners, its
 * port in listen_ports.
 *
 * Ends: the owner closing it (close(2), close_range, dup2 over its last
 * fd, exec, exit, shutdown of both directions), seen at the state change
 * that makes (sock_closed_by_owner), or the kernel freeing it (a socket
 * reset, or refused, before its owner closed it). A connect that fails
 * (SYN_SENT -> CLOSE: refused, unreachable, timed out, given up) is a
 * failed call, charged to the thread that connected, before any byte.
 */

#define PF_EXITING 0x00000004

#define SHUTDOWN_MASK 3

/*
 * Does the move of the socket at sk to state new end it for its owner? Its
 * owner's close (or shutdown of both directions) shuts both first, then
 * sends a FIN (to FIN_WAIT1, or LAST_ACK after the peer's) or, with bytes
 * left unread or a zero linger, a reset (to CLOSE, with no error of its
 * own). A reset from the peer (an error set first), its FIN, or a
 * shutdown(SHUT_WR) while the answer is awaited, is no end: the owner
 * still holds the socket, and its reads and writes say what they met.
 */
static __always_inline int sock_closed_by_owner(struct sock *sk, int new)
{
	if (sk->sk_shutdown != SHUTDOWN_MASK)
		return 0;
	if (new == TCP_FIN_WAIT1 || new == TCP_LAST_ACK)
		return 1;
	return new == TCP_CLOSE && !sk->sk_err;
}

/* The socket at key (its address) was born: followed from its first bytes. */
static __always_inline void sock_born(__u64 key, struct sock *sk, __u8 role, __u32 tgid, __u32 tid)
{
	struct claimd_sock s = {
		.tgid = tgid,
		.tid = tid,
		.role = role,
	};
	struct claimd_sock *old = bpf_map_lookup_elem(&socks, &key);

	/* An earlier socket at this address whose end went unseen: its count goes. */
	if (old)
		sock_unmark(old);
	if (role == CLAIMD_ROLE_INBOUND) {
		s.slot = sock_slot(sk);
		s.flags = CLAIMD_SOCK_MARKED;
	}
	if (bpf_map_update_elem(&socks, &key, &s, BPF_ANY)) {
		stat_inc(CLAIMD_ST_CONN_FULL);
		return;
	}
	if (s.flags & CLAIMD_SOCK_MARKED)
		sock_mark_add(s.slot, 1);
}

/* CLOSE -> SYN_SENT, in the thread that connects. */
static __always_inline void sock_connecting(__u64 key, struct sock *sk)
{
	__u64 id = bpf_get_current_pid_tgid();

	/* Its SYN leaves: a failure is this socket's state change's now (bpf/connects.c). */
	if (proc_flags(id >> 32) & PROC_CONNECTS)
		connect_note_sent(id >> 32, (__u32)id, key);

	if (!proc_wanted(id >> 32))
		return;
	if (!connect_wanted(id >> 32, bpf_ntohs(sk->__sk_common.skc_dport))) {
		connect_unfollowed(id >> 32);
		return;
	}
	sock_born(key, sk, CLAIMD_ROLE_OUTBOUND, id >> 32, (__u32)id);
}

/*
 * LISTEN -> SYN_RECV: a connection for a listener. Which process takes it
 * is known only at its first bytes (conn_adopt asks the filters then); with
 * a process filter, only the ports a followed process listens on.
 */
static __always_inline void sock_accepted(__u64 key, struct sock *sk)
{
	struct claimd_listen_port lp = { .port = sk->__sk_common.skc_num };

	if (!port_wanted(lp.port))
		return;
	lp.netns = sock_netns(sk);
	if ((filter_flags & CLAIMD_FILTER_NETNS) && lp.netns != filter_netns)
		return;
	if ((filter_flags & (CLAIMD_FILTER_PID | CLAIMD_FILTER_CGROUP)) &&
	    !bpf_map_lookup_elem(&listen_ports, &lp))
		return;
	sock_born(key, sk, CLAIMD_ROLE_INBOUND, 0, 0);
}

/* A listener opened (closed = 0) or closed (1), for claimd's names. */
static __always_inline void listener_record(const struct claimd_listener *l, __u32 closed)
{
	struct claimd_listen *rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);

	if (!rec) {
		stat_inc(CLAIMD_ST_RB_DROPS);
		return;
	}
	rec->hdr.type = CLAIMD_REC_LISTEN;
	rec->hdr.version = CLAIMD_RECORD_VERSION;
	rec->hdr.size = sizeof(*rec);
	rec->tgid = l->tgid;
	rec->closed = closed;
	rec->local = l->local;
	proc_comm(rec->comm);
	submit_now(rec);
}

static __always_inline void listen_port_add(const struct claimd_listener *l, int n)
{
	struct claimd_listen_port lp = { .netns = l->netns, .port = l->local.port };
	__u32 one = 1, *count = bpf_map_lookup_elem(&listen_ports, &lp);

	if (!count) {
		if (n <= 0 || !bpf_map_update_elem(&listen_ports, &lp, &one, BPF_NOEXIST))
			return;
		/* Put by another CPU meanwhile (two workers' listen() at once): counted on it. */
		count = bpf_map_lookup_elem(&listen_ports, &lp);
		if (!count)
			return;
	}
	if (n > 0) {
		__sync_fetch_and_add(count, 1);
	} else if (__sync_fetch_and_sub(count, 1) == 1) {
		bpf_map_delete_elem(&listen_ports, &lp);
	}
}

/* -> LISTEN, in the thread that calls listen(). */
static __always_inline void listener_open(struct sock *sk)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct claimd_listener l = { .tgid = tgid };
	struct claimd_addr remote;
	__u64 ino;

	if (!proc_wanted(tgid))
		return;
	sock_addrs(sk, &l.local, &remote);
	ino = sock_ino(sk);
	if (!ino || !port_wanted(l.local.port))
		return;
	l.netns = sock_netns(sk);
	if (bpf_map_update_elem(&listeners, &ino, &l, BPF_NOEXIST))
		return;
	listen_port_add(&l, 1);
	mark_traced(tgid);
	proc_listeners_add(tgid, 1);
	proc_service_listens(tgid, l.local.port);
	/* Its connects not followed, before: unsure until claimd has looked for them (claimd.c). */
	if (connects_unfollowed(tgid))
		proc_flag_set(tgid, PROC_UNSEEDED);
	listener_record(&l, 0);
}

/* LISTEN -> CLOSE: its owner closed it (its inode still attached). */
static __always_inline void listener_close(struct sock *sk)
{
	__u64 ino = sock_ino(sk);
	struct claimd_listener *l = bpf_map_lookup_elem(&listeners, &ino);

	if (!l)
		return;
	listen_port_add(l, -1);
	proc_listeners_add(l->tgid, -1);
	listener_record(l, 1);
	bpf_map_delete_elem(&listeners, &ino);
}

/*
 * The connect of the socket at key failed (SYN_SENT -> CLOSE): one failed
 * call of the thread that connected, if no request went out on it. Go's
 * calls are followed by the Go probes.
 */
static __always_inline void sock_connect_failed(__u64 key, struct sock *sk)
{
	struct claimd_sock *s = bpf_map_lookup_elem(&socks, &key);
	struct claimd_addr local, remote;
	struct claimd_conn *c = NULL;
	struct io io;

	if (!s || s->role != CLAIMD_ROLE_OUTBOUND || (s->flags & CLAIMD_CONN_FAILED))
		return;
	s->flags |= CLAIMD_CONN_FAILED;
	if (proc_flags(s->tgid) & PROC_GO)
		return;
	io.key.tgid = s->tgid;
	io.key.fd = -1;
	if (s->key.tgid) {
		c = conn_find(&s->key);
		if (c && c->sk_tag == claimd_sock_tag(key)) {
			if (c->flags & (CLAIMD_CONN_SENT | CLAIMD_CONN_FAILED))
				return;
			c->flags |= CLAIMD_CONN_FAILED;
			io.key = s->key;
		}
	}
	io.now = bpf_ktime_get_ns();
	io.sk = 0;
	io.tid = s->tid;
	io.dir = DIR_RX;
	io.tx_from = 0;
	sock_addrs(sk, &local, &remote);
	egress_connect_failed(&io, &remote);
}

/*
 * The socket at key ended: the connection it became ends with it, as the
 * current thread saw it (the owner's close). A process exiting takes its
 * requests and calls with it: forgotten, not failed (claimd forgets the
 * process too).
 */
static __always_inline void sock_end(__u64 key)
{
	struct claimd_sock *s = bpf_map_lookup_elem(&socks, &key);
	struct task_struct *task = bpf_get_current_task_btf();
	struct claimd_conn_key name;
	struct claimd_conn *c;

	if (!s)
		return;
	name = s->key;
	sock_unmark(s);
	bpf_map_delete_elem(&socks, &key);
	if (!name.tgid)
		return;
	c = conn_find(&name);
	if (!c || c->sk_tag != claimd_sock_tag(key))
		return;
	if ((task->flags & PF_EXITING) && task->tgid == name.tgid)
		conn_forget(c, &name, claimd_sock_tag(key), claimd_sock_tag(key));
	else
		conn_end(c, &name, task->pid, claimd_sock_tag(key));
}

/*
 * Every TCP state change of the host: a few per connection. TP_PROTO(const
 * struct sock *sk, const int oldstate, const int newstate).
 */
SEC("raw_tp/inet_sock_set_state")
int tp_sock_state(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 key = ctx->args[0];
	struct sock *sk = bpf_rdonly_cast((void *)key, bpf_core_type_id_kernel(struct sock));
	int old = (int)ctx->args[1], new = (int)ctx->args[2];

	if (sk->sk_protocol != IPPROTO_TCP)
		return 0;
	if (new == TCP_SYN_SENT && old == TCP_CLOSE) {
		sock_connecting(key, sk);
		return 0;
	}
	if (new == TCP_ESTABLISHED && old == TCP_SYN_SENT) {
		sock_mark_connecting(key, sk);
		return 0;
	}
	if (new == TCP_SYN_RECV && old == TCP_LISTEN) {
		sock_accepted(key, sk);
		return 0;
	}
	if (new == TCP_LISTEN) {
		listener_open(sk);
		return 0;
	}
	if (old == TCP_LISTEN) {
		listener_close(sk);
		return 0;
	}
	if (old == TCP_SYN_SENT && new == TCP_CLOSE)
		sock_connect_failed(key, sk);
	if (sock_closed_by_owner(sk, new))
		sock_end(key);
	return 0;
}

/* The kernel frees a TCP socket: the end of one its owner closed after it was reset. */
SEC("raw_tp/tcp_destroy_sock")
int tp_sock_free(struct bpf_raw_tracepoint_args *ctx)
{
	sock_end(ctx->args[0]);
	return 0;
}
