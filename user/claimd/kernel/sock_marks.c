// SPDX-License-Identifier: GPL-2.0
/* claimd's changes to the socket filter's counts; see sock_marks.h. */
#include <errno.h>

#include <bpf/bpf.h>

#include "kernel/sock_marks.h"

int sock_marks_change(const struct bpf_program *claimd_mark, __u32 slot, int n)
{
	/* claimd_mark's arguments: the slot, the change (sign-extended). */
	__u64 args[2] = { slot, (__u64)(__s64)n };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(bpf_program__fd(claimd_mark), &opts))
		return -errno;
	return 0;
}
