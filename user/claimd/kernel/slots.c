// SPDX-License-Identifier: GPL-2.0
/* Sizing the tables with slots; see slots.h. */
#include <errno.h>

#include <bpf/bpf.h>

#include "observer.h"
#include "kernel/slots.h"

/* The largest power of two no more than half of n (n >= 4). */
static __u32 slots_for(__u32 n)
{
	__u32 s = 1;

	while (s * 4 <= n)
		s *= 2;
	return s;
}

__u32 slots_size(struct bpf_map *slots, struct bpf_map *table, volatile __u32 *mask, __u32 n)
{
	__u32 s = slots_for(n);

	bpf_map__set_max_entries(slots, s);
	bpf_map__set_max_entries(table, n - s);
	*mask = s - 1;
	return s;
}

int slots_forget(const struct bpf_program *claimd_forget_slots, const __u32 *tgids, int n)
{
	int i, k, freed = 0;

	/* claimd_forget_slots's arguments: up to CLAIMD_FORGET_TGIDS processes, 0 for none. */
	for (i = 0; i < n; i += CLAIMD_FORGET_TGIDS) {
		__u64 args[CLAIMD_FORGET_TGIDS] = { 0 };
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));

		for (k = 0; k < CLAIMD_FORGET_TGIDS && i + k < n; k++)
			args[k] = tgids[i + k];
		if (bpf_prog_test_run_opts(bpf_program__fd(claimd_forget_slots), &opts))
			return -errno;
		freed += (int)opts.retval;
	}
	return freed;
}
