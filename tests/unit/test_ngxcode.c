// SPDX-License-Identifier: GPL-2.0
/*
 * ngxcode__open (user/claimd/probes/nginx/ngxcode.c) on Debian's nginx:
 * its version, and every offset nginx's probe reads shown in its code; a
 * copy whose ngx_chain_writer loads the writer's connection through
 * another register (tests/lib/nginx.h) refused, naming the field and the
 * function; programs that are no nginx (a C program, a Go one) not taken
 * for one (ENOEXEC).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "nginx.h"
#include "probes/nginx/ngxcode.h"
#include "test_progs.h"

void test_ngxcode(void)
{
	char dir[H_DIR], copy[H_PATH + 16], go[H_PATH];
	struct ngxcode n;

	if (access("/usr/sbin/nginx", R_OK)) {
		test__skip("/usr/sbin/nginx not installed (make test installs it)");
		return;
	}
	if (test__start_subtest("debian")) {
		ASSERT_OK(ngxcode__open("/usr/sbin/nginx", &n), "read");
		printf("%s: %s\n", n.version, n.unverified ? n.unverified : "verified");
		ASSERT_EQ(strncmp(n.version, "nginx/1.", 8), 0, "its version");
		ASSERT_STREQ(n.unverified ? n.unverified : "", "",
			     "every offset shown in its code");
	}
	if (test__start_subtest("refused") && ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "dir")) {
		snprintf(copy, sizeof(copy), "%s/nginx", dir);
		if (ASSERT_OK(nginx_refused_copy(copy), "the copy") &&
		    ASSERT_OK(ngxcode__open(copy, &n), "read")) {
			ASSERT_STREQ(n.unverified ? n.unverified : "",
				     "ngx_chain_writer_ctx_t.connection", "the field not shown");
			ASSERT_STREQ(n.where ? n.where : "", "ngx_chain_writer", "sought there");
			ASSERT_EQ(strncmp(n.version, "nginx/1.", 8), 0, "its version all the same");
		}
		tmpdir_remove(dir);
	}
	if (test__start_subtest("not_nginx")) {
		errno = 0;
		ASSERT_EQ(ngxcode__open("/bin/true", &n), -1, "a C program");
		ASSERT_EQ(errno, ENOEXEC, "no nginx");
		snprintf(go, sizeof(go), "%s/tests/go/gohttp", test__build_dir());
		errno = 0;
		if (!access(go, R_OK)) {
			ASSERT_EQ(ngxcode__open(go, &n), -1, "a Go program");
			ASSERT_EQ(errno, ENOEXEC, "no nginx either");
		}
	}
}
