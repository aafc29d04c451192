/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a TCP socket says of itself: its addresses, its slot in the filter,
 * its inode number, its network namespace, whether a connect it began was
 * made (a Unix one's too). (TCP's states are vmlinux.h's.)
 */
#ifndef CLAIMD_SOCK_BPF_H
#define CLAIMD_SOCK_BPF_H

#include "observer.h"

#define AF_INET	    2
#define AF_INET6    10
#define IPPROTO_TCP 6

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/*
 * The inode number of the socket at sk (what /proc/PID/fd shows), 0 if it
 * has none. The inode follows the socket in one allocation (SOCK_INODE).
 * Two loads through bpf_rdonly_cast, a kfunc the verifier turns into no
 * call (a load that faults reads 0), where BPF_CORE_READ makes a helper
 * call of each: how a listener is known, and a seeded connection's socket
 * at its first bytes.
 */
static __always_inline __u64 sock_ino(const void *sk)
{
	struct sock *s = bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct sock));
	struct socket_alloc *sa =
		bpf_rdonly_cast(s->sk_socket, bpf_core_type_id_kernel(struct socket_alloc));

	return sa->vfs_inode.i_ino;
}

/*
 * The local port of the socket at sk, given its bound number (skc_num): that
 * number, or, once the kernel has zeroed it (a socket reset while its owner
 * still reads and writes it), the source port it sent from, which stays.
 */
static __always_inline __u16 sock_local_port(const void *sk, __u16 bound)
{
	struct inet_sock *in;

	if (bound)
		return bound;
	in = bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct inet_sock));
	return bpf_ntohs(in->inet_sport);
}

/*
 * What the filter reads of a socket, from its first line: its port pair
 * (its peer's port in network order, its bound number), its family and
 * its state.
 */
struct sock_head {
	__u32 portpair;
	__u16 family;
	__u8 state;
};

/*
 * Can the head be read in one load: does the kernel cast to no type (claimd
 * asks it: sysprobe.h), and are those three fields eight bytes in a row, as
 * in every kernel since 2.6?
 */
static __always_inline int sock_head_packed(void)
{
	__u32 pair = bpf_core_field_offset(struct sock, __sk_common.skc_portpair);

	return sock_head_untyped &&
	       bpf_core_field_offset(struct sock, __sk_common.skc_family) == pair + 4 &&
	       bpf_core_field_offset(struct sock, __sk_common.skc_state) == pair + 6;
}

/*
 * The head of the socket at skaddr in one load: read through a cast to no
 * type (bpf_rdonly_cast with 0, Linux 6.17: memory read as it is, a load
 * that faults reading 0), where three field loads each paid the JIT's
 * check of the address (3.9 ns a run of tp_io_x: docs/performance.md). The
 * test is of constants (load-time configuration, relocated offsets): the
 * verifier keeps one branch and drops the other, unchecked, so that a
 * kernel without the cast still loads the program. The fields' branch is
 * laid out of line: in line, the jump around it cost the filter 1.5 ns.
 */
static __always_inline struct sock_head sock_head_of(__u64 skaddr)
{
	struct sock_head h;
	const char *raw;
	__u64 w;

	if (__builtin_expect(!sock_head_packed(), 0)) {
		struct sock *sk =
			bpf_rdonly_cast((void *)skaddr, bpf_core_type_id_kernel(struct sock));

		h.portpair = sk->__sk_common.skc_portpair;
		h.family = sk->__sk_common.skc_family;
		h.state = sk->__sk_common.skc_state;
		return h;
	}
	raw = bpf_rdonly_cast((void *)skaddr, 0);
	w = *(const __u64 *)(raw + bpf_core_field_offset(struct sock, __sk_common.skc_portpair));
	/* Little-endian, in the order sock_head_packed checked: pair, family at +4, state at +6. */
	h.portpair = (__u32)w;
	h.family = (__u16)(w >> 32);
	h.state = (__u8)(w >> 48);
	return h;
}

/*
 * The filter's slot (claimd_sock_slot) of the socket at skaddr, whose head
 * is h: from its ports as they stay for its life, its bound number and its
 * peer's port (sock_local_port after a reset).
 */
static __always_inline __u32 sock_head_slot(const struct sock_head *h, __u64 skaddr)
{
	/* skc_portpair: skc_dport (network order) in the low half, skc_num (host order) above. */
	return claimd_sock_slot(sock_local_port((void *)skaddr, h->portpair >> 16),
				bpf_ntohs((__u16)h->portpair));
}

/* The filter's slot of the socket at sk. */
static __always_inline __u32 sock_slot(const void *sk)
{
	struct sock_head h = sock_head_of((__u64)sk);

	return sock_head_slot(&h, (__u64)sk);
}

/* n more (or fewer) followed sockets in slot. */
static __always_inline void sock_mark_add(__u32 slot, int n)
{
	/* slot is below CLAIMD_SOCK_MARKS (claimd_sock_slot); masked, the global's index is bounded. */
	__sync_fetch_and_add(&sock_marks[slot & (CLAIMD_SOCK_MARKS - 1)], n);
}

/* A socket born under watch leaves the filter's count, if it was in it. */
static __always_inline void sock_unmark(struct claimd_sock *s)
{
	if (s->flags & CLAIMD_SOCK_MARKED)
		sock_mark_add(s->slot, -1);
}

