/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A Unix socket's endpoint in a struct claimd_addr, the one rule the BPF
 * programs and claimd both apply. The address is the IPv6 discard-only
 * prefix 100::/64 (RFC 6666: never a peer's address, never a route),
 * then a 64-bit FNV-1a hash of the socket's name; the port a fold of the
 * hash, never 0, that stands for the socket file where a service key wants
 * a port. An unnamed end (a client's socket, a socketpair's) is 100:: with
 * port 0.
 *
 * The name hashed is what /proc/net/unix shows: a path's bytes without
 * its terminating NUL, or an abstract name's bytes with its leading NUL
 * ('@' there). claimd hashes each path it lists to find the socket file
 * and the process listening on it.
 */
#ifndef CLAIMD_UNIXADDR_H
#define CLAIMD_UNIXADDR_H

#include "observer.h"

#ifdef __bpf__
#define UNIXADDR_INLINE static __always_inline
#else
#define UNIXADDR_INLINE static inline
#endif

#define CLAIMD_UNIX_NAME_MAX 108 /* sizeof(sockaddr_un.sun_path) */

#define CLAIMD_UNIX_FNV_BASIS 0xcbf29ce484222325ULL
#define CLAIMD_UNIX_FNV_PRIME 0x100000001b3ULL

/* The hash of one more byte of a name. */
UNIXADDR_INLINE __u64 claimd_unix_hash_step(__u64 h, __u8 c)
{
	return (h ^ c) * CLAIMD_UNIX_FNV_PRIME;
}

/* The port that stands for a named socket's hash: its four quarters folded, 0 made 1. */
UNIXADDR_INLINE __u16 claimd_unix_port(__u64 h)
{
	__u16 p = (__u16)(h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48));

	return p ? p : 1;
}

/* a as the endpoint of a Unix socket whose name hashes to h (0: unnamed). */
UNIXADDR_INLINE void claimd_addr_unix(struct claimd_addr *a, __u64 h)
{
	int i;

	for (i = 0; i < 8; i++) {
		a->addr[i] = 0;
		a->addr[8 + i] = (__u8)(h >> (8 * i));
	}
	a->addr[0] = 0x01;
	a->port = h ? claimd_unix_port(h) : 0;
	a->pad = 0;
}

/* Is a a Unix socket's endpoint (100::/64)? */
UNIXADDR_INLINE int claimd_addr_is_unix(const struct claimd_addr *a)
{
	return a->addr[0] == 0x01 && !a->addr[1] && !a->addr[2] && !a->addr[3] && !a->addr[4] &&
	       !a->addr[5] && !a->addr[6] && !a->addr[7];
}

/* The name's hash a Unix endpoint carries (0: unnamed). */
UNIXADDR_INLINE __u64 claimd_addr_unix_hash(const struct claimd_addr *a)
{
	__u64 h = 0;
	int i;

	for (i = 7; i >= 0; i--)
		h = h << 8 | a->addr[8 + i];
	return h;
}

/* Slots of the filter for accepted ends of followed Unix connections (bpf/unix.bpf.h). */
#define CLAIMD_UNIX_MARKS 4096

/* A socket file a process serves on (the BPF map unix_services). */
struct unix_service_key {
	__u32 tgid;
	__u32 pad;
	__u64 hash;
};

#endif /* CLAIMD_UNIXADDR_H */
