// SPDX-License-Identifier: GPL-2.0
/* A test's own cgroup; see cgroup.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroupfs.h"
#include "harness.h"

static int join(const char *dir)
{
	char procs[1200], pid[16];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	return write_file(procs, pid);
}

int test_cgroup_enter(struct test_cgroup *cg)
{
	static int n;

	if (cgroupfs_dir_of("self", cg->home, sizeof(cg->home))) {
		printf("no cgroup v2 here: cannot make a test's own cgroup\n");
		return -1;
	}
	snprintf(cg->dir, sizeof(cg->dir), "%s/claimd-test-%d-%d", cg->home, getpid(), n++);
	if (mkdir(cg->dir, 0755) && errno != EEXIST) {
		printf("cannot make %s: %s\n", cg->dir, strerror(errno));
		cg->dir[0] = 0;
		return -1;
	}
	if (join(cg->dir)) {
		printf("cannot join %s: %s\n", cg->dir, strerror(errno));
		rmdir(cg->dir);
		cg->dir[0] = 0;
		return -1;
	}
	return 0;
}

void test_cgroup_leave(struct test_cgroup *cg)
{
	int i;

	if (!cg->dir[0])
		return;
	if (join(cg->home))
		printf("cannot go back to %s: %s\n", cg->home, strerror(errno));
	/* Its last processes may still be leaving (reaped, not yet unlinked from it). */
	for (i = 0; i < 50 && rmdir(cg->dir) && errno == EBUSY; i++)
		sleep_ms(20);
	cg->dir[0] = 0;
}
