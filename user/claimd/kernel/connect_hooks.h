/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cgroup hooks on connects (bpf/connects.c): IPv4, IPv6 and Unix
 * (BPF_CGROUP_UNIX_CONNECT, loaded where the kernel has it), attached at
 * the root of cgroup v2 so that every process's connects pass through
 * them. Without them claimd runs, blind to connects that fail before
 * anything leaves (to a socket file, over TCP before the SYN), and says so.
 */
#ifndef CLAIMD_CONNECT_HOOKS_H
#define CLAIMD_CONNECT_HOOKS_H

#include <stdbool.h>

#include <bpf/libbpf.h>

struct connect_hooks {
	struct bpf_program *unix_prog, *inet4_prog, *inet6_prog;
};

/* Before the object loads: the Unix hook for Unix connects, or left out (have_unix: the kernel's answer). */
void connect_hooks_prepare(const struct connect_hooks *h, bool have_unix);

/*
 * Once loaded: each hook attached at the cgroup v2 root, its link in
 * links[0..2] (unix, inet4, inet6; NULL where it could not be, and why,
 * said).
 */
void connect_hooks_attach(const struct connect_hooks *h, struct bpf_link *links[3]);

#endif /* CLAIMD_CONNECT_HOOKS_H */
