// SPDX-License-Identifier: GPL-2.0
/*
 * libclaim's packages for other languages, each by its own tests and test
 * runner, against the libclaim.so this build made (no privileges):
 * python/tests (unittest), java/src/test (JUnit 4) and node/test (node
 * --test, with its addon from this build): the header, the
 * retry decision, a handle with no claimd, the middleware or filter, the
 * client's retries against a real local server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "test_progs.h"

/* Runs argv with envv (and $CLAIMD_LIBCLAIM set to this build's); passes if it exits 0. */
static void run_suite(const char *const argv[], const char *env, const char *what)
{
	char lib[H_PATH + 32], log[] = "/tmp/claimd-langtest.XXXXXX";
	static char out[1 << 16];
	const char *envv[] = { env, lib, "PYTHONDONTWRITEBYTECODE=1", NULL };
	int fd = mkstemp(log), status;
	pid_t pid;

	if (!ASSERT_GE(fd, 0, "log file"))
		return;
	close(fd);
	snprintf(lib, sizeof(lib), "CLAIMD_LIBCLAIM=%s/libclaim.so", test__build_dir());
	pid = proc_spawn(argv, envv, log);
	status = pid > 0 ? proc_wait(pid, 120000) : -1;
	if (status == -1 && pid > 0)
		proc_stop(pid, 1000);
	read_file(log, out, sizeof(out));
	unlink(log);
	if (!ASSERT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, what))
		printf("%s\n", out);
}

void test_python_package(void)
{
	char tests[H_PATH], path[H_PATH + 32];
	const char *argv[] = {
		"/usr/bin/python3", "-m", "unittest", "discover", "-s", tests, NULL
	};

	snprintf(tests, sizeof(tests), "%s/python/tests", test__top_dir());
	snprintf(path, sizeof(path), "PYTHONPATH=%s/python", test__top_dir());
	run_suite(argv, path, "python -m unittest discover python/tests");
}

void test_java_package(void)
{
	char cp[H_PATH * 3];
	const char *argv[] = {
		"java", "-cp", cp, "org.junit.runner.JUnitCore", "org.claimd.libclaim.ClaimTest",
		NULL
	};

	snprintf(cp, sizeof(cp),
		 "%s/java/test-classes:%s/java/libclaim.jar:/usr/share/java/jna.jar:"
		 "/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar",
		 test__build_dir(), test__build_dir());
	run_suite(argv, "LANG=C.UTF-8", "JUnit: org.claimd.libclaim.ClaimTest");
}

void test_node_package(void)
{
	char tests[H_PATH], addon[H_PATH + 32];
	const char *argv[] = { "node", "--test", tests, NULL };

	snprintf(tests, sizeof(tests), "%s/node/test/", test__top_dir());
	snprintf(addon, sizeof(addon), "CLAIMD_NODE_ADDON=%s/node/claim.node", test__build_dir());
	run_suite(argv, addon, "node --test node/test");
}
