/* SPDX-License-Identifier: GPL-2.0 */
/* A short list of process ids, as claimd forgets the processes that exited. */
#ifndef CLAIMD_PIDLIST_H
#define CLAIMD_PIDLIST_H

#include <stdbool.h>
#include <stdlib.h>

#include <linux/types.h>

/* Is pid one of pids[0..n-1]? (A linear look: for the lists of one tick's exits.) */
static inline bool pid_listed(__u32 pid, const __u32 *pids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

static inline int pid_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return (x > y) - (x < y);
}

/* pids[0..n-1] in order, for pid_in_sorted. */
static inline void pid_sort(__u32 *pids, int n)
{
	qsort(pids, (size_t)n, sizeof(*pids), pid_cmp);
}

/* Is pid one of pids[0..n-1], sorted (pid_sort)? For a long list asked often. */
static inline bool pid_in_sorted(__u32 pid, const __u32 *pids, int n)
{
	return n > 0 && bsearch(&pid, pids, (size_t)n, sizeof(*pids), pid_cmp);
}

#endif /* CLAIMD_PIDLIST_H */
