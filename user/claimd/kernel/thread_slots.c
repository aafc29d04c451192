// SPDX-License-Identifier: GPL-2.0
/* Sizing the thread contexts; see thread_slots.h. */
#include "kernel/thread_slots.h"

/* The largest power of two no more than half of n (n >= 4). */
static __u32 slots_for(__u32 n)
{
	__u32 s = 1;

	while (s * 4 <= n)
		s *= 2;
	return s;
}

__u32 thread_slots_size(struct bpf_map *slots, struct bpf_map *table, volatile __u32 *mask, __u32 n)
{
	__u32 s = slots_for(n);

	bpf_map__set_max_entries(slots, s);
	bpf_map__set_max_entries(table, n - s);
	*mask = s - 1;
	return s;
}
