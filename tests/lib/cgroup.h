/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A cgroup (v2) of a test's own, which the test process joins: whatever it
 * starts from then on is under it, and a claimd started with --cgroup on it
 * follows those processes alone, so that its host-wide counters are theirs
 * whatever else runs on the host.
 */
#ifndef CLAIMD_TESTS_CGROUP_H
#define CLAIMD_TESTS_CGROUP_H

#include <stddef.h>

struct test_cgroup {
	char dir[1100];	 /* the new cgroup's directory, below home */
	char home[1024]; /* the one the test process left */
};

/* Makes the cgroup and moves the test process into it: 0, or -1 (said). */
int test_cgroup_enter(struct test_cgroup *cg);
/* Makes the cgroup below the calling process's own: 0, or -1 (said). */
int test_cgroup_make(struct test_cgroup *cg);
/* Moves the calling process into it: 0, or -1 (said). */
int test_cgroup_join(const struct test_cgroup *cg);
/* Moves the calling process back home; the cgroup, and what it started there, stay: 0 or -1. */
int test_cgroup_return(const struct test_cgroup *cg);
/* Ends every process left in it (cgroup.kill) and removes it. */
void test_cgroup_remove(struct test_cgroup *cg);
/* Moves the test process back and removes the cgroup (its processes must be gone). */
void test_cgroup_leave(struct test_cgroup *cg);
/* Ends and removes the cgroups of killed test runs beside the caller's own. */
void test_cgroup_stale_remove(void);

#endif
