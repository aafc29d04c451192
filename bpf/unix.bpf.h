/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What tp_io_x asks of a Unix socket (bpf/unixsock.c follows them): is it
 * a stream socket, and is it one whose bytes may concern a followed
 * process: the current process is followed, or the socket is the accepted
 * end of a connection a followed process made (unix_marks).
 */
#ifndef CLAIMD_UNIX_BPF_H
#define CLAIMD_UNIX_BPF_H

#include "unixaddr.h"

#define AF_UNIX	    1
#define SOCK_STREAM 1

/* The filter's slot of the Unix socket at skaddr (its address, past its slab's alignment). */
static __always_inline __u32 unix_slot(__u64 skaddr)
{
	return (__u32)((skaddr >> 6) ^ (skaddr >> 18)) & (CLAIMD_UNIX_MARKS - 1);
}

/* n more (or fewer) marked accepted ends in slot. */
static __always_inline void unix_mark_add(__u32 slot, int n)
{
	/* slot is masked by unix_slot; said again, the global's index carries its bound. */
	__sync_fetch_and_add(&unix_marks[slot & (CLAIMD_UNIX_MARKS - 1)], n);
}

/*
 * The task moving the bytes of the Unix socket sk (at skaddr), if they go
 * on to the connection table, or NULL: only a stream socket's, in a
 * process that may be followed or on a marked accepted end. A datagram
 * socket (journald's, syslog's) leaves at its type, before any helper
 * call; an untraced process's stream (D-Bus, X11) after one load from the
 * filter, the helper's call and two loads from its task.
 */
static __always_inline struct task_struct *unix_io_task(struct sock *sk, __u64 skaddr)
{
	struct task_struct *task;

	if (sk->sk_type != SOCK_STREAM)
		return NULL;
	task = bpf_get_current_task_btf();
	if (unix_marks[unix_slot(skaddr) & (CLAIMD_UNIX_MARKS - 1)] || task_may_be_traced(task))
		return task;
	return NULL;
}

/*
 * What a Unix connection's entry keeps of its socket (claimd_conn.sk_tag):
 * its address's tag, mixed with its inode number. A Unix socket's close
 * is not seen (no tracepoint marks it), and the slab gives a closed
 * socket's address to the next one, often at the same fd: the address
 * alone would take the new connection for the old.
 */
static __always_inline __u32 unix_sock_tag(__u64 skaddr)
{
	return claimd_tag_of(claimd_sock_tag(skaddr) ^
			     ((__u32)sock_ino((void *)skaddr) * 2654435761u));
}

#endif /* CLAIMD_UNIX_BPF_H */
