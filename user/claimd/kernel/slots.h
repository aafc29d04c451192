/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How the observer's tables with slots are sized before load: of n entries
 * at once (claimd --threads, --conns), the largest power of two no more
 * than half of n in the slots their names point at (thread_slots by thread
 * id, conn_slots by process and fd, each with the mask the programs index
 * it by), the rest in the table beside them (threads, conns). The three
 * settings must agree; this sets them together. Used by claimd and by the
 * skeleton tests alike. After load, claimd reads the connection slots'
 * owners in place (slots_view) and gives back those of processes gone.
 */
#ifndef CLAIMD_SLOTS_H
#define CLAIMD_SLOTS_H

#include <linux/types.h>

#include <bpf/libbpf.h>

/* Sizes slots, table and *mask (the skeleton's rodata) for n; returns the slots. */
__u32 slots_size(struct bpf_map *slots, struct bpf_map *table, volatile __u32 *mask, __u32 n);

/* The connection slots (conn_slots) mapped into claimd's memory, read only. */
struct slots_view {
	const char *mem; /* NULL: not mapped */
	size_t len, stride;
	__u32 count;
};

/* 0, or -errno (then v->mem is NULL). */
int slots_view_map(struct slots_view *v, const struct bpf_map *slots);
void slots_view_unmap(struct slots_view *v);
/* The owner word of slot idx as it stands (0: free, or not mapped). */
__u64 slots_view_owner(const struct slots_view *v, __u32 idx);

/*
 * The connection slots the entries of processes tgids[0..n-1] (sorted:
 * pid_sort) still hold
 * (their ends not seen), given back: claimd reads the slots' owners in
 * place, in its own time (a pass over 16,384 slots is 1-2 ms of reading),
 * and has the observer's claimd_forget_slots program give back those it
 * found, a few at a run of BPF_PROG_TEST_RUN. How many, or -errno.
 */
int slots_forget(const struct slots_view *v, const struct bpf_program *claimd_forget_slots,
		 const __u32 *tgids, int n);

#endif /* CLAIMD_SLOTS_H */
