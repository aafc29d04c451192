// SPDX-License-Identifier: GPL-2.0
/*
 * The test runner. Each test runs in a child process of its own process
 * group (a crash or a hang fails that test only, and whatever it started is
 * killed with it); its output is shown when it fails, or always with -v.
 * The last line is "N passed, N failed, N skipped".
 *
 *   test_progs [-v] [-g unit|bpf] [-t name[,name]] [-T seconds]
 */
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "harness.h"
#include "netns.h"
#include "test_progs.h"

#define DEFINE_TEST(name, group) void test_##name(void);
#include "tests.inc"
#undef DEFINE_TEST

struct test_def {
	const char *name;
	const char *group;
	void (*fn)(void);
};

static const struct test_def tests[] = {
#define DEFINE_TEST(name, group) { #name, group, test_##name },
#include "tests.inc"
#undef DEFINE_TEST
};

/* Shared with the child that runs a test. */
struct test_state {
	int failed;	 /* the current (sub)test failed */
	int test_failed; /* any failure in the test */
	int skipped;
	int subtests, sub_failed, sub_skipped;
	char skip_reason[256];
	char subtest[128];
	int sub_open;
	struct timespec sub_start; /* when the open subtest began */
	char stage_dir[128];	   /* test__stage_dir(), removed when the test ends */
	char cgroup[1100];	   /* test__cgroup(): the test's own, "" as a user */
};

static struct test_state *st;
static const char *cur_test;
static int verbose;
static char build_dir[PATH_MAX], top_dir[PATH_MAX];

const char *test__build_dir(void)
{
	return build_dir;
}

const char *test__top_dir(void)
{
	return top_dir;
}

/*
 * Made on first use, mode 0755 under /tmp, where any user can reach what the
 * test places in it (stage_for_user); the runner removes it when the test
 * ends, however it ends. Kept in the shared state, so one per test whatever
 * process of the test asks.
 */
const char *test__stage_dir(void)
{
	char dir[] = "/tmp/claimd-stage.XXXXXX";

	if (st->stage_dir[0])
		return st->stage_dir;
	if (!mkdtemp(dir) || chmod(dir, 0755)) {
		printf("stage directory %s: %s\n", dir, strerror(errno));
		rmdir(dir);
		return NULL;
	}
	snprintf(st->stage_dir, sizeof(st->stage_dir), "%s", dir);
	return st->stage_dir;
}

/*
 * Each test runs in a cgroup of its own (as root), made by the runner and
 * removed with whatever is left in it when the test ends: every process
 * the test starts is under it, and claimd_start makes claimd follow those
 * alone (--cgroup), so that its host-wide counters are the test's whatever
 * else runs on the host.
 */
const char *test__cgroup(void)
{
	return st->cgroup;
}

void test__fail(void)
{
	st->failed = 1;
	st->test_failed = 1;
}

bool test__failed_now(void)
{
	return st->test_failed;
}

void test__skip(const char *fmt, ...)
{
	va_list ap;

	st->skipped = 1;
	va_start(ap, fmt);
	vsnprintf(st->skip_reason, sizeof(st->skip_reason), fmt, ap);
	va_end(ap);
	printf("SKIP: %s\n", st->skip_reason);
}

bool test__need_root(void)
{
	const char *req = getenv("CLAIMD_REQUIRE_BPF");

	if (geteuid() == 0)
		return true;
	if (req && !strcmp(req, "1")) {
		printf("needs root, and CLAIMD_REQUIRE_BPF=1 forbids skipping\n");
		test__fail();
		return false;
	}
	test__skip("needs root (BPF programs, other processes' sockets)");
	return false;
}

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return seconds_between(start, &now);
}

static void end_subtest(void)
{
	if (!st->sub_open)
		return;
	printf("#%s/%s:%s (%.1fs)\n", cur_test, st->subtest,
	       st->failed    ? "FAIL"
	       : st->skipped ? "SKIP"
			     : "OK",
	       seconds_since(&st->sub_start));
	if (st->failed)
		st->sub_failed++;
	else if (st->skipped)
		st->sub_skipped++;
	st->sub_open = 0;
	fflush(stdout);
}

/* -t's list: test names, or test/subtest to run only those subtests of a test. */
static const char *names;

/*
 * Does -t select test (sub NULL: named alone or with any subtest of it),
 * or its subtest sub (yes unless -t names some of its subtests, test/sub,
 * and neither sub nor the test alone)? Everything, with no -t.
 */
static bool names_select(const char *test, const char *sub)
{
	char buf[1024], *tok, *save, *slash;
	bool some = false;

	if (!names)
		return true;
	snprintf(buf, sizeof(buf), "%s", names);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		slash = strchr(tok, '/');
		if (slash)
			*slash = '\0';
		if (strcmp(tok, test))
			continue;
		if (!slash || !sub || !strcmp(slash + 1, sub))
			return true;
		some = true;
	}
	return sub && !some;
}

bool test__start_subtest(const char *name)
{
	if (!names_select(cur_test, name))
		return false;
	end_subtest();
	st->subtests++;
	st->sub_open = 1;
	clock_gettime(CLOCK_MONOTONIC, &st->sub_start);
	st->failed = 0;
	st->skipped = 0;
	snprintf(st->subtest, sizeof(st->subtest), "%s", name);
	return true;
}

static bool selected(const struct test_def *t, const char *group)
{
	return (!group || !strcmp(group, t->group)) && names_select(t->name, NULL);
}

static void dump_file(int fd)
{
	char buf[4096];
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, n, stdout);
}

