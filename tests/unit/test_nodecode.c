// SPDX-License-Identifier: GPL-2.0
/*
 * nodecode__open (user/claimd/probes/node/nodecode.c) on the node installed
 * here: its layout found in its code and checked twice; a copy whose
 * push_async_context packs the context it enters from another register
 * refused, naming what and where; a copy stripped of its symbol table
 * refused (no parser's OnStreamRead to probe); programs that are no node (a C
 * program, nginx) not taken for one (ENOEXEC).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gopatch.h"
#include "harness.h"
#include "probes/node/nodecode.h"
#include "test_progs.h"

#define NODE "/usr/bin/node"
/* push_async_context's start in NodeSource's v20 build, up to its first load through this. */
#define PUSH_START                                                                             \
	"\x55\x48\x89\xe5\x41\x57\x41\x56\x41\x55\x49\x89\xf5\x41\x54\x53\x48\x89\xfb\x48\x83" \
	"\xec\x18\x48\x8b\x47\x60\x8b\x50\x18"
#define PUSH_PAIR  "\x66\x0f\x14\xc1" /* unpcklpd %xmm1,%xmm0: [id, trigger] */
#define PUSH_OTHER "\x66\x0f\x14\xc2" /* unpcklpd %xmm2,%xmm0 */

void test_nodecode(void)
{
	char dir[H_DIR], copy[H_PATH + 16], out[256];
	struct nodecode n;

	if (access(NODE, R_OK)) {
		test__skip(NODE " not installed (make test installs it)");
		return;
	}
	if (test__start_subtest("installed")) {
		ASSERT_OK(nodecode__open(NODE, &n), "read");
		printf("%s: %s; async id +0x%x, realm +0x%x, environment +0x%x, async_id_fields "
		       "+0x%x, TCPWrap+0x%llx (register %u), OnStreamRead's thunk %u in\n",
		       NODE, n.unverified ? n.unverified : "verified", n.async_id, n.realm, n.env,
		       n.fields, (unsigned long long)n.tcp_at, n.tcp_reg, n.thunk_adjust);
		ASSERT_STREQ(n.unverified ? n.unverified : "", "", "its layout shown in its code");
		/* After BaseObject's vtable, handle and realm; doubles, aligned. */
		ASSERT_GE(n.async_id, 24, "the async id after the object's header");
		ASSERT_EQ(n.async_id % 8, 0, "a double's alignment");
		ASSERT_GT(n.tcp_at, 0, "a probe point inside TCPWrap::New");
		ASSERT_NEQ(n.tcp_reg, 7, "this not in RSP");
		ASSERT_GT(n.thunk_adjust, 0, "OnStreamRead's thunk found, this adjusted");
		{
			struct stat st;

			/* Where the probes are attached: in the file, at three places. */
			ASSERT_OK(stat(NODE, &st), "stat");
			ASSERT_GT(n.parse_off, 0, "OnStreamRead's place in the file");
			ASSERT_GT(n.thunk_off, 0, "its thunk's");
			ASSERT_NEQ(n.thunk_off, n.parse_off, "two places");
			ASSERT_LT(n.tcp_off, (uint64_t)st.st_size, "TCPWrap::New's probe point's");
			ASSERT_GT(n.tcp_off, 0, "... inside the file");
		}
		ASSERT_EQ(nodecode__cookie(&n, 0) & 0xff, n.async_id, "the cookie's async id");
		ASSERT_EQ((nodecode__cookie(&n, 0) >> 32) & 0xffff, n.fields,
			  "the cookie's async_id_fields");
		ASSERT_EQ(nodecode__cookie(&n, n.thunk_adjust) >> 48, n.thunk_adjust,
			  "the cookie's adjustment");
	}
	if (!ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "dir"))
		return;
	if (test__start_subtest("refused")) {
		snprintf(copy, sizeof(copy), "%s/node-patched", dir);
		if (ASSERT_EQ(gopatch_copy(NODE, copy, PUSH_START, sizeof(PUSH_START) - 1,
					   PUSH_PAIR, PUSH_OTHER, 1),
			      1, "the copy (NodeSource's v20 code)") &&
		    ASSERT_OK(nodecode__open(copy, &n), "read")) {
			ASSERT_STREQ(n.unverified ? n.unverified : "",
				     "the running context's id and trigger at async_id_fields[0] "
				     "and [1]",
				     "what it does not show");
			ASSERT_NEQ(strstr(n.where ? n.where : "", "push_async_context"), NULL,
				   "sought there");
		}
	}
	if (test__start_subtest("stripped")) {
		const char *argv[] = { "strip", "-o", copy, NODE, NULL };

		snprintf(copy, sizeof(copy), "%s/node-stripped", dir);
		if (ASSERT_OK(proc_run(argv, out, sizeof(out), 60000), "strip") &&
		    ASSERT_OK(nodecode__open(copy, &n), "read")) {
			ASSERT_NEQ(strstr(n.unverified ? n.unverified : "", "stripped"), NULL,
				   "no parser's OnStreamRead among its symbols");
		}
	}
	if (test__start_subtest("not_node")) {
		errno = 0;
		ASSERT_EQ(nodecode__open("/bin/true", &n), -1, "a C program");
		ASSERT_EQ(errno, ENOEXEC, "no node");
		errno = 0;
		if (!access("/usr/sbin/nginx", R_OK)) {
			ASSERT_EQ(nodecode__open("/usr/sbin/nginx", &n), -1, "nginx");
			ASSERT_EQ(errno, ENOEXEC, "no node either");
		}
	}
	tmpdir_remove(dir);
}
