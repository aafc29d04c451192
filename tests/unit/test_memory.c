// SPDX-License-Identifier: GPL-2.0
/*
 * The edge memory's file (user/claimd/model/memory.c): memory__parse takes a valid file
 * and refuses, with a reason and without changing anything in the edges,
 * every truncation of one, other formats and versions, a missing or
 * non-array "edges", malformed edges (missing fields, strings where numbers
 * go, negative, NaN, infinite or out-of-range numbers, both_failed above
 * callee_failures) even next to good ones, and trailing garbage. Then, in a
 * temporary directory: memory__save and memory__load give back the same
 * values; the file is replaced atomically (no temporary file left, mode
 * 0600); a corrupt file is moved aside and claimd starts empty; no file
 * means no edges.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/memory.h"
#include "test_progs.h"

#define WALL ((time_t)1700000000)

#define HEAD "{\"format\":\"claimd-memory\",\"version\":1,\"edges\":"
#define GOOD_EDGE                                                                       \
	"{\"caller\":\"pre\",\"callee\":\"post\",\"calls\":100,\"callee_failures\":50," \
	"\"both_failed\":40,\"updated_unix\":1700000000}"

static const struct edges_config cfg = {
	.window_s = 100,
	.memory_half_life_s = 1000,
	.min_failures = 20,
	.fail_status = 500,
	.use_memory = true,
};

static const char valid[] =
	"{\"format\":\"claimd-memory\",\"version\":1,\"saved_unix\":1700000000,"
	"\"half_life_s\":1209600.0,\"edges\":["
	"{\"caller\":\"a\",\"callee\":\"b\",\"calls\":30,\"callee_failures\":20.5,"
	"\"both_failed\":18.25,\"updated_unix\":1699999000},"
	"{\"caller\":\"a\",\"callee\":\"c\",\"calls\":5.0,\"callee_failures\":0,"
	"\"both_failed\":0,\"updated_unix\":1700000000,\"note\":\"extra fields are fine\"}]}";

static void count_edge(struct edge *ed, void *ctx)
{
	(void)ed;
	++*(int *)ctx;
}

static int n_edges(const struct edges *e)
{
	int n = 0;

	edges__for_each(e, count_edge, &n);
	return n;
}

/* An edges with one edge pre -> post remembered: 9 calls, 7, 3, at 123. */
static struct edges *edges_with_one(void)
{
	struct edges *e = edges__new(&cfg);
	struct edge *ed;

	if (!e)
		return NULL;
	ed = edges__get(e, "pre", "post");
	if (!ed) {
		edges__free(e);
		return NULL;
	}
	ed->memory.calls = 9;
	ed->memory.callee_failures = 7;
	ed->memory.both_failed = 3;
	ed->memory.updated = 123;
	ed->in_memory = true;
	return e;
}

/* pre -> post still as edges_with_one() made it. */
static bool pre_intact(struct edges *e, const char *what)
{
	struct edge *ed = edges__find(e, "pre", "post");
	bool ok = true;

	if (!ASSERT_OK_PTR(ed, what))
		return false;
	ok &= ASSERT_FLOAT_NEAR(ed->memory.calls, 9, 0, what);
	ok &= ASSERT_FLOAT_NEAR(ed->memory.callee_failures, 7, 0, what);
	ok &= ASSERT_FLOAT_NEAR(ed->memory.both_failed, 3, 0, what);
	ok &= ASSERT_EQ(ed->memory.updated, 123, what);
	ok &= ASSERT_TRUE(ed->in_memory, what);
	return ok;
}

/* Nothing changed: still the one edge, as it was. */
static bool unchanged(struct edges *e, const char *what)
{
	bool ok = ASSERT_EQ(n_edges(e), 1, what);

	return pre_intact(e, what) && ok;
}

/* Parses text, which must be refused with a reason and change nothing. */
static void refused(struct edges *e, const char *text, size_t len, const char *what)
{
	char why[160] = "";

	if (!ASSERT_EQ(memory__parse(e, text, len, why, sizeof(why)), -1, what))
		printf("  accepted: %.*s\n", (int)len, text);
	ASSERT_GT(strlen(why), 0, "reason given");
	unchanged(e, what);
}

