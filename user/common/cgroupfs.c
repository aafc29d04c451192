// SPDX-License-Identifier: GPL-2.0
/* A process's cgroup v2 directory; see cgroupfs.h. */
#include <mntent.h>
#include <stdio.h>
#include <string.h>

#include "cgroupfs.h"

int cgroupfs_v2_mount(char *out, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	struct mntent *m;
	int err = -1;

	if (!f)
		return -1;
	while ((m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(out, len, "%s", m->mnt_dir);
			err = 0;
			break;
		}
	endmntent(f);
	return err;
}

int cgroupfs_dir_of(const char *pid, char *out, size_t len)
{
	char mnt[256], path[64], line[1024];
	int err = -1;
	FILE *f;

	if (cgroupfs_v2_mount(mnt, sizeof(mnt)))
		return -1;
	snprintf(path, sizeof(path), "/proc/%s/cgroup", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			/* The root: the mount itself. */
			snprintf(out, len, "%s%s", mnt, strcmp(line + 3, "/") ? line + 3 : "");
			err = 0;
			break;
		}
	fclose(f);
	return err;
}
