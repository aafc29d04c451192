// SPDX-License-Identifier: GPL-2.0
/*
 * libclaim's Python package (python/libclaim): its own unit tests
 * (python/tests, unittest) against the libclaim.so this build made: the
 * header, the retry decision, a handle with no claimd, the WSGI
 * middleware, ClaimRetry against a real local server. No privileges.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "test_progs.h"

void test_python_package(void)
{
	char tests[H_PATH], path[H_PATH + 32], lib[H_PATH + 32],
		log[] = "/tmp/claimd-pytest.XXXXXX";
	static char out[1 << 16];
	const char *argv[] = {
		"/usr/bin/python3", "-m", "unittest", "discover", "-s", tests, NULL
	};
	const char *envv[] = { path, lib, "PYTHONDONTWRITEBYTECODE=1", NULL };
	int fd = mkstemp(log), status;
	pid_t pid;

	if (!ASSERT_GE(fd, 0, "log file"))
		return;
	close(fd);
	snprintf(tests, sizeof(tests), "%s/python/tests", test__top_dir());
	snprintf(path, sizeof(path), "PYTHONPATH=%s/python", test__top_dir());
	snprintf(lib, sizeof(lib), "CLAIMD_LIBCLAIM=%s/libclaim.so", test__build_dir());
	pid = proc_spawn(argv, envv, log);
	status = pid > 0 ? proc_wait(pid, 60000) : -1;
	if (status == -1 && pid > 0)
		proc_stop(pid, 1000);
	read_file(log, out, sizeof(out));
	unlink(log);
	if (!ASSERT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
			 "python -m unittest discover python/tests"))
		printf("%s\n", out);
}
