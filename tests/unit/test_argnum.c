// SPDX-License-Identifier: GPL-2.0
/*
 * Command-line numbers (user/common/argnum.c), as claimd, claimctl and claimlab
 * read them: the whole string is the number, in range, or it is refused and
 * the output left alone; bounds are inclusive; overflow, NaN and infinity
 * are refused, not clamped.
 */
#include <float.h>
#include <limits.h>

#include "argnum.h"
#include "test_progs.h"

void test_argnum(void)
{
	if (test__start_subtest("integers")) {
		static const struct {
			const char *s;
			long min, max;
			int ok;
			long want;
		} cases[] = {
			{ "0", 0, 10, 1, 0 },
			{ "10", 0, 10, 1, 10 },
			{ "64", 64, 1 << 24, 1, 64 },
			{ "63", 64, 1 << 24, 0, 0 },
			{ "11", 0, 10, 0, 0 },
			{ "-1", 0, 10, 0, 0 },
			{ "-5", -10, 10, 1, -5 },
			{ "4294967295", 1, 4294967295L, 1, 4294967295L },
			{ "99999999999999999999", 0, LONG_MAX, 0, 0 },
			{ "", 0, 10, 0, 0 },
			{ "5x", 0, 10, 0, 0 },
			{ "5 ", 0, 10, 0, 0 },
			{ "0x10", 0, 100, 0, 0 },
			{ "1.5", 0, 10, 0, 0 },
			{ "abc", 0, 10, 0, 0 },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			long v = -12345;
			int rc = arg_long(cases[i].s, cases[i].min, cases[i].max, &v);

			ASSERT_EQ(rc, cases[i].ok ? 0 : -1, cases[i].s);
			ASSERT_EQ(v, cases[i].ok ? cases[i].want : -12345, "value or untouched");
		}
	}
	if (test__start_subtest("numbers")) {
		static const struct {
			const char *s;
			double min, max;
			int ok;
			double want;
		} cases[] = {
			{ "0.1", 0.1, 3600, 1, 0.1 }, { "3600", 0.1, 3600, 1, 3600 },
			{ "0.05", 0.1, 3600, 0, 0 },  { "1e3", 0, DBL_MAX, 1, 1000 },
			{ "-0.5", 0, 100, 0, 0 },     { "nan", 0, DBL_MAX, 0, 0 },
			{ "inf", 0, DBL_MAX, 0, 0 },  { "1e999", 0, DBL_MAX, 0, 0 },
			{ "", 0, 1, 0, 0 },	      { "0.5%", 0, 1, 0, 0 },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			double v = -7;
			int rc = arg_double(cases[i].s, cases[i].min, cases[i].max, &v);

			ASSERT_EQ(rc, cases[i].ok ? 0 : -1, cases[i].s);
			ASSERT_FLOAT_NEAR(v, cases[i].ok ? cases[i].want : -7, 1e-12, cases[i].s);
		}
	}
}