/* May a socket in slot be one that conns follows, or one born under watch? */
static __always_inline int sock_marked(__u32 slot)
{
	/* As in sock_mark_add: an index into a global array must carry its bound. */
	return sock_marks[slot & (CLAIMD_SOCK_MARKS - 1)];
}

/*
 * The outbound socket at key (sk), born under watch, now has its local
 * port: its slot is marked, and its bytes pass the filter. Where TCP
 * connects it (SYN_SENT -> ESTABLISHED), or earlier where it moves bytes
 * while still connecting (sock_fastopen). 1: it is one born under watch.
 */
static __always_inline int sock_mark_connecting(__u64 key, struct sock *sk)
{
	struct claimd_sock *s = bpf_map_lookup_elem(&socks, &key);

	if (!s)
		return 0;
	if (s->flags & CLAIMD_SOCK_MARKED)
		return 1;
	s->slot = sock_slot(sk);
	s->flags |= CLAIMD_SOCK_MARKED;
	sock_mark_add(s->slot, 1);
	return 1;
}

/*
 * A socket not in the filter that moved ret bytes while connecting: TCP
 * Fast Open carries a request in the SYN (sendto with MSG_FASTOPEN, or the
 * first write after TCP_FASTOPEN_CONNECT), and a non-blocking caller's
 * write returns before the peer's answer connects the socket, so before
 * sock_mark_connecting would have run there. 1: one born under watch, now
 * marked. On the filter's path only a compare: its state is in the
 * socket's head (sock_head_of).
 */
static __always_inline int sock_fastopen(const struct sock_head *h, __u64 key, long ret)
{
	return h->state == TCP_SYN_SENT && ret > 0 &&
	       sock_mark_connecting(
		       key, bpf_rdonly_cast((void *)key, bpf_core_type_id_kernel(struct sock)));
}

/* The network namespace of the socket at sk, by its inode number. */
static __always_inline __u32 sock_netns(struct sock *sk)
{
	return BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
}

static __always_inline void addr_from_v4(struct claimd_addr *a, __u32 be_addr, __u16 port)
{
	__builtin_memset(a->addr, 0, 10);
	a->addr[10] = 0xff;
	a->addr[11] = 0xff;
	__builtin_memcpy(&a->addr[12], &be_addr, 4);
	a->port = port;
	a->pad = 0;
}

/* Local and remote endpoints; IPv4 is stored mapped into IPv6. */
static __always_inline void sock_addrs(struct sock *sk, struct claimd_addr *local,
				       struct claimd_addr *remote)
{
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
	__u16 lport = sock_local_port(sk, BPF_CORE_READ(sk, __sk_common.skc_num));
	__u16 rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));

	if (family == AF_INET) {
		addr_from_v4(local, BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr), lport);
		addr_from_v4(remote, BPF_CORE_READ(sk, __sk_common.skc_daddr), rport);
		return;
	}
	BPF_CORE_READ_INTO(&local->addr, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr8);
	BPF_CORE_READ_INTO(&remote->addr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	local->port = lport;
	remote->port = rport;
	local->pad = remote->pad = 0;
}

/* The address a connect() was given, for calls that failed before a socket
 * had one. Returns 0 when it is not IPv4/IPv6. */
static __always_inline int addr_from_user(struct claimd_addr *a, const void *uaddr)
{
	struct {
		__u16 family;
		__u16 port;
		__u32 v4; /* sin_addr, or sin6_flowinfo */
	} sa = {};

	/* Read the sockaddr_in part first: a sockaddr_in may end right there. */
	if (bpf_probe_read_user(&sa, sizeof(sa), uaddr))
		return 0;
	if (sa.family == AF_INET) {
		addr_from_v4(a, sa.v4, bpf_ntohs(sa.port));
		return 1;
	}
	if (sa.family != AF_INET6 || bpf_probe_read_user(a->addr, 16, uaddr + sizeof(sa)))
		return 0;
	a->port = bpf_ntohs(sa.port);
	a->pad = 0;
	return 1;
}

/*
 * The command name, of the current thread: claimd names processes from
 * /proc and uses this only when the process is gone. (The group leader's
 * name would cost two kernel reads per record.)
 */
static __always_inline void proc_comm(char comm[CLAIMD_COMM_LEN])
{
	bpf_get_current_comm(comm, CLAIMD_COMM_LEN);
}

enum connect_made { CONNECT_MADE, CONNECT_FAILED, CONNECT_UNREAD };

/*
 * How the connect of the socket at skaddr (its cookie, over TCP if tcp),
 * begun earlier and returned since, ended: made; failed (a Unix socket
 * never given its peer's credentials, sk_peer_pid: set only by a connect
 * that succeeded, kept past its close until it is freed; a TCP one still
 * closed with no peer port, its SYN never left); or unread, the socket's
 * memory another's by now (its cookie not the same). Read through a
 * cast: the socket may be gone, its memory free.
 */
static __always_inline int connect_outcome(__u64 skaddr, __u64 cookie, __u32 tcp)
{
	struct sock *sk = bpf_rdonly_cast((void *)skaddr, bpf_core_type_id_kernel(struct sock));

	if (sk->__sk_common.skc_cookie.counter != cookie)
		return CONNECT_UNREAD;
	if (!tcp)
		return sk->sk_peer_pid ? CONNECT_MADE : CONNECT_FAILED;
	return sk->__sk_common.skc_state == TCP_CLOSE && !sk->__sk_common.skc_dport ? CONNECT_FAILED
										    : CONNECT_MADE;
}

#endif /* CLAIMD_SOCK_BPF_H */
