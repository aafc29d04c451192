// SPDX-License-Identifier: GPL-2.0
/*
 * claimd's host checks (user/claimd/host/sysprobe.c) on hosts this machine is not:
 * the paths point at missing files and the kernel's answers are faked, and
 * each missing piece must be refused with a sentence that says what to do
 * (not root, no BTF, bpffs or tracefs not mounted, no TCP tracepoints,
 * each BPF program type, map and helper, lockdown forbidding kernel reads),
 * except uprobes, without which claimd runs in a stated degraded mode.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "log.h"
#include "host/sysprobe.h"
#include "test_progs.h"

struct fake {
	int missing; /* a feature the fake kernel lacks, or -1 */
};

static int fake_feature(enum sysprobe_feature f, void *ctx)
{
	const struct fake *k = ctx;

	return (int)f != k->missing;
}

/* This host's paths, never mounting anything; the kernel answers from k. */
static struct sysprobe_env host_env(struct fake *k)
{
	struct sysprobe_env env = {
		.btf = "/sys/kernel/btf/vmlinux",
		.bpffs = "/sys/fs/bpf",
		.tracefs = "/sys/kernel/tracing",
		.lockdown = "/nonexistent/lockdown",
		.no_mount = true,
		.euid = 0,
		.feature = fake_feature,
		.ctx = k,
	};

	return env;
}

static bool says(const struct sysprobe *p, const char *text, const char *what)
{
	bool ok = strstr(p->report, text) != NULL;

	if (!ok)
		printf("%s: report lacks \"%s\":\n%s", what, text, p->report);
	return ASSERT_TRUE(ok, what);
}