static void test_parse_valid(void)
{
	struct edges *e = edges_with_one();
	char why[160] = "";
	struct edge *ab, *ac;

	if (!ASSERT_OK_PTR(e, "edges"))
		return;
	ASSERT_EQ(memory__parse(e, valid, sizeof(valid) - 1, why, sizeof(why)), 2, "two edges");
	ASSERT_EQ(n_edges(e), 3, "added to what was there");
	pre_intact(e, "other edge kept");
	ab = edges__find(e, "a", "b");
	ac = edges__find(e, "a", "c");
	if (ASSERT_OK_PTR(ab, "a -> b")) {
		ASSERT_TRUE(ab->in_memory, "in memory");
		ASSERT_FLOAT_NEAR(ab->memory.calls, 30, 0, "calls");
		ASSERT_FLOAT_NEAR(ab->memory.callee_failures, 20.5, 0, "callee_failures");
		ASSERT_FLOAT_NEAR(ab->memory.both_failed, 18.25, 0, "both_failed");
		ASSERT_EQ(ab->memory.updated, 1699999000, "updated");
		ASSERT_EQ(ab->total.calls, 0, "memory only, no totals");
	}
	if (ASSERT_OK_PTR(ac, "a -> c")) {
		ASSERT_FLOAT_NEAR(ac->memory.calls, 5, 0, "calls");
		ASSERT_FLOAT_NEAR(ac->memory.callee_failures, 0, 0, "callee_failures");
		ASSERT_EQ(ac->memory.updated, 1700000000, "updated");
	}
	edges__free(e);

	/* An existing edge takes the file's values; trailing newlines are fine. */
	e = edges_with_one();
	if (ASSERT_OK_PTR(e, "edges")) {
		static const char over[] = HEAD "[" GOOD_EDGE "]}\n\n";
		struct edge *ed;

		ASSERT_EQ(memory__parse(e, over, sizeof(over) - 1, why, sizeof(why)), 1, "one");
		ed = edges__find(e, "pre", "post");
		if (ASSERT_OK_PTR(ed, "pre -> post")) {
			ASSERT_FLOAT_NEAR(ed->memory.callee_failures, 50, 0, "replaced");
			ASSERT_EQ(ed->memory.updated, 1700000000, "replaced updated");
		}
		ASSERT_EQ(n_edges(e), 1, "no new edge");
		ASSERT_EQ(memory__parse(e, HEAD "[]}", strlen(HEAD "[]}"), why, sizeof(why)), 0,
			  "no edges");
		ASSERT_EQ(n_edges(e), 1, "still one edge");
		edges__free(e);
	}
}

static const char *const keys[] = {
	"caller", "callee", "calls", "callee_failures", "both_failed", "updated_unix",
};
static const char *const good_vals[] = {
	"\"p\"", "\"q\"", "3", "2", "1", "1700000000",
};

/* An edge p -> q, with key set to val (left out when val is NULL). */
static void edge_text(char *buf, size_t len, const char *key, const char *val)
{
	size_t i, off = 0;
	bool first = true;

	off += snprintf(buf + off, len - off, "{");
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = strcmp(keys[i], key) ? good_vals[i] : val;

		if (!v)
			continue;
		off += snprintf(buf + off, len - off, "%s\"%s\":%s", first ? "" : ",", keys[i], v);
		first = false;
	}
	snprintf(buf + off, len - off, "}");
}

