/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claimd's own changes to the socket filter's counts (sock_marks,
 * headers/observer.h), for the connections it seeds from /proc and forgets
 * when their process is gone: the observer's claimd_mark program, run with
 * BPF_PROG_TEST_RUN, makes each change atomically, as the programs do
 * theirs. Used by claimd and by the skeleton tests alike.
 */
#ifndef CLAIMD_SOCK_MARKS_H
#define CLAIMD_SOCK_MARKS_H

#include <linux/types.h>

#include <bpf/libbpf.h>

/* n more (or fewer) followed sockets in the filter's slot (claimd_sock_slot); 0 or -errno. */
int sock_marks_change(const struct bpf_program *claimd_mark, __u32 slot, int n);

#endif /* CLAIMD_SOCK_MARKS_H */