void test_sysprobe(void)
{
	static const struct {
		enum sysprobe_feature f;
		const char *name, *text;
	} features[] = {
		{ SYSPROBE_PROG_TRACEPOINT, "tracepoint", "does not load tracepoint BPF programs" },
		{ SYSPROBE_PROG_RAW_TP, "raw_tp", "does not load raw tracepoint BPF programs" },
		{ SYSPROBE_MAP_RINGBUF, "ringbuf", "no BPF ring buffer (Linux 5.8 or later" },
		{ SYSPROBE_HELPER_LOOP, "bpf_loop", "bpf_loop helper (Linux 5.17 or later" },
		{ SYSPROBE_HELPER_TASK_PT_REGS, "task_pt_regs", "bpf_task_pt_regs" },
		{ SYSPROBE_HELPER_READ_KERNEL, "read_kernel", "may not read kernel memory" },
		{ SYSPROBE_HELPER_READ_USER, "read_user", "may not read user memory" },
		{ SYSPROBE_INSN_MAY_GOTO, "may_goto", "may_goto instruction (Linux 6.9 or later" },
	};
	struct fake k = { .missing = -1 };
	struct sysprobe_env env;
	struct sysprobe p;
	char dir[H_DIR], path[H_PATH], bpffs[H_PATH], tracefs[H_PATH], msg[3 * H_PATH];
	int base;
	size_t i;

	if (!ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "tmpdir"))
		return;
	log_set_level(LOG_ERROR); /* the messages are checked in p.report */
	/* This host as it is, every feature there: the baseline. */
	env = host_env(&k);
	base = sysprobe__check(&env, &p);
	printf("this host: %s (%s)\n", base ? "cannot run claimd" : "runs claimd",
	       p.report[0] ? p.report : "no complaints\n");

	if (test__start_subtest("not_root")) {
		env = host_env(&k);
		env.euid = 65534;
		ASSERT_EQ(sysprobe__check(&env, &p), -1, "refused");
		ASSERT_FALSE(p.root, "not root");
		says(&p, "claimd must run as root", "message");
		says(&p, "CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN", "what it needs");
	}
	if (test__start_subtest("no_btf")) {
		env = host_env(&k);
		snprintf(path, sizeof(path), "%s/vmlinux", dir);
		env.btf = path;
		ASSERT_EQ(sysprobe__check(&env, &p), -1, "refused");
		ASSERT_FALSE(p.btf, "no BTF");
		says(&p, "exposes no BTF", "message");
		says(&p, "CONFIG_DEBUG_INFO_BTF=y", "what to do");
	}
	if (test__start_subtest("no_bpffs_no_tracefs")) {
		env = host_env(&k);
		snprintf(bpffs, sizeof(bpffs), "%s/bpf", dir);
		snprintf(tracefs, sizeof(tracefs), "%s/tracing", dir);
		env.bpffs = bpffs;
		env.tracefs = tracefs;
		ASSERT_EQ(sysprobe__check(&env, &p), -1, "refused");
		ASSERT_FALSE(p.bpffs, "no bpffs");
		ASSERT_FALSE(p.tracefs, "no tracefs");
		snprintf(msg, sizeof(msg),
			 "bpf is not mounted on %s: mount it (mount -t bpf bpf %s)", bpffs, bpffs);
		says(&p, msg, "bpffs message");
		snprintf(msg, sizeof(msg), "tracefs is not mounted on %s", tracefs);
		says(&p, msg, "tracefs message");
	}
	if (test__start_subtest("no_tcp_tracepoints")) {
		env = host_env(&k);
		snprintf(path, sizeof(path), "%s/events/tcp", dir);
		env.tcp = path;
		ASSERT_EQ(sysprobe__check(&env, &p), -1, "refused");
		ASSERT_FALSE(p.tcp_tracepoints, "no TCP tracepoints");
		/* Said only when tracefs itself is there, as on this host. */
		if (p.tracefs)
			says(&p, "no tcp_destroy_sock", "message");
	}
	if (test__start_subtest("no_sock_tracepoints")) {
		env = host_env(&k);
		snprintf(path, sizeof(path), "%s/events/sock", dir);
		env.sock = path;
		ASSERT_EQ(sysprobe__check(&env, &p), -1, "refused");
		ASSERT_FALSE(p.sock_tracepoints, "no socket tracepoints");
		if (p.tracefs)
			says(&p, "Linux 6.3 or later", "message");
	}
	for (i = 0; i < sizeof(features) / sizeof(features[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "missing_%s", features[i].name);
		if (!test__start_subtest(name))
			continue;
		k.missing = features[i].f;
		env = host_env(&k);
		ASSERT_EQ(sysprobe__check(&env, &p), -1, sysprobe__feature_name(features[i].f));
		ASSERT_FALSE(p.has[features[i].f], "feature missing");
		says(&p, features[i].text, sysprobe__feature_name(features[i].f));
		k.missing = -1;
	}
	if (test__start_subtest("lockdown_confidentiality")) {
		snprintf(path, sizeof(path), "%s/lockdown", dir);
		write_file(path, "none integrity [confidentiality]\n");
		k.missing = SYSPROBE_HELPER_READ_KERNEL;
		env = host_env(&k);
		env.lockdown = path;
		ASSERT_EQ(sysprobe__check(&env, &p), -1, "refused");
		ASSERT_STREQ(p.lockdown, "confidentiality", "lockdown read");
		says(&p, "kernel lockdown is 'confidentiality'", "message");
		says(&p, "boot with lockdown=integrity", "what to do");
		/* Integrity allows what claimd needs. */
		write_file(path, "none [integrity] confidentiality\n");
		k.missing = -1;
		ASSERT_EQ(sysprobe__check(&env, &p), base, "integrity: as this host");
		ASSERT_STREQ(p.lockdown, "integrity", "lockdown read");
	}
	if (test__start_subtest("no_uprobes_degraded")) {
		k.missing = SYSPROBE_PROG_UPROBE;
		env = host_env(&k);
		ASSERT_EQ(sysprobe__check(&env, &p), base, "runs when the rest is there");
		ASSERT_FALSE(p.uprobes, "no uprobes");
		if (!base) {
			ASSERT_TRUE(p.degraded, "degraded");
			says(&p, "degraded: the kernel does not load uprobe BPF programs",
			     "message");
			says(&p, "TLS traffic", "what is lost");
		}
		k.missing = -1;
	}
	if (test__start_subtest("no_untyped_cast_runs")) {
		/* Only slower without it: the filter reads a socket's fields one by one. */
		k.missing = SYSPROBE_KFUNC_UNTYPED_CAST;
		env = host_env(&k);
		ASSERT_EQ(sysprobe__check(&env, &p), base, "runs when the rest is there");
		ASSERT_FALSE(p.untyped_cast, "no cast to no type");
		if (!base) {
			ASSERT_FALSE(p.degraded, "not degraded: nothing is lost");
			says(&p, "takes no cast to no type (Linux 6.17", "message");
		}
		k.missing = -1;
	}
	if (test__start_subtest("no_unix_connect_hook_runs")) {
		/* Runs, blind to failed connects to socket files, and says so. */
		k.missing = SYSPROBE_PROG_UNIX_CONNECT;
		env = host_env(&k);
		ASSERT_EQ(sysprobe__check(&env, &p), base, "runs when the rest is there");
		ASSERT_FALSE(p.unix_connects, "no hook on Unix connects");
		if (!base)
			says(&p, "no cgroup hook on Unix socket connects", "message");
		k.missing = -1;
	}
	if (test__start_subtest("this_kernel")) {
		/* The real probes, where they can run (loading a program needs root). */
		if (geteuid()) {
			test__skip("probing the kernel needs root");
		} else {
			env = host_env(&k);
			env.feature = NULL;
			sysprobe__check(&env, &p);
			for (i = 0; i < SYSPROBE__COUNT; i++)
				printf("%s: %s\n", sysprobe__feature_name(i),
				       p.has[i] ? "yes" : "no");
			ASSERT_TRUE(p.has[SYSPROBE_PROG_TRACEPOINT] &&
					    p.has[SYSPROBE_MAP_RINGBUF] &&
					    p.has[SYSPROBE_HELPER_LOOP] &&
					    p.has[SYSPROBE_HELPER_READ_KERNEL] &&
					    p.has[SYSPROBE_INSN_MAY_GOTO],
				    "this kernel has what claimd needs");
			/* Linux 6.17 and later cast to no type (kernel-facts: 6.18 here). */
			ASSERT_TRUE(p.untyped_cast, "this kernel casts to no type");
			/* Linux 6.7 and later hook Unix connects. */
			ASSERT_TRUE(p.unix_connects, "this kernel hooks Unix connects");
		}
	}
	log_set_level(LOG_INFO);
	tmpdir_remove(dir);
}
