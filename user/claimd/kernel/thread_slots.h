/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How the observer's thread contexts are sized before load: of n at once
 * (claimd --threads), the largest power of two no more than half of n in
 * the slots their thread ids name (thread_slots, with the mask the
 * programs index it by), the rest in the threads table. The three settings must agree; this sets them
 * together. Used by claimd and by the skeleton tests alike.
 */
#ifndef CLAIMD_THREAD_SLOTS_H
#define CLAIMD_THREAD_SLOTS_H

#include <linux/types.h>

#include <bpf/libbpf.h>

/* Sizes slots, table and *mask (the skeleton's rodata) for n; returns the slots. */
__u32 thread_slots_size(struct bpf_map *slots, struct bpf_map *table, volatile __u32 *mask,
			__u32 n);

#endif /* CLAIMD_THREAD_SLOTS_H */
