// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzers of tests/fuzz, a short bounded pass each: every libFuzzer
 * target runs for a few seconds from its committed seed corpus (new inputs
 * go to a temporary directory, crashes there too) and must exit 0 having
 * run inputs. They run side by side, so the pass costs a few seconds in
 * all; 'make fuzz' runs them longer. The targets are built with ASan and
 * UBSan, so an out-of-bounds read, a leak or undefined behaviour is a
 * failure here, as is a broken invariant (the targets abort on those).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "test_progs.h"

#define FUZZ_SECONDS "3"
#define N_TARGETS    9

static const char *const targets[N_TARGETS] = { "http",	 "record", "memory", "names", "ctlproto",
						"fleet", "resp",   "pg",     "mysql" };

struct run {
	pid_t pid;
	char bin[H_PATH];
	char log[H_PATH];
};

static pid_t start(struct run *r, const char *target, const char *dir)
{
	char seeds[H_PATH], corpus[H_PATH], artifacts[H_PATH + 32];
	const char *argv[] = { r->bin,
			       "-max_total_time=" FUZZ_SECONDS,
			       "-timeout=10",
			       "-rss_limit_mb=1024",
			       "-print_final_stats=1",
			       "-verbosity=0",
			       artifacts,
			       corpus,
			       seeds,
			       NULL };

	snprintf(r->bin, sizeof(r->bin), "%s/fuzz/fuzz_%s", test__build_dir(), target);
	snprintf(seeds, sizeof(seeds), "%s/tests/fuzz/corpus/%s", test__top_dir(), target);
	snprintf(corpus, sizeof(corpus), "%s/corpus-%s", dir, target);
	snprintf(artifacts, sizeof(artifacts), "-artifact_prefix=%s/%s-", dir, target);
	snprintf(r->log, sizeof(r->log), "%s/%s.log", dir, target);
	if (access(r->bin, X_OK))
		return -1;
	mkdir(corpus, 0700);
	return proc_spawn(argv, NULL, r->log);
}

static void check(const struct run *r, const char *target)
{
	static char out[1 << 20];
	const char *units;
	int status;

	if (!ASSERT_GT(r->pid, 0, "fuzzer built (make builds it) and started"))
		return;
	status = proc_wait(r->pid, 60000);
	if (status == -1)
		proc_stop(r->pid, 1000);
	if (read_file(r->log, out, sizeof(out)) < 0)
		out[0] = 0;
	units = strstr(out, "stat::number_of_executed_units:");
	if (!ASSERT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
			 "fuzzer exits 0") ||
	    !ASSERT_OK_PTR(units, "final stats")) {
		size_t n = strlen(out);

		printf("---- fuzz_%s output (last 4 KiB) ----\n%s\n", target,
		       n > 4096 ? out + n - 4096 : out);
		return;
	}
	printf("fuzz_%s: %ld inputs in " FUZZ_SECONDS " s\n", target,
	       atol(units + strlen("stat::number_of_executed_units:")));
	ASSERT_GT(atol(units + strlen("stat::number_of_executed_units:")), 100, "inputs run");
}

void test_fuzz(void)
{
	struct run runs[N_TARGETS];
	char dir[H_DIR];
	int i;

	if (!ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "tmpdir"))
		return;
	for (i = 0; i < N_TARGETS; i++)
		runs[i].pid = start(&runs[i], targets[i], dir);
	for (i = 0; i < N_TARGETS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "fuzz_%s", targets[i]);
		if (test__start_subtest(name))
			check(&runs[i], targets[i]);
	}
	tmpdir_remove(dir);
}
