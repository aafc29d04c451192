/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test runner's interface, in the shape of the kernel's BPF selftests
 * (test_progs): a test is 'void test_<name>(void)' in tests/unit or
 * tests/bpf, found by the build; subtests, ASSERT_* macros that return
 * whether they held, test__skip().
 */
#ifndef CLAIMD_TEST_PROGS_H
#define CLAIMD_TEST_PROGS_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void test__fail(void);
/* Has the test failed so far? */
bool test__failed_now(void);
__attribute__((format(printf, 1, 2))) void test__skip(const char *fmt, ...);
bool test__start_subtest(const char *name);
/*
 * A line of the test's own explaining what it saw ("why: ..."): said again
 * with its failing lines just before the summary, where a log read from its
 * end (CI's) still shows it.
 */
__attribute__((format(printf, 1, 2))) void test__why(const char *fmt, ...);
/* Root needed: skips (or fails under CLAIMD_REQUIRE_BPF=1) when not root. */
bool test__need_root(void);
/* Where the build put claimd & co, and the repository's top directory. */
const char *test__build_dir(void);
const char *test__top_dir(void);
/* The test's own directory under /tmp (0755) for what another user runs:
 * made on first use, removed by the runner when the test ends. NULL on error. */
const char *test__stage_dir(void);
/* The cgroup directory the test runs in (its own), or "" (not root). */
const char *test__cgroup(void);

#define _CHECK(cond, tag, fmt, ...)                                                          \
	({                                                                                   \
		bool ___ok = !(cond);                                                        \
		if (!___ok) {                                                                \
			test__fail();                                                        \
			fprintf(stdout, "%s:%d: FAIL:%s " fmt "\n", __FILE__, __LINE__, tag, \
				##__VA_ARGS__);                                              \
		}                                                                            \
		___ok;                                                                       \
	})

#define ASSERT_TRUE(actual, name)  _CHECK(!(actual), (name), "unexpected false")
#define ASSERT_FALSE(actual, name) _CHECK((actual), (name), "unexpected true")

#define ASSERT_EQ(actual, expected, name)                                                       \
	({                                                                                      \
		typeof(actual) ___a = (actual);                                                 \
		typeof(expected) ___e = (expected);                                             \
		_CHECK((long long)___a != (long long)___e, (name), "got %lld != expected %lld", \
		       (long long)___a, (long long)___e);                                       \
	})
#define ASSERT_NEQ(actual, expected, name)                                                        \
	({                                                                                        \
		typeof(actual) ___a = (actual);                                                   \
		typeof(expected) ___e = (expected);                                               \
		_CHECK((long long)___a == (long long)___e, (name), "got %lld == unexpected %lld", \
		       (long long)___a, (long long)___e);                                         \
	})
#define ASSERT_OP(actual, op, bound, name)                                                      \
	({                                                                                      \
		typeof(actual) ___a = (actual);                                                 \
		typeof(bound) ___b = (bound);                                                   \
		_CHECK(!((long long)___a op(long long) ___b), (name), "got %lld, want %s %lld", \
		       (long long)___a, #op, (long long)___b);                                  \
	})
#define ASSERT_LT(a, b, name) ASSERT_OP(a, <, b, name)
#define ASSERT_LE(a, b, name) ASSERT_OP(a, <=, b, name)
#define ASSERT_GT(a, b, name) ASSERT_OP(a, >, b, name)
#define ASSERT_GE(a, b, name) ASSERT_OP(a, >=, b, name)
#define ASSERT_OK(res, name)                                                      \
	({                                                                        \
		long long ___r = (res);                                           \
		_CHECK(___r != 0, (name), "got %lld (errno %d: %s)", ___r, errno, \
		       strerror(errno));                                          \
	})
#define ASSERT_OK_PTR(ptr, name) _CHECK(!(ptr), (name), "unexpected NULL (errno %d)", errno)
#define ASSERT_STREQ(actual, expected, name)                                                 \
	({                                                                                   \
		const char *___a = (actual), *___e = (expected);                             \
		_CHECK(!___a || strcmp(___a, ___e), (name), "got \"%s\" != expected \"%s\"", \
		       ___a ? ___a : "(null)", ___e);                                        \
	})
#define ASSERT_FLOAT_NEAR(actual, expected, tol, name)                                \
	({                                                                            \
		double ___a = (actual), ___e = (expected);                            \
		_CHECK(___a<___e - (tol) || ___a> ___e + (tol), (name),               \
		       "got %.4f, expected %.4f +- %.4f", ___a, ___e, (double)(tol)); \
	})

#endif
