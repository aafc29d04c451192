/* SPDX-License-Identifier: GPL-2.0 */
/* A short list of process ids, as claimd forgets the processes that exited. */
#ifndef CLAIMD_PIDLIST_H
#define CLAIMD_PIDLIST_H

#include <stdbool.h>

#include <linux/types.h>

/* Is pid one of pids[0..n-1]? (A handful at a time: a linear look.) */
static inline bool pid_listed(__u32 pid, const __u32 *pids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

#endif /* CLAIMD_PIDLIST_H */
