// SPDX-License-Identifier: GPL-2.0
/* The tables with slots: sized before load, connection slots read and given back; see slots.h. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "observer.h"
#include "kernel/slots.h"
#include "pidlist.h"

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

/* Up to CLAIMD_FORGET_SLOTS (index, owner) pairs given back; how many, or -errno. */
static int give_back(const struct bpf_program *prog, const __u64 *pairs, int n)
{
	__u64 args[2 * CLAIMD_FORGET_SLOTS] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));

	memcpy(args, pairs, (size_t)n * 2 * sizeof(*pairs));
	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts))
		return -errno;
	return (int)opts.retval;
}

int slots_view_map(struct slots_view *v, const struct bpf_map *slots)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *mem;

	/* A mapped array's elements: each value rounded up to eight bytes, from offset 0. */
	v->stride = (sizeof(struct claimd_conn_slot) + 7) & ~(size_t)7;
	v->count = bpf_map__max_entries(slots);
	v->len = ((size_t)v->count * v->stride + page - 1) & ~(page - 1);
	mem = mmap(NULL, v->len, PROT_READ, MAP_SHARED, bpf_map__fd(slots), 0);
	if (mem == MAP_FAILED) {
		v->mem = NULL;
		return -errno;
	}
	v->mem = mem;
	return 0;
}

void slots_view_unmap(struct slots_view *v)
{
	if (v->mem)
		munmap((void *)v->mem, v->len);
	v->mem = NULL;
}

__u64 slots_view_owner(const struct slots_view *v, __u32 idx)
{
	if (!v->mem || idx >= v->count)
		return 0;
	return __atomic_load_n((const __u64 *)(v->mem + (size_t)idx * v->stride), __ATOMIC_RELAXED);
}

int slots_forget(const struct slots_view *v, const struct bpf_program *claimd_forget_slots,
		 const __u32 *tgids, int n)
{
	__u64 pairs[2 * CLAIMD_FORGET_SLOTS];
	int k = 0, freed = 0, r = 0;
	__u32 i;

	if (!v->mem || n <= 0)
		return 0;
	for (i = 0; i < v->count && r >= 0; i++) {
		__u64 owner = slots_view_owner(v, i);

		if (!owner || owner == CLAIMD_CONN_SLOT_BUSY ||
		    !pid_in_sorted(owner >> 32, tgids, n))
			continue;
		pairs[2 * k] = i;
		pairs[2 * k + 1] = owner;
		if (++k < CLAIMD_FORGET_SLOTS)
			continue;
		r = give_back(claimd_forget_slots, pairs, k);
		freed += r > 0 ? r : 0;
		k = 0;
	}
	if (k && r >= 0) {
		r = give_back(claimd_forget_slots, pairs, k);
		freed += r > 0 ? r : 0;
	}
	return r < 0 ? r : freed;
}
