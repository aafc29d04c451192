// SPDX-License-Identifier: GPL-2.0
/*
 * libclaim's packages for other languages, each by its own tests and test
 * runner, against the libclaim.so this build made (no privileges):
 * python/tests (pytest), java/src/test (JUnit 4), node/test (node
 * --test, with its addon from this build) and go/claim (go test, against
 * libclaim's own tables from build/tests/claim_table): the header, the
 * retry decision, a handle with no claimd, the middleware or filter, the
 * client's retries against a real local server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "test_progs.h"

/* Runs argv with env[0..2] (and $CLAIMD_LIBCLAIM set to this build's); passes if it exits 0. */
static void run_suite_env(const char *const argv[], const char *const env[3], const char *what)
{
	char lib[H_PATH + 32], log[] = "/tmp/claimd-langtest.XXXXXX";
	static char out[1 << 16];
	const char *envv[] = { lib, "PYTHONDONTWRITEBYTECODE=1", env[0], env[1], env[2], NULL };
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

static void run_suite(const char *const argv[], const char *env, const char *what)
{
	const char *envv[3] = { env, NULL, NULL };

	run_suite_env(argv, envv, what);
}

void test_python_package(void)
{
	char tests[H_PATH], path[H_PATH + 32];
	const char *argv[] = { "/usr/bin/python3", "-m",  "pytest", "-q", "-p",
			       "no:cacheprovider", tests, NULL };

	snprintf(tests, sizeof(tests), "%s/python/tests", test__top_dir());
	snprintf(path, sizeof(path), "PYTHONPATH=%s/python", test__top_dir());
	run_suite(argv, path, "python3 -m pytest python/tests");
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

void test_go_package(void)
{
	char cmd[H_PATH * 2], table[H_PATH + 32], cache[H_PATH + 32], path[H_PATH + 32];
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	const char *envv[3] = { table, cache, path };

	/* The module's own directory: go 1.19 has no -C. No network: nothing to fetch. */
	snprintf(cmd, sizeof(cmd),
		 "cd %s/go/claim && GO111MODULE=on GOFLAGS=-mod=mod GOPROXY=off exec go test -v "
		 "./...",
		 test__top_dir());
	snprintf(table, sizeof(table), "CLAIMD_CLAIM_TABLE=%s/tests/claim_table",
		 test__build_dir());
	snprintf(cache, sizeof(cache), "GOCACHE=%s/go-cache", test__build_dir());
	snprintf(path, sizeof(path), "GOPATH=%s/gopath", test__build_dir());
	run_suite_env(argv, envv, "go test in go/claim");
}

/* node/ as npm ships it (tests/peers/node_pack.sh): packed, installed offline, loaded. */
void test_node_npm_pack(void)
{
	char script[H_PATH];
	const char *argv[] = { "/bin/sh", script, test__top_dir(), NULL };

	snprintf(script, sizeof(script), "%s/tests/peers/node_pack.sh", test__top_dir());
	run_suite(argv, "npm_config_update_notifier=false", "npm pack, npm install --offline");
}
