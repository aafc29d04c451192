/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A service instance's counts in the kernel's slots (service_counts,
 * claimd_service_slot in headers/counts.h): read by summing every slot of
 * its probes that it owns on each CPU, and given back when its process is
 * gone.
 */
#ifndef CLAIMD_SERVICE_SLOTS_H
#define CLAIMD_SERVICE_SLOTS_H

#include <linux/types.h>

struct claimd_service_counts;

/*
 * The per-CPU counts of owner (claimd_service_owner) into out (ncpus
 * values), using scratch (as large); 1 if it held a slot on some CPU, 0 if
 * none, or -errno.
 */
int service_slots_read(int fd, int ncpus, __u64 owner, struct claimd_service_counts *out,
		       struct claimd_service_counts *scratch);

/* Zeroes and frees owner's slots on every CPU (claimd_forget_services' fd); 0 or -errno. */
int service_slots_forget(int prog_fd, __u64 owner);

#endif
