// SPDX-License-Identifier: GPL-2.0
/*
 * nodecode__open (user/claimd/probes/node/nodecode.c) on the node installed
 * here: its layout found in its code and checked twice; a copy whose
 * push_async_context packs the context it enters from another register
 * refused, naming what and where; TCPWrap::New's probe on the first
 * instruction past its base's constructor that the kernel emulates (a call
 * there: one trap, where the load after the constructor is stepped, two),
 * and kept right after the constructor in copies whose code between writes
 * the wrap's register or its ids; a copy stripped of its symbol table
 * refused (no parser's OnStreamRead to probe); programs that are no node (a C
 * program, nginx) not taken for one (ENOEXEC).
 */
#include <errno.h>
#include <stdbool.h>
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
/*
 * TCPWrap::New in the same build, right after its base's constructor
 * returns (the wrap in RBX): a load, then the wrap's vtable stored. Then,
 * before the call to uv_tcp_init where the probe goes, lea 0xa0(%rbx),%rsi
 * and a store at 0x58(%rbx); patched, the first writes RBX instead, the
 * second the async id (0x28).
 */
#define TCP_AFTER_CTOR "\x49\x8b\x84\x24\xd0\x00\x00\x00\x48\xc7\x03"
#define TCP_LEA_RSI    "\x48\x8d\xb3\xa0"
#define TCP_LEA_RBX    "\x48\x8d\x9b\xa0"
#define TCP_STORE_58   "\x48\xc7\x43\x58"
#define TCP_STORE_IDS  "\x48\xc7\x43\x28"

/* Is the instruction at offset off of the file path one the kernel emulates at a uprobe? */
static bool emulated_at(const char *path, uint64_t off)
{
	unsigned char b[2] = { 0 };
	FILE *f = fopen(path, "rb");
	bool ok = f && !fseek(f, (long)off, SEEK_SET) && fread(b, 1, 2, f) == 2;

	if (f)
		fclose(f);
	/* call or jmp relative, a short conditional jump, a near one, a nop. */
	return ok && (b[0] == 0xe8 || b[0] == 0xe9 || b[0] == 0xeb || (b[0] & 0xf0) == 0x70 ||
		      (b[0] == 0x0f && ((b[1] & 0xf0) == 0x80 || b[1] == 0x1f)) || b[0] == 0x90);
}

/* A copy of node patched (from to to, once past TCP_AFTER_CTOR) keeps the probe after the constructor. */
static void tcp_probe_kept(const char *copy, const char *from, const char *to,
			   const struct nodecode *installed)
{
	struct nodecode n;

	if (!ASSERT_EQ(gopatch_copy(NODE, copy, TCP_AFTER_CTOR, sizeof(TCP_AFTER_CTOR) - 1, from,
				    to, 1),
		       1, "the copy (NodeSource's v20 code)") ||
	    !ASSERT_OK(nodecode__open(copy, &n), "read"))
		return;
	ASSERT_STREQ(n.unverified ? n.unverified : "", "", "its layout still shown");
	ASSERT_FALSE(n.tcp_emulated, "the probe not moved past the write");
	ASSERT_FALSE(emulated_at(copy, n.tcp_off), "... where the kernel steps the instruction");
	ASSERT_LT(n.tcp_at, installed->tcp_at, "before the call it sits on in the installed node");
	ASSERT_EQ(n.tcp_reg, installed->tcp_reg, "the wrap in the same register");
}

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
		ASSERT_TRUE(n.tcp_emulated, "TCPWrap::New's probe on an instruction emulated");
		ASSERT_TRUE(emulated_at(NODE, n.tcp_off), "... as the file's bytes there say");
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
	if (test__start_subtest("tcp_probe_kept")) {
		struct nodecode installed;

		if (ASSERT_OK(nodecode__open(NODE, &installed), "read the installed node") &&
		    ASSERT_TRUE(installed.tcp_emulated, "its probe moved to the call")) {
			snprintf(copy, sizeof(copy), "%s/node-rbx", dir);
			tcp_probe_kept(copy, TCP_LEA_RSI, TCP_LEA_RBX, &installed);
			snprintf(copy, sizeof(copy), "%s/node-ids", dir);
			tcp_probe_kept(copy, TCP_STORE_58, TCP_STORE_IDS, &installed);
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
