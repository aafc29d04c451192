// SPDX-License-Identifier: GPL-2.0
/*
 * The names of listeners gone, across a restart (user/claimd/model/departed.c):
 * a listener's name outlives its close (model/names.c); saved into a state
 * directory and loaded into fresh names, the address is named as before,
 * on a wildcard listener's loopback as on a bound one. A port someone
 * listens on at load keeps its new listener's name. A file with one
 * malformed entry, another format or version, or text after its JSON puts
 * nothing back; a missing file is no error.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/departed.h"
#include "test_progs.h"

/* Far above any pid_max: /proc has nothing for it, so a name comes from the comm given. */
#define GONE_TGID 0x7ffffff0u

static struct claimd_addr addr(const char *s)
{
	struct claimd_addr a;

	if (addr__parse(s, &a))
		memset(&a, 0xee, sizeof(a));
	return a;
}

/* A departed.json of one entry: addr hex, port and name as given. */
static int parse_one(struct names *n, const char *hex, const char *port, const char *name)
{
	char text[512], why[160] = "";

	snprintf(text, sizeof(text),
		 "{\"format\": \"claimd-departed\", \"version\": 1, \"departed\": "
		 "[{\"addr\": %s, \"port\": %s, \"name\": %s}]}",
		 hex, port, name);
	return departed__parse(n, text, strlen(text), why, sizeof(why));
}

static void round_trip(void)
{
	char dir[] = "/tmp/claimd-departed.XXXXXX", why[160] = "", path[128];
	struct claimd_addr any = addr("0.0.0.0:6379"), lo = addr("127.0.0.1:6379");
	struct claimd_addr bound = addr("10.0.0.7:5432"), taken = addr("0.0.0.0:8080");
	struct claimd_addr lo_taken = addr("127.0.0.1:8080");
	struct names *a = names__new(), *b = names__new();

	if (!ASSERT_OK_PTR(a, "names") || !ASSERT_OK_PTR(b, "names") ||
	    !ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		goto out;
	names__listen(a, GONE_TGID, &any, "redis-server", false);
	names__listen(a, GONE_TGID, &any, NULL, true);
	names__listen(a, GONE_TGID + 1, &bound, "postgres", false);
	names__listen(a, GONE_TGID + 1, &bound, NULL, true);
	names__listen(a, GONE_TGID + 2, &taken, "old", false);
	names__listen(a, GONE_TGID + 2, &taken, NULL, true);
	ASSERT_STREQ(names__callee(a, &lo), "redis-server:6379", "gone, before the restart");
	ASSERT_OK(departed__save(a, dir), "save");
	/* The restarted claimd: someone listens on 8080 again already. */
	names__listen(b, GONE_TGID + 3, &taken, "new", false);
	ASSERT_EQ(departed__load(b, dir, why, sizeof(why)), 2, "two put back, one port taken");
	ASSERT_STREQ(names__callee(b, &lo), "redis-server:6379", "a wildcard's loopback");
	ASSERT_STREQ(names__callee(b, &bound), "postgres:5432", "a bound address");
	ASSERT_STREQ(names__callee(b, &lo_taken), "new:8080", "the port's new listener");
	/* A listener comes: the name gone goes. */
	names__listen(b, GONE_TGID + 4, &any, "valkey", false);
	names__listen(b, GONE_TGID + 4, &any, NULL, true);
	ASSERT_STREQ(names__callee(b, &lo), "valkey:6379", "replaced by the next listener");
out:
	snprintf(path, sizeof(path), "%s/%s", dir, DEPARTED_FILE);
	unlink(path);
	rmdir(dir);
	names__free(a);
	names__free(b);
}

static void malformed(void)
{
	static const char *const bad[][3] = {
		{ "\"0000000000000000000000000000000g\"", "6379", "\"x\"" },
		{ "\"00000000000000000000ffff7f00000\"", "6379", "\"x\"" },
		{ "7", "6379", "\"x\"" },
		{ "\"00000000000000000000ffff7f000001\"", "0", "\"x\"" },
		{ "\"00000000000000000000ffff7f000001\"", "65536", "\"x\"" },
		{ "\"00000000000000000000ffff7f000001\"", "\"6379\"", "\"x\"" },
		{ "\"00000000000000000000ffff7f000001\"", "6379", "\"\"" },
		{ "\"00000000000000000000ffff7f000001\"", "6379", "null" },
	};
	struct claimd_addr lo = addr("127.0.0.1:6379");
	struct names *n = names__new();
	char why[160] = "";
	size_t i;

	if (!ASSERT_OK_PTR(n, "names"))
		return;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT_EQ(parse_one(n, bad[i][0], bad[i][1], bad[i][2]), -1, bad[i][0]);
	ASSERT_EQ(departed__parse(n, "{}", 2, why, sizeof(why)), -1, "no format");
	ASSERT_EQ(departed__parse(n, "[] x", 4, why, sizeof(why)), -1, "not one document");
	ASSERT_STREQ(names__callee(n, &lo), "127.0.0.1:6379", "nothing put back");
	ASSERT_EQ(parse_one(n, "\"00000000000000000000ffff7f000001\"", "6379", "\"redis\""), 1,
		  "a good one");
	ASSERT_STREQ(names__callee(n, &lo), "redis", "named");
	ASSERT_EQ(departed__load(n, "/nonexistent-claimd-dir", why, sizeof(why)), 0, "no file");
	names__free(n);
}

void test_departed(void)
{
	if (test__start_subtest("round_trip"))
		round_trip();
	if (test__start_subtest("malformed"))
		malformed();
}
