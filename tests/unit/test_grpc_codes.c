// SPDX-License-Identifier: GPL-2.0
/*
 * grpc_codes__parse (user/claimd/probes/go/grpc_codes.c): the --grpc-fail-codes list,
 * by name in any case or by number, into the mask the Go probes read; the
 * default mask named; words that are no code refused.
 */
#include <stdint.h>

#include "goprobe.h"
#include "probes/go/grpc_codes.h"
#include "test_progs.h"

void test_grpc_codes(void)
{
	char err[128];
	uint32_t m = 0;

	ASSERT_OK(grpc_codes__parse("UNAVAILABLE,internal, 2", &m, err, sizeof(err)), "parse");
	ASSERT_EQ(m, (1u << 14) | (1u << 13) | (1u << 2), "mask");
	ASSERT_OK(grpc_codes__parse("UNKNOWN,DEADLINE_EXCEEDED,RESOURCE_EXHAUSTED,INTERNAL,"
				    "UNAVAILABLE,DATA_LOSS",
				    &m, err, sizeof(err)),
		  "the default by name");
	ASSERT_EQ(m, CLAIMD_GRPC_FAIL_DEFAULT, "the default mask");
	ASSERT_OK(grpc_codes__parse("", &m, err, sizeof(err)), "empty: none fail");
	ASSERT_EQ(m, 0, "no code");
	ASSERT_EQ(grpc_codes__parse("UNAVAILABLE,17", &m, err, sizeof(err)), -1, "17 refused");
	ASSERT_EQ(grpc_codes__parse("SLOW", &m, err, sizeof(err)), -1, "a word refused");
	ASSERT_STREQ(grpc_codes__name(14), "UNAVAILABLE", "name of 14");
	ASSERT_TRUE(grpc_codes__name(17) == NULL, "no name past 16");
}
