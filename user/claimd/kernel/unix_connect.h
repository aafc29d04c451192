/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cgroup hook on Unix connects (bpf/unixconnect.c): loaded for
 * BPF_CGROUP_UNIX_CONNECT where the kernel has it, attached at the root of
 * cgroup v2 so that every process's connects pass through it. Without it
 * claimd runs, blind to connects to socket files that fail, and says so.
 */
#ifndef CLAIMD_UNIX_CONNECT_H
#define CLAIMD_UNIX_CONNECT_H

#include <stdbool.h>

#include <bpf/libbpf.h>

/* Before the object loads: the hook for Unix connects, or left out (have: the kernel's answer). */
void unix_connect_prepare(struct bpf_program *prog, bool have);

/* Once loaded: the hook attached at the cgroup v2 root, or NULL (and why, said). */
struct bpf_link *unix_connect_attach(struct bpf_program *prog);

#endif /* CLAIMD_UNIX_CONNECT_H */
