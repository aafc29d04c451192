// SPDX-License-Identifier: GPL-2.0
/*
 * The user-side hash table (user/common/hashtab.c): put, get, replace and delete;
 * the count; growth far past the initial bucket array with every entry still
 * found; for_each visiting each entry exactly once and stopping when asked;
 * each_u32_key telling each key's leading number, keys too short left out;
 * keys of different lengths (including empty keys and keys with NUL bytes
 * inside) kept apart.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "test_progs.h"

#define MANY 10000

static int count_visits(const struct hashtab_entry *e, void *ctx)
{
	int *visits = ctx;
	int *v = e->value;

	visits[*v]++;
	return 0;
}

static int stop_at_third(const struct hashtab_entry *e, void *ctx)
{
	int *seen = ctx;

	(void)e;
	return ++*seen == 3 ? 42 : 0;
}

static void add_first(uint32_t first, void *ctx)
{
	*(uint64_t *)ctx += first;
}

void test_hashtab(void)
{
	static int vals[MANY];
	struct hashtab *h = hashtab__new();
	int a = 1, b = 2, c = 3, err, i;

	if (!ASSERT_OK_PTR(h, "hashtab__new"))
		return;
	for (i = 0; i < MANY; i++)
		vals[i] = i;

	if (test__start_subtest("put_get")) {
		ASSERT_TRUE(hashtab__get(h, "alpha", 5) == NULL, "empty get");
		ASSERT_TRUE(hashtab__put(h, "alpha", 5, &a, &err) == NULL, "put alpha");
		ASSERT_EQ(err, 0, "put err");
		ASSERT_TRUE(hashtab__put(h, "beta", 4, &b, NULL) == NULL, "put beta");
		ASSERT_TRUE(hashtab__get(h, "alpha", 5) == &a, "get alpha");
		ASSERT_TRUE(hashtab__get(h, "beta", 4) == &b, "get beta");
		ASSERT_TRUE(hashtab__get(h, "gamma", 5) == NULL, "get missing");
		ASSERT_TRUE(hashtab__get(h, "alph", 4) == NULL, "prefix is another key");
		ASSERT_EQ(hashtab__count(h), 2, "count");
	}
	if (test__start_subtest("replace")) {
		ASSERT_TRUE(hashtab__put(h, "alpha", 5, &c, &err) == &a, "returns old");
		ASSERT_EQ(err, 0, "replace err");
		ASSERT_TRUE(hashtab__get(h, "alpha", 5) == &c, "new value");
		ASSERT_EQ(hashtab__count(h), 2, "count unchanged");
	}
	if (test__start_subtest("del")) {
		ASSERT_TRUE(hashtab__del(h, "alpha", 5) == &c, "del returns value");
		ASSERT_TRUE(hashtab__get(h, "alpha", 5) == NULL, "gone");
		ASSERT_TRUE(hashtab__del(h, "alpha", 5) == NULL, "second del");
		ASSERT_TRUE(hashtab__del(h, "nothing", 7) == NULL, "del missing");
		ASSERT_TRUE(hashtab__get(h, "beta", 4) == &b, "other kept");
		ASSERT_EQ(hashtab__count(h), 1, "count");
		ASSERT_TRUE(hashtab__del(h, "beta", 4) == &b, "del beta");
		ASSERT_EQ(hashtab__count(h), 0, "empty");
		ASSERT_TRUE(hashtab__put(h, "alpha", 5, &a, NULL) == NULL, "put after del");
		ASSERT_TRUE(hashtab__get(h, "alpha", 5) == &a, "get after re-put");
		hashtab__del(h, "alpha", 5);
	}
	if (test__start_subtest("growth")) {
		struct hashtab *g = hashtab__new();
		int bad_get = 0, bad_put = 0, bad_del = 0, left = 0;

		if (ASSERT_OK_PTR(g, "new")) {
			for (i = 0; i < MANY; i++) {
				char key[32];
				int n = snprintf(key, sizeof(key), "key-%d", i);

				if (hashtab__put(g, key, n, &vals[i], &err) || err)
					bad_put++;
			}
			ASSERT_EQ(bad_put, 0, "puts");
			ASSERT_EQ(hashtab__count(g), MANY, "count");
			for (i = 0; i < MANY; i++) {
				char key[32];
				int n = snprintf(key, sizeof(key), "key-%d", i);

				if (hashtab__get(g, key, n) != &vals[i])
					bad_get++;
			}
			ASSERT_EQ(bad_get, 0, "every key found");
			/* Remove the even ones; the odd ones must stay. */
			for (i = 0; i < MANY; i += 2) {
				char key[32];
				int n = snprintf(key, sizeof(key), "key-%d", i);

				if (hashtab__del(g, key, n) != &vals[i])
					bad_del++;
			}
			ASSERT_EQ(bad_del, 0, "deletes");
			ASSERT_EQ(hashtab__count(g), MANY / 2, "count after deletes");
			for (i = 0; i < MANY; i++) {
				char key[32];
				int n = snprintf(key, sizeof(key), "key-%d", i);

				left += hashtab__get(g, key, n) != NULL;
				if ((i % 2 == 0) != (hashtab__get(g, key, n) == NULL))
					bad_get++;
			}
			ASSERT_EQ(bad_get, 0, "only odd keys left");
			ASSERT_EQ(left, MANY / 2, "found after deletes");
			hashtab__free(g);
		}
	}
	if (test__start_subtest("for_each")) {
		struct hashtab *g = hashtab__new();
		int *visits = calloc(MANY, sizeof(*visits));
		int once = 0, seen = 0;

		if (ASSERT_OK_PTR(g, "new") && ASSERT_OK_PTR(visits, "calloc")) {
			for (i = 0; i < MANY; i++)
				hashtab__put(g, &i, sizeof(i), &vals[i], NULL);
			ASSERT_EQ(hashtab__for_each(g, count_visits, visits), 0, "returns 0");
			for (i = 0; i < MANY; i++)
				once += visits[i] == 1;
			ASSERT_EQ(once, MANY, "each entry visited once");
			ASSERT_EQ(hashtab__for_each(g, stop_at_third, &seen), 42, "stop value");
			ASSERT_EQ(seen, 3, "stopped at the third");
		}
		free(visits);
		hashtab__free(g);
	}
	if (test__start_subtest("each_u32_key")) {
		struct hashtab *g = hashtab__new();
		struct {
			uint32_t tgid, port;
		} key;
		uint64_t sum = 0;

		if (ASSERT_OK_PTR(g, "new")) {
			for (i = 1; i <= 100; i++) {
				key.tgid = (uint32_t)i;
				key.port = 8000 + i;
				hashtab__put(g, &key, sizeof(key), &vals[i], NULL);
			}
			hashtab__put(g, "ab", 2, &vals[0], NULL); /* too short: not told */
			hashtab__each_u32_key(g, add_first, &sum);
			ASSERT_EQ(sum, 5050, "each key's first number, once");
		}
		hashtab__free(g);
	}
	if (test__start_subtest("key_lengths")) {
		struct hashtab *g = hashtab__new();
		static const char ab_nul[3] = { 'a', 'b', 0 };
		static const char nul_a[2] = { 0, 'a' };
		uint32_t k32 = 7;
		uint64_t k64 = 7;
		int v[8];

		if (ASSERT_OK_PTR(g, "new")) {
			hashtab__put(g, "", 0, &v[0], NULL);
			hashtab__put(g, "a", 1, &v[1], NULL);
			hashtab__put(g, "ab", 2, &v[2], NULL);
			hashtab__put(g, ab_nul, 3, &v[3], NULL);
			hashtab__put(g, nul_a, 2, &v[4], NULL);
			hashtab__put(g, &k32, sizeof(k32), &v[5], NULL);
			hashtab__put(g, &k64, sizeof(k64), &v[6], NULL);
			ASSERT_EQ(hashtab__count(g), 7, "seven distinct keys");
			ASSERT_TRUE(hashtab__get(g, "", 0) == &v[0], "empty key");
			ASSERT_TRUE(hashtab__get(g, "a", 1) == &v[1], "a");
			ASSERT_TRUE(hashtab__get(g, "ab", 2) == &v[2], "ab");
			ASSERT_TRUE(hashtab__get(g, ab_nul, 3) == &v[3], "ab\\0");
			ASSERT_TRUE(hashtab__get(g, nul_a, 2) == &v[4], "\\0a");
			ASSERT_TRUE(hashtab__get(g, &k32, sizeof(k32)) == &v[5], "u32 7");
			ASSERT_TRUE(hashtab__get(g, &k64, sizeof(k64)) == &v[6], "u64 7");
			ASSERT_TRUE(hashtab__get(g, "abc", 3) == NULL, "abc not there");
			ASSERT_TRUE(hashtab__del(g, ab_nul, 3) == &v[3], "del ab\\0");
			ASSERT_TRUE(hashtab__get(g, "ab", 2) == &v[2], "ab survives");
			ASSERT_TRUE(hashtab__del(g, "", 0) == &v[0], "del empty key");
			ASSERT_TRUE(hashtab__get(g, "a", 1) == &v[1], "a survives");
			ASSERT_EQ(hashtab__count(g), 5, "count");
			hashtab__free(g);
		}
	}
	hashtab__free(h);
}
