// SPDX-License-Identifier: GPL-2.0
/* Records from the kernel are trusted only when type, version and size agree. */
#include <stddef.h>
#include <string.h>

#include "kernel/record.h"
#include "test_progs.h"

static void hdr(struct claimd_rec_hdr *h, int type, size_t size)
{
	h->type = type;
	h->version = CLAIMD_RECORD_VERSION;
	h->size = size;
}

void test_record_check(void)
{
	struct claimd_ingress in;
	struct claimd_root_egress eg;
	struct claimd_listen li;
	struct claimd_exit ex;
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
}