static void test_parse_bad_edges(void)
{
	static const char *const number_vals[] = {
		NULL,	 "-1",	    "-0.5", "NaN",  "-NaN",  "Infinity", "-Infinity", "1e400",
		"\"5\"", "\"1e3\"", "null", "true", "false", "[]",	 "{}",
	};
	static const char *const string_vals[] = { NULL, "\"\"", "5", "null", "true", "[\"p\"]" };
	struct edges *e = edges_with_one();
	char edge[512], doc[1024], what[160], longname[260];
	size_t k, v;

	if (!ASSERT_OK_PTR(e, "edges"))
		return;
	memset(longname, 'n', sizeof(longname));
	longname[0] = '"';
	longname[202] = '"';
	longname[203] = 0; /* 201 characters */
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		bool is_str = k < 2;
		size_t nv = is_str ? sizeof(string_vals) / sizeof(string_vals[0]) + 1
				   : sizeof(number_vals) / sizeof(number_vals[0]);

		for (v = 0; v < nv; v++) {
			const char *val =
				is_str ? (v < nv - 1 ? string_vals[v] : longname) : number_vals[v];

			edge_text(edge, sizeof(edge), keys[k], val);
			snprintf(what, sizeof(what), "%s: %.40s", keys[k], val ? val : "missing");
			snprintf(doc, sizeof(doc), HEAD "[%s]}", edge);
			refused(e, doc, strlen(doc), what);
			/* Next to a good edge, before or after it. */
			snprintf(doc, sizeof(doc), HEAD "[" GOOD_EDGE ",%s]}", edge);
			refused(e, doc, strlen(doc), what);
			snprintf(doc, sizeof(doc), HEAD "[%s," GOOD_EDGE "]}", edge);
			refused(e, doc, strlen(doc), what);
		}
	}
	/* The good values themselves make a good edge (the cases above are fair). */
	edge_text(edge, sizeof(edge), "", NULL);
	snprintf(doc, sizeof(doc), HEAD "[%s]}", edge);
	{
		char why[160];
		struct edges *f = edges__new(&cfg);

		if (ASSERT_OK_PTR(f, "edges__new")) {
			ASSERT_EQ(memory__parse(f, doc, strlen(doc), why, sizeof(why)), 1,
				  "control edge");
			ASSERT_OK_PTR(edges__find(f, "p", "q"), "control edge found");
			edges__free(f);
		}
	}

	refused(e,
		HEAD "[" GOOD_EDGE ",{\"caller\":\"p\",\"callee\":\"q\",\"calls\":3,"
		     "\"callee_failures\":2,\"both_failed\":3,\"updated_unix\":1}]}",
		strlen(HEAD "[" GOOD_EDGE ",{\"caller\":\"p\",\"callee\":\"q\",\"calls\":3,"
			    "\"callee_failures\":2,\"both_failed\":3,\"updated_unix\":1}]}"),
		"both_failed > callee_failures");
	refused(e,
		HEAD "[{\"caller\":\"p\",\"callee\":\"q\",\"calls\":3,"
		     "\"callee_failures\":2,\"both_failed\":1,\"updated_unix\":1e300}]}",
		strlen(HEAD "[{\"caller\":\"p\",\"callee\":\"q\",\"calls\":3,"
			    "\"callee_failures\":2,\"both_failed\":1,\"updated_unix\":1e300}]}"),
		"updated_unix beyond time_t");
	refused(e, HEAD "[" GOOD_EDGE ",5]}", strlen(HEAD "[" GOOD_EDGE ",5]}"),
		"edge not an object");
	refused(e, HEAD "[" GOOD_EDGE ",null]}", strlen(HEAD "[" GOOD_EDGE ",null]}"), "edge null");
	refused(e, HEAD "[[" GOOD_EDGE "]]}", strlen(HEAD "[[" GOOD_EDGE "]]}"), "nested list");
	edges__free(e);
}

