// SPDX-License-Identifier: GPL-2.0
/* A service instance's counts in the kernel's slots; see service_slots.h. */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>

#include "counts.h"
#include "kernel/service_slots.h"

_Static_assert(sizeof(struct claimd_service_counts) % sizeof(__u64) == 0, "all __u64");

int service_slots_read(int fd, int ncpus, __u64 owner, struct claimd_service_counts *out,
		       struct claimd_service_counts *scratch)
{
	size_t words = sizeof(*out) / sizeof(__u64), i;
	int found = 0, cpu;
	__u32 probe;

	memset(out, 0, (size_t)ncpus * sizeof(*out));
	for (probe = 0; probe < CLAIMD_SERVICE_PROBES; probe++) {
		__u32 idx = claimd_service_slot(owner, probe);

		if (bpf_map_lookup_elem(fd, &idx, scratch))
			return -errno;
		for (cpu = 0; cpu < ncpus; cpu++) {
			const __u64 *in = (const __u64 *)&scratch[cpu];
			__u64 *o = (__u64 *)&out[cpu];

			if (scratch[cpu].owner != owner)
				continue;
			found = 1;
			for (i = 0; i < words; i++)
				o[i] += in[i];
		}
	}
	return found;
}

int service_slots_forget(int prog_fd, __u64 owner)
{
	/* claimd_forget_services' argument: the owner word. */
	__u64 args[1] = { owner };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	return 0;
}
