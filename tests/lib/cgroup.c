// SPDX-License-Identifier: GPL-2.0
/* A test's own cgroup; see cgroup.h. */
#include <dirent.h>
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

int test_cgroup_make(struct test_cgroup *cg)
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
	return 0;
}

int test_cgroup_join(const struct test_cgroup *cg)
{
	if (join(cg->dir)) {
		printf("cannot join %s: %s\n", cg->dir, strerror(errno));
		return -1;
	}
	return 0;
}

int test_cgroup_enter(struct test_cgroup *cg)
{
	if (test_cgroup_make(cg))
		return -1;
	if (test_cgroup_join(cg)) {
		rmdir(cg->dir);
		cg->dir[0] = 0;
		return -1;
	}
	return 0;
}

/* Waits for its processes to be gone (reaped, not yet unlinked from it), then removes it. */
static void cgroup_rmdir(struct test_cgroup *cg)
{
	int i;

	for (i = 0; i < 50 && rmdir(cg->dir) && errno == EBUSY; i++)
		sleep_ms(20);
	cg->dir[0] = 0;
}

void test_cgroup_remove(struct test_cgroup *cg)
{
	char kill_file[1200];

	if (!cg->dir[0])
		return;
	snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", cg->dir);
	write_file(kill_file, "1\n");
	cgroup_rmdir(cg);
}

int test_cgroup_return(const struct test_cgroup *cg)
{
	if (join(cg->home)) {
		printf("cannot go back to %s: %s\n", cg->home, strerror(errno));
		return -1;
	}
	return 0;
}

void test_cgroup_leave(struct test_cgroup *cg)
{
	if (!cg->dir[0])
		return;
	test_cgroup_return(cg);
	cgroup_rmdir(cg);
}

void test_cgroup_stale_remove(void)
{
	struct test_cgroup cg;
	struct dirent *e;
	DIR *d;

	if (cgroupfs_dir_of("self", cg.home, sizeof(cg.home)) || !(d = opendir(cg.home)))
		return;
	while ((e = readdir(d))) {
		long pid = left_by_gone_run(e->d_name);

		if (!pid || e->d_type != DT_DIR ||
		    snprintf(cg.dir, sizeof(cg.dir), "%s/%s", cg.home, e->d_name) >=
			    (int)sizeof(cg.dir))
			continue;
		test_cgroup_remove(&cg);
		printf("removed cgroup %s/%s, left by test run %ld, which is gone\n", cg.home,
		       e->d_name, pid);
	}
	closedir(d);
}