/*
 * A failed test's failing lines (its assertions, its failed subtests, a
 * timeout) and its explanations (test__why), said again just before the summary: a log read from its end
 * still names what failed.
 */
static char recap[16384];

#define WHY "why: "

void test__why(const char *fmt, ...)
{
	va_list ap;

	fputs(WHY, stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}
static size_t recap_len;

static void recap_add(const char *name, int fd)
{
	char line[512];
	FILE *f;
	int fdup = dup(fd);

	if (fdup < 0 || lseek(fdup, 0, SEEK_SET) < 0 || !(f = fdopen(fdup, "r"))) {
		if (fdup >= 0)
			close(fdup);
		return;
	}
	recap_len += snprintf(recap + recap_len, sizeof(recap) - recap_len, "%s:\n", name);
	while (recap_len < sizeof(recap) - 1 && fgets(line, sizeof(line), f))
		if (strstr(line, "FAIL") || strstr(line, "timed out") || strstr(line, "died") ||
		    !strncmp(line, WHY, strlen(WHY)))
			recap_len += snprintf(recap + recap_len, sizeof(recap) - recap_len,
					      "  %s%s", line, strchr(line, '\n') ? "" : "\n");
	if (recap_len >= sizeof(recap))
		recap_len = sizeof(recap) - 1;
	fclose(f);
}

/* Returns 0 passed, 1 failed, 2 skipped. */
static int run_one(const struct test_def *t, int timeout_s)
{
	char tmpl[] = "/tmp/claimd-test-out.XXXXXX";
	int out = mkstemp(tmpl), status = 0, result;
	struct test_cgroup own = { 0 };
	struct timespec t0, t1;
	pid_t pid;
	int waited = 0;

	unlink(tmpl);
	memset(st, 0, sizeof(*st));
	fflush(stdout);
	if (geteuid() == 0 && !test_cgroup_make(&own))
		snprintf(st->cgroup, sizeof(st->cgroup), "%s", own.dir);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		dup2(out, STDOUT_FILENO);
		dup2(out, STDERR_FILENO);
		setvbuf(stdout, NULL, _IOLBF, 0);
		if (st->cgroup[0] && test_cgroup_join(&own))
			st->cgroup[0] = 0;
		cur_test = t->name;
		t->fn();
		end_subtest();
		fflush(stdout);
		/* exit, not _exit: under SAN=1 LeakSanitizer checks at exit. */
		exit(0);
	}
	setpgid(pid, pid);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (waited++ >= timeout_s * 10) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			dprintf(out, "%s: timed out after %d s\n", t->name, timeout_s);
			st->test_failed = 1;
			break;
		}
		usleep(100000);
	}
	/* Anything the test left running goes with it, and what it staged. */
	kill(-pid, SIGKILL);
	test_cgroup_remove(&own);
	if (st->stage_dir[0])
		tmpdir_remove(st->stage_dir);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status))) {
		if (!st->test_failed)
			dprintf(out, "%s: test process died (%s %d)\n", t->name,
				WIFSIGNALED(status) ? "signal" : "exit",
				WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		st->test_failed = 1;
	}
	if (st->test_failed)
		result = 1;
	else if (st->skipped && !st->subtests)
		result = 2;
	else if (st->subtests && st->sub_skipped == st->subtests)
		result = 2;
	else
		result = 0;
	if (verbose || result == 1)
		dump_file(out);
	if (result == 1)
		recap_add(t->name, out);
	close(out);
	printf("#%-30s %s (%.1fs)%s%s\n", t->name,
	       result == 0   ? "OK"
	       : result == 1 ? "FAIL"
			     : "SKIP",
	       seconds_between(&t0, &t1), result == 2 ? ": " : "",
	       result == 2 ? st->skip_reason : "");
	fflush(stdout);
	return result;
}

static void find_dirs(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		snprintf(build_dir, sizeof(build_dir), "build");
		snprintf(top_dir, sizeof(top_dir), ".");
		return;
	}
	exe[n] = 0;
	snprintf(build_dir, sizeof(build_dir), "%s", dirname(exe));
	snprintf(exe, sizeof(exe), "%s", build_dir);
	snprintf(top_dir, sizeof(top_dir), "%s", dirname(exe));
}

int main(int argc, char **argv)
{
	const char *group = NULL;
	int timeout_s = 600, counts[3] = { 0 }, opt;
	size_t i;

	while ((opt = getopt(argc, argv, "vg:t:T:")) != -1) {
		switch (opt) {
		case 'v':
			verbose = 1;
			break;
		case 'g':
			group = optarg;
			break;
		case 't':
			names = optarg;
			break;
		case 'T':
			timeout_s = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-v] [-g unit|bpf] [-t name[/subtest],...] [-T s]\n",
				argv[0]);
			return 2;
		}
	}
	find_dirs();
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	if (geteuid() == 0) {
		/* What killed runs left: pins, cgroups, network namespaces. */
		stale_pins_remove();
		test_cgroup_stale_remove();
		netns_stale_remove();
	}
	/* Unit tests first, then the BPF and end-to-end ones. */
	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
			const struct test_def *t = &tests[i];

			if ((pass == 0) != !strcmp(t->group, "unit"))
				continue;
			if (selected(t, group))
				counts[run_one(t, timeout_s)]++;
		}
	}
	if (recap_len)
		printf("---- what failed ----\n%s", recap);
	printf("%d passed, %d failed, %d skipped\n", counts[0], counts[1], counts[2]);
	return counts[1] ? 1 : 0;
}
