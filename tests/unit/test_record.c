// SPDX-License-Identifier: GPL-2.0
/* Records from the kernel are trusted only when type, version and size agree. */
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "kernel/record.h"
#include "test_progs.h"

static void hdr(struct claimd_rec_hdr *h, int type, size_t size)
{
	h->type = type;
	h->version = CLAIMD_RECORD_VERSION;
	h->size = size;
}

/*
 * The fuzzer's seeds (tests/fuzz/corpus/record) are records of this
 * version: seeds claimd refuses would start the fuzzer at the header check.
 */
static void seeds_current(void)
{
	char dir[H_PATH], path[H_PATH + 256];
	_Alignas(8) char buf[4096];
	struct dirent *de;
	const char *why;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/record", test__top_dir());
	d = opendir(dir);
	if (!ASSERT_OK_PTR(d, dir))
		return;
	while ((de = readdir(d))) {
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		len = read_file(path, buf, sizeof(buf));
		n++;
		if (!ASSERT_GT(record__check(buf, len > 0 ? (size_t)len : 0, &why), 0, de->d_name))
			printf("seed %s refused: %s\n", de->d_name, why);
	}
	closedir(d);
	ASSERT_GE(n, 6, "seeds read");
}

void test_record_check(void)
{
	struct claimd_ingress in;
	struct claimd_root_egress eg;
	struct claimd_listen li;
	struct claimd_exit ex;
	struct claimd_socket_file sf;
	const char *why;
	size_t sz;

	memset(&in, 0, sizeof(in));
	if (test__start_subtest("ingress_sizes")) {
		in.n_egress = 3;
		sz = offsetof(struct claimd_ingress, egress) + 3 * sizeof(struct claimd_egress);
		hdr(&in.hdr, CLAIMD_REC_INGRESS, sz);
		ASSERT_EQ(record__check(&in, sz, &why), CLAIMD_REC_INGRESS, "3 egress");
		ASSERT_EQ(record__check(&in, sz - 1, &why), 0, "one byte short");
		in.n_egress = 0;
		sz = offsetof(struct claimd_ingress, egress);
		hdr(&in.hdr, CLAIMD_REC_INGRESS, sz);
		ASSERT_EQ(record__check(&in, sz, &why), CLAIMD_REC_INGRESS, "bare ingress");
		in.n_egress = CLAIMD_EGRESS_MAX + 1;
		ASSERT_EQ(record__check(&in, sz, &why), 0, "too many egress");
		ASSERT_TRUE(why != NULL, "reason given");
		in.n_egress = 2; /* says 2, sized for 0 */
		ASSERT_EQ(record__check(&in, sz, &why), 0, "count and size disagree");
	}
	if (test__start_subtest("other_types")) {
		hdr(&eg.hdr, CLAIMD_REC_EGRESS, sizeof(eg));
		ASSERT_EQ(record__check(&eg, sizeof(eg), &why), CLAIMD_REC_EGRESS, "egress");
		hdr(&li.hdr, CLAIMD_REC_LISTEN, sizeof(li));
		ASSERT_EQ(record__check(&li, sizeof(li), &why), CLAIMD_REC_LISTEN, "listen");
		hdr(&ex.hdr, CLAIMD_REC_EXIT, sizeof(ex));
		ASSERT_EQ(record__check(&ex, sizeof(ex), &why), CLAIMD_REC_EXIT, "exit");
		hdr(&ex.hdr, CLAIMD_REC_LISTEN, sizeof(ex));
		ASSERT_EQ(record__check(&ex, sizeof(ex), &why), 0, "exit sized as listen");
		memset(&sf, 0, sizeof(sf));
		hdr(&sf.hdr, CLAIMD_REC_SOCKET_FILE, sizeof(sf));
		ASSERT_EQ(record__check(&sf, sizeof(sf), &why), CLAIMD_REC_SOCKET_FILE,
			  "socket file");
		hdr(&sf.hdr, CLAIMD_REC_SOCKET_FILE, sizeof(ex));
		ASSERT_EQ(record__check(&sf, sizeof(ex), &why), 0, "socket file sized as exit");
	}
	if (test__start_subtest("malformed_headers")) {
		hdr(&ex.hdr, CLAIMD_REC_EXIT, sizeof(ex));
		ASSERT_EQ(record__check(&ex, 4, &why), 0, "shorter than header");
		ASSERT_EQ(record__check(NULL, 0, &why), 0, "nothing");
		ex.hdr.version = CLAIMD_RECORD_VERSION + 1;
		ASSERT_EQ(record__check(&ex, sizeof(ex), &why), 0, "other version");
		hdr(&ex.hdr, 99, sizeof(ex));
		ASSERT_EQ(record__check(&ex, sizeof(ex), &why), 0, "unknown type");
		hdr(&ex.hdr, CLAIMD_REC_EXIT, sizeof(ex) + 8);
		ASSERT_EQ(record__check(&ex, sizeof(ex), &why), 0, "size field lies");
	}
	if (test__start_subtest("fuzz_seeds"))
		seeds_current();
}
