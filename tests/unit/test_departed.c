// SPDX-License-Identifier: GPL-2.0
/*
 * The names of listeners gone, across a restart (user/claimd/model/departed.c):
 * a listener's name outlives its close (model/names.c); saved into a state
 * directory and loaded into fresh names, the address is named as before,
 * on a wildcard listener's loopback as on a bound one. A port someone
 * listens on at load keeps its new listener's name. The socket files known
 * served go with them, by every name, each told the name it was bound by:
 * loaded, a name is a callee's again ("unix:<path>"), its server gone. A
 * file with one malformed entry, another format or version, or text after
 * its JSON puts nothing back; a missing file is no error.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/unix_listeners.h"
#include "model/departed.h"
#include "test_progs.h"
#include "unixaddr.h"

/* The test's clock: a socket file listened on a week before it is kept, not before. */
#define NOW  1800000000
#define WEEK DEPARTED_SOCKET_FILE_KEEP_S

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
	return departed__parse(n, text, strlen(text), NOW, why, sizeof(why));
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
	ASSERT_EQ(departed__load(b, dir, NOW, why, sizeof(why)), 2, "two put back, one port taken");
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

struct file_seen {
	const char *path;
	__u64 bound;
	time_t seen;
	int times;
};

static void file_seen(__u64 hash, const char *path, __u64 bound, time_t seen, void *ctx)
{
	struct file_seen *f = ctx;

	if (!strcmp(path, f->path) && hash == unix_listeners__hash(path) && bound == f->bound &&
	    seen == f->seen)
		f->times++;
}