static void test_parse_bad_docs(void)
{
	static const char *const bad[] = {
		"",
		" ",
		"hello",
		"null",
		"42",
		"\"claimd-memory\"",
		"[" GOOD_EDGE "]",
		"{}",
		/* format */
		"{\"version\":1,\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":\"claimd-memoryX\",\"version\":1,\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":\"Claimd-Memory\",\"version\":1,\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":\"\",\"version\":1,\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":5,\"version\":1,\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":null,\"version\":1,\"edges\":[" GOOD_EDGE "]}",
		/* version */
		"{\"format\":\"claimd-memory\",\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":\"claimd-memory\",\"version\":2,\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":\"claimd-memory\",\"version\":0,\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":\"claimd-memory\",\"version\":-1,\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":\"claimd-memory\",\"version\":4294967297,\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":\"claimd-memory\",\"version\":null,\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":\"claimd-memory\",\"version\":\"1\",\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":\"claimd-memory\",\"version\":true,\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":\"claimd-memory\",\"version\":1.5,\"edges\":[" GOOD_EDGE "]}",
		"{\"format\":\"claimd-memory\",\"version\":[1],\"edges\":[" GOOD_EDGE "]}",
		/* edges */
		"{\"format\":\"claimd-memory\",\"version\":1}",
		HEAD "null}",
		HEAD "5}",
		HEAD "\"[]\"}",
		HEAD GOOD_EDGE "}",
		HEAD "{\"0\":" GOOD_EDGE "}}",
		/* trailing garbage */
		HEAD "[" GOOD_EDGE "]}x",
		HEAD "[" GOOD_EDGE "]}\n{}",
		HEAD "[" GOOD_EDGE "]}" HEAD "[]}",
		HEAD "[" GOOD_EDGE "]}]",
	};
	struct edges *e = edges_with_one();
	size_t i;

	if (!ASSERT_OK_PTR(e, "edges"))
		return;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused(e, bad[i], strlen(bad[i]), bad[i]);
	/* A NUL byte after a good document, and one inside it. */
	refused(e, HEAD "[" GOOD_EDGE "]}\0x", sizeof(HEAD "[" GOOD_EDGE "]}\0x") - 1,
		"NUL then garbage");
	/* Every truncation of a good document. */
	for (i = 0; i < sizeof(valid) - 1; i++) {
		char what[48];
		char why[160] = "";
		int r = memory__parse(e, valid, i, why, sizeof(why));

		snprintf(what, sizeof(what), "truncated to %zu bytes", i);
		if (r != -1 || !why[0]) {
			ASSERT_EQ(r, -1, what);
			break;
		}
		if (!unchanged(e, what))
			break;
	}
	ASSERT_EQ(i, sizeof(valid) - 1, "all truncations refused");
	edges__free(e);
}

static char tmpdir[64];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static bool make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/claimd-memtest.XXXXXX");
	return ASSERT_OK_PTR(mkdtemp(tmpdir), "mkdtemp");
}

static void remove_tmpdir(void)
{
	if (tmpdir[0])
		ASSERT_OK(nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS), "remove tmpdir");
	tmpdir[0] = 0;
}

