/* SPDX-License-Identifier: GPL-2.0 */
/* Where a process sits in cgroup v2, as a directory of the v2 mount. */
#ifndef CLAIMD_CGROUPFS_H
#define CLAIMD_CGROUPFS_H

#include <stddef.h>

/*
 * The directory of process pid's cgroup ("self": the caller's), under the
 * v2 mount (/sys/fs/cgroup, or /sys/fs/cgroup/unified beside v1): its
 * "0::/path" in /proc/PID/cgroup. 0, or -1: no v2 mount, or no such process.
 */
int cgroupfs_dir_of(const char *pid, char *out, size_t len);

/* Where cgroup v2 is mounted (its root), into out: 0, or -1 when it is not. */
int cgroupfs_v2_mount(char *out, size_t len);

#endif