static void socket_files(void)
{
	char dir[] = "/tmp/claimd-departed.XXXXXX", why[160] = "", path[128];
	const char *bound_as = "/run/claimd-test-gone/redis.sock";
	const char *alias = "/var/run/claimd-test-gone/redis.sock";
	const char *old = "/tmp/ssh-claimd-test/agent.1";
	__u64 bound = unix_listeners__hash(bound_as);
	struct file_seen seen[3] = { { bound_as, bound, NOW - 60, 0 },
				     { alias, bound, NOW - WEEK, 0 },
				     { old, unix_listeners__hash(old), NOW - WEEK - 1, 0 } };
	struct names *a = names__new(), *b = names__new();
	struct claimd_addr by_alias;
	int i;

	if (!ASSERT_OK_PTR(a, "names") || !ASSERT_OK_PTR(b, "names") ||
	    !ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		goto out;
	/* Told again later: the later time kept, the name told once. */
	ASSERT_EQ(names__socket_file(a, bound, bound_as, bound, NOW - 3600), 1, "new");
	ASSERT_EQ(names__socket_file(a, bound, bound_as, bound, NOW - 60), 0, "told again");
	names__socket_file(a, unix_listeners__hash(alias), alias, bound, NOW - WEEK);
	names__socket_file(a, unix_listeners__hash(old), old, unix_listeners__hash(old),
			   NOW - WEEK - 1);
	ASSERT_OK(departed__save(a, dir), "save");
	ASSERT_EQ(departed__load(b, dir, NOW, why, sizeof(why)), 2,
		  "two put back, the one not listened on for over a week not");
	for (i = 0; i < 3; i++) {
		names__each_socket_file(b, file_seen, &seen[i]);
		ASSERT_EQ(seen[i].times, i < 2, seen[i].path);
	}
	claimd_addr_unix(&by_alias, unix_listeners__hash(alias));
	ASSERT_STREQ(names__callee(b, &by_alias), "unix:/run/claimd-test-gone/redis.sock",
		     "called by another name: named by the one it was bound by");
out:
	snprintf(path, sizeof(path), "%s/%s", dir, DEPARTED_FILE);
	unlink(path);
	rmdir(dir);
	names__free(a);
	names__free(b);
}

/* A departed.json of no listener and one socket file, its fields as given. */
static int parse_file(struct names *n, const char *path, const char *bound, const char *seen)
{
	char text[512], why[160] = "";

	snprintf(text, sizeof(text),
		 "{\"format\": \"claimd-departed\", \"version\": 1, \"departed\": [], "
		 "\"socket_files\": [{\"path\": %s, \"bound\": %s, \"seen\": %s}]}",
		 path, bound, seen);
	return departed__parse(n, text, strlen(text), NOW, why, sizeof(why));
}

typedef int (*parse_fn)(struct names *n, const char *a, const char *b, const char *c);

/* Each row of fields in bad, parsed by parse: refused. */
static void refused(struct names *n, parse_fn parse, const char *const (*bad)[3], size_t rows)
{
	size_t i;

	for (i = 0; i < rows; i++)
		ASSERT_EQ(parse(n, bad[i][0], bad[i][1], bad[i][2]), -1, bad[i][0]);
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

	if (!ASSERT_OK_PTR(n, "names"))
		return;
	refused(n, parse_one, bad, sizeof(bad) / sizeof(bad[0]));
	ASSERT_EQ(departed__parse(n, "{}", 2, NOW, why, sizeof(why)), -1, "no format");
	ASSERT_EQ(departed__parse(n, "[] x", 4, NOW, why, sizeof(why)), -1, "not one document");
	ASSERT_STREQ(names__callee(n, &lo), "127.0.0.1:6379", "nothing put back");
	ASSERT_EQ(parse_one(n, "\"00000000000000000000ffff7f000001\"", "6379", "\"redis\""), 1,
		  "a good one");
	ASSERT_STREQ(names__callee(n, &lo), "redis", "named");
	ASSERT_EQ(departed__load(n, "/nonexistent-claimd-dir", NOW, why, sizeof(why)), 0,
		  "no file");
	names__free(n);
}

static void count_file(__u64 hash, const char *path, __u64 bound, time_t seen, void *ctx)
{
	(void)hash, (void)path, (void)bound, (void)seen;
	++*(int *)ctx;
}

static void malformed_files(void)
{
	static const char *const bad[][3] = {
		{ "\"redis.sock\"", "\"0123456789abcdef\"", "1799999999" },
		{ "\"\"", "\"0123456789abcdef\"", "1799999999" },
		{ "7", "\"0123456789abcdef\"", "1799999999" },
		{ "\"/run/r.sock\"", "\"0123456789abcdeg\"", "1799999999" },
		{ "\"/run/r.sock\"", "\"0123456789abcde\"", "1799999999" },
		{ "\"/run/r.sock\"", "81985529216486895", "1799999999" },
		{ "\"/run/r.sock\"", "\"0123456789abcdef\"", "-1" },
		{ "\"/run/r.sock\"", "\"0123456789abcdef\"", "\"1799999999\"" },
		{ "\"/run/r.sock\"", "\"0123456789abcdef\"", "null" },
	};
	const char *good = "\"0123456789abcdef\"";
	struct names *n = names__new();
	char why[160] = "", name[200];
	const char *lists = "{\"format\": \"claimd-departed\", \"version\": 1, \"departed\": [], "
			    "\"socket_files\": {}}";
	int files = 0;

	if (!ASSERT_OK_PTR(n, "names"))
		return;
	refused(n, parse_file, bad, sizeof(bad) / sizeof(bad[0]));
	memset(name, 'x', sizeof(name));
	name[0] = '"';
	name[1] = '/';
	snprintf(name + 110, sizeof(name) - 110, "\"");
	ASSERT_EQ(parse_file(n, name, good, "1799999999"), -1, "longer than a socket's name");
	ASSERT_EQ(departed__parse(n, lists, strlen(lists), NOW, why, sizeof(why)), -1,
		  "not a list");
	names__each_socket_file(n, count_file, &files);
	ASSERT_EQ(files, 0, "nothing put back");
	ASSERT_EQ(parse_file(n, "\"/run/r.sock\"", good, "1799999999"), 1, "a good one");
	ASSERT_EQ(parse_file(n, "\"/run/old.sock\"", good, "1"), 0, "a good one, too old");
	names__each_socket_file(n, count_file, &files);
	ASSERT_EQ(files, 1, "put back");
	names__free(n);
}

void test_departed(void)
{
	if (test__start_subtest("round_trip"))
		round_trip();
	if (test__start_subtest("malformed"))
		malformed();
	if (test__start_subtest("socket_files"))
		socket_files();
	if (test__start_subtest("malformed_socket_files"))
		malformed_files();
}