/* Entries of dir; the name of the last one in only. */
static int count_dir_entries(const char *dir, char *only, size_t len)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (only)
			snprintf(only, len, "%s", de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static bool exists(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

static int write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[512];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	return ok ? 0 : -1;
}

struct remembered {
	const char *caller, *callee;
	double calls, cf, bf;
	time_t updated;
};

static const struct remembered saved[] = {
	{ "front:9000", "192.0.2.10:80", 1000000.1, 20.123456789012345, 3.3333333333333335,
	  WALL - 500 },
	{ "front:9000", "db:5432", 7, 0, 0, WALL },
	{ "[svc with spaces]", "\"quoted\"\\callee", 1e-300, 1e-300, 0, WALL - 1 },
};

static void test_round_trip(void)
{
	struct edges *a = edges__new(&cfg), *b = edges__new(&cfg);
	struct memory_load out;
	char only[256], sub[128];
	struct stat st;
	size_t i;

	if (!ASSERT_OK_PTR(a, "edges a") || !ASSERT_OK_PTR(b, "edges b") || !make_tmpdir())
		goto out;
	for (i = 0; i < sizeof(saved) / sizeof(saved[0]); i++) {
		struct edge *ed = edges__get(a, saved[i].caller, saved[i].callee);

		if (!ASSERT_OK_PTR(ed, "edges__get"))
			goto out;
		ed->memory.calls = saved[i].calls;
		ed->memory.callee_failures = saved[i].cf;
		ed->memory.both_failed = saved[i].bf;
		ed->memory.updated = saved[i].updated;
		ed->in_memory = true;
	}
	/* An edge with nothing remembered is not saved. */
	ASSERT_OK_PTR(edges__get(a, "front:9000", "nothing"), "edge without memory");

	ASSERT_OK(memory__save(a, tmpdir, WALL), "save");
	ASSERT_EQ(count_dir_entries(tmpdir, only, sizeof(only)), 1, "one file in the directory");
	ASSERT_STREQ(only, MEMORY_FILE, "memory.json");
	ASSERT_FALSE(exists(tmpdir, MEMORY_FILE ".tmp"), "no temporary file left");
	snprintf(sub, sizeof(sub), "%s/%s", tmpdir, MEMORY_FILE);
	if (ASSERT_OK(stat(sub, &st), "stat"))
		ASSERT_EQ(st.st_mode & 0777, 0600, "mode 0600");

	ASSERT_OK(memory__load(b, tmpdir, WALL + 5, &out), "load");
	ASSERT_EQ(out.edges, 3, "three edges loaded");
	ASSERT_EQ(out.corrupt, 0, "not corrupt");
	ASSERT_EQ(n_edges(b), 3, "three edges in b");
	ASSERT_TRUE(edges__find(b, "front:9000", "nothing") == NULL, "memoryless edge not saved");
	for (i = 0; i < sizeof(saved) / sizeof(saved[0]); i++) {
		struct edge *ea = edges__find(a, saved[i].caller, saved[i].callee);
		struct edge *eb = edges__find(b, saved[i].caller, saved[i].callee);
		struct edge_memory want;

		if (!ASSERT_OK_PTR(eb, saved[i].callee) || !ea)
			continue;
		/* Saved as of WALL: decayed to then. */
		want = edges__memory_at(a, ea, WALL);
		ASSERT_TRUE(eb->in_memory, "in memory");
		ASSERT_TRUE(eb->memory.calls == want.calls, "calls exactly");
		ASSERT_TRUE(eb->memory.callee_failures == want.callee_failures,
			    "callee_failures exactly");
		ASSERT_TRUE(eb->memory.both_failed == want.both_failed, "both_failed exactly");
		ASSERT_EQ(eb->memory.updated, WALL, "updated is the save time");
		if (i == 0)
			ASSERT_FLOAT_NEAR(eb->memory.callee_failures, 20.123456789012345 / sqrt(2),
					  1e-9, "decayed by half a half-life");
	}

	/* Saving again replaces the file. */
	if (!ASSERT_OK_PTR(edges__find(a, "front:9000", "db:5432"), "db edge in a"))
		goto out;
	edges__find(a, "front:9000", "db:5432")->memory.calls = 8;
	ASSERT_OK(memory__save(a, tmpdir, WALL), "save again");
	ASSERT_EQ(count_dir_entries(tmpdir, NULL, 0), 1, "still one file");
	edges__free(b);
	b = edges__new(&cfg);
	if (ASSERT_OK_PTR(b, "edges b again")) {
		ASSERT_OK(memory__load(b, tmpdir, WALL, &out), "load again");
		ASSERT_EQ(out.edges, 3, "three edges");
		if (ASSERT_OK_PTR(edges__find(b, "front:9000", "db:5432"), "db edge"))
			ASSERT_FLOAT_NEAR(edges__find(b, "front:9000", "db:5432")->memory.calls, 8,
					  0, "new value");
	}

	/* A state directory that does not exist yet is made (0700). */
	snprintf(sub, sizeof(sub), "%s/state", tmpdir);
	ASSERT_OK(memory__save(a, sub, WALL), "save into a new directory");
	if (ASSERT_OK(stat(sub, &st), "state dir made"))
		ASSERT_EQ(st.st_mode & 0777, 0700, "mode 0700");
	ASSERT_TRUE(exists(sub, MEMORY_FILE), "file in the new directory");
	snprintf(sub, sizeof(sub), "%s/no/such/dir", tmpdir);
	ASSERT_LT(memory__save(a, sub, WALL), 0, "parent missing: error");
out:
	remove_tmpdir();
	edges__free(a);
	edges__free(b);
}

static void test_load_corrupt(void)
{
	static const char broken[] = HEAD "[" GOOD_EDGE ",{\"caller\":";
	struct edges *e = edges__new(&cfg);
	struct memory_load out;
	char want[512], text[256];
	int fd;
	ssize_t n;

	if (!ASSERT_OK_PTR(e, "edges") || !make_tmpdir())
		goto out;
	if (!ASSERT_OK(write_file(tmpdir, MEMORY_FILE, broken, sizeof(broken) - 1), "write"))
		goto out;
	memset(&out, 0xff, sizeof(out));
	ASSERT_OK(memory__load(e, tmpdir, 12345, &out), "corrupt is not an error");
	ASSERT_EQ(out.corrupt, 1, "corrupt");
	ASSERT_EQ(out.edges, 0, "no edges");
	ASSERT_GT(strlen(out.why), 0, "reason given");
	snprintf(want, sizeof(want), "%s/%s.corrupt-12345", tmpdir, MEMORY_FILE);
	ASSERT_STREQ(out.moved_to, want, "moved_to");
	ASSERT_TRUE(exists(tmpdir, MEMORY_FILE ".corrupt-12345"), "moved file exists");
	ASSERT_FALSE(exists(tmpdir, MEMORY_FILE), "memory.json gone");
	ASSERT_EQ(n_edges(e), 0, "nothing loaded");
	/* Kept as it was, for a human. */
	fd = open(want, O_RDONLY | O_CLOEXEC);
	if (ASSERT_GE(fd, 0, "open moved file")) {
		n = read(fd, text, sizeof(text));
		close(fd);
		ASSERT_EQ(n, sizeof(broken) - 1, "same size");
		ASSERT_TRUE(n > 0 && !memcmp(text, broken, n), "same bytes");
	}
	/* Now there is no file: an empty start. */
	ASSERT_OK(memory__load(e, tmpdir, 12346, &out), "load after");
	ASSERT_EQ(out.corrupt, 0, "no file, not corrupt");
	ASSERT_EQ(out.edges, 0, "no edges");

	/* An empty file is corrupt too. */
	ASSERT_OK(write_file(tmpdir, MEMORY_FILE, "", 0), "write empty");
	ASSERT_OK(memory__load(e, tmpdir, 12347, &out), "load empty");
	ASSERT_EQ(out.corrupt, 1, "empty is corrupt");
	ASSERT_TRUE(exists(tmpdir, MEMORY_FILE ".corrupt-12347"), "moved");
	ASSERT_EQ(count_dir_entries(tmpdir, NULL, 0), 2, "two moved files");
out:
	remove_tmpdir();
	edges__free(e);
}

static void test_load_missing(void)
{
	struct edges *e = edges__new(&cfg);
	struct memory_load out;
	char path[128];

	if (!ASSERT_OK_PTR(e, "edges") || !make_tmpdir())
		goto out;
	memset(&out, 0xff, sizeof(out));
	ASSERT_OK(memory__load(e, tmpdir, WALL, &out), "no file");
	ASSERT_EQ(out.edges, 0, "no edges");
	ASSERT_EQ(out.corrupt, 0, "not corrupt");
	ASSERT_EQ(n_edges(e), 0, "nothing loaded");
	snprintf(path, sizeof(path), "%s/missing", tmpdir);
	ASSERT_OK(memory__load(e, path, WALL, &out), "no directory");
	ASSERT_EQ(out.edges, 0, "no edges");
	/* Something that cannot be read is an error, and is left alone. */
	snprintf(path, sizeof(path), "%s/%s", tmpdir, MEMORY_FILE);
	if (ASSERT_OK(mkdir(path, 0700), "mkdir memory.json")) {
		ASSERT_EQ(memory__load(e, tmpdir, WALL, &out), -1, "a directory: error");
		ASSERT_TRUE(exists(tmpdir, MEMORY_FILE), "not moved");
	}
	/* A good file loads. */
	if (ASSERT_OK(rmdir(path), "rmdir") &&
	    ASSERT_OK(write_file(tmpdir, MEMORY_FILE, valid, sizeof(valid) - 1), "write")) {
		ASSERT_OK(memory__load(e, tmpdir, WALL, &out), "good file");
		ASSERT_EQ(out.edges, 2, "two edges");
		ASSERT_EQ(out.corrupt, 0, "not corrupt");
		ASSERT_TRUE(exists(tmpdir, MEMORY_FILE), "left in place");
	}
out:
	remove_tmpdir();
	edges__free(e);
}

void test_memory_file(void)
{
	if (test__start_subtest("parse_valid"))
		test_parse_valid();
	if (test__start_subtest("parse_bad_edges"))
		test_parse_bad_edges();
	if (test__start_subtest("parse_bad_docs"))
		test_parse_bad_docs();
	if (test__start_subtest("save_load_round_trip"))
		test_round_trip();
	if (test__start_subtest("load_corrupt"))
		test_load_corrupt();
	if (test__start_subtest("load_missing"))
		test_load_missing();
}
