// SPDX-License-Identifier: GPL-2.0
/*
 * Every program of the observer within the 512 bytes of stack that a
 * kernel without private stacks allows its deepest chain of calls.
 *
 * Since Linux 6.13 a tracepoint's program gets a per-CPU stack of its own
 * where its chain needs more than that, and the verifier no longer checks
 * it against 512; Linux 6.9 to 6.12, which the README supports, still do,
 * and so does every kernel for a uprobe's program, which can be preempted.
 * So a frame that grows on the syscall path would load here and fail to
 * load on an older kernel. The kernel here checks kprobe-type programs
 * against 512 (a probe program below shows it): each program is loaded
 * once more as that type, where the verifier runs the same check on it as
 * an older kernel runs on a tracepoint's. The cgroup hook on Unix connects
 * is held to 512 bytes everywhere, and loads as it is.
 *
 * And every program within half the verifier's budget of instructions
 * processed (a million): a program near it fails to load after a small
 * change, or on a kernel whose verifier prunes less, and each start of
 * claimd pays for every instruction the verifier walks (tp_io_x walked
 * 920,000 when the functions that open and close requests and calls were
 * verified once per call site).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "observer.skel.h"
#include "test_progs.h"

#define LOG_SIZE (1u << 20)
/* Half of BPF_COMPLEXITY_LIMIT_INSNS: the headroom each program keeps. */
#define PROCESSED_BUDGET 500000

/*
 * Does this kernel hold a kprobe-type program's chain of calls to 512
 * bytes? A program of two frames of 320 bytes each must be refused for it.
 * 1 if so, 0 if it loads (a private stack), -1 on any other error.
 */
static int kernel_bounds_kprobe_stack(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0 },
		{ .code = BPF_STX | BPF_MEM | BPF_DW,
		  .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1,
		  .off = -320 },
		{ .code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_CALL, .imm = 2 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
		/* the callee, at 5 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0 },
		{ .code = BPF_STX | BPF_MEM | BPF_DW,
		  .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1,
		  .off = -320 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[4096];
	LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = log, .log_size = sizeof(log), .log_level = 1);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "stack_probe", "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), &o);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (strstr(log, "combined stack size"))
		return 1;
	printf("the probe program failed to load otherwise: %s\n%s\n", strerror(errno), log);
	return -1;
}

/* The line of a program's log that holds needle, or "". */
static const char *log_line(const char *log, const char *needle, char *out, size_t len)
{
	const char *s = strstr(log, needle);
	size_t n;

	if (!s) {
		out[0] = '\0';
		return out;
	}
	while (s > log && s[-1] != '\n')
		s--;
	n = strcspn(s, "\n");
	if (n >= len)
		n = len - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}

void test_stack_bound(void)
{
	struct observer_bpf *skel = NULL;
	struct bpf_program *prog;
	char *logs[64] = { 0 };
	int n = 0, i, err, bounded;

	if (!test__need_root())
		return;
	bounded = kernel_bounds_kprobe_stack();
	if (!ASSERT_GE(bounded, 0, "probe program"))
		return;
	if (!bounded) {
		test__skip("this kernel gives kprobe-type programs a private stack: "
			   "it cannot check a chain of calls against 512 bytes");
		return;
	}
	skel = observer_bpf__open();
	if (!ASSERT_OK_PTR(skel, "observer_bpf__open"))
		return;
	bpf_object__for_each_program(prog, skel->obj) {
		if (!ASSERT_LT(n, 64, "programs"))
			goto out;
		logs[n] = calloc(1, LOG_SIZE);
		if (!ASSERT_OK_PTR(logs[n], "log buffer"))
			goto out;
		/* A cgroup hook is held to 512 bytes on every kernel: loaded as it is. */
		if (bpf_program__type(prog) != BPF_PROG_TYPE_KPROBE &&
		    bpf_program__type(prog) != BPF_PROG_TYPE_CGROUP_SOCK_ADDR) {
			bpf_program__set_type(prog, BPF_PROG_TYPE_KPROBE);
			bpf_program__set_expected_attach_type(prog, 0);
		}
		bpf_program__set_log_buf(prog, logs[n], LOG_SIZE);
		bpf_program__set_log_level(prog, 4); /* the statistics, and any error */
		n++;
	}
	err = bpf_object__load(skel->obj);
	i = 0;
	bpf_object__for_each_program(prog, skel->obj) {
		char depth[256], refusal[256], stats[256];
		bool too_large = *log_line(logs[i], "Too large", refusal, sizeof(refusal));
		long processed = -1;

		log_line(logs[i], "processed ", stats, sizeof(stats));
		if (sscanf(stats, "processed %ld insns", &processed) != 1)
			processed = -1;
		printf("%-20s %7ld insns processed; %s%s%s\n", bpf_program__name(prog), processed,
		       log_line(logs[i], "stack depth ", depth, sizeof(depth)),
		       too_large ? "; refused: " : "", refusal);
		ASSERT_FALSE(too_large, bpf_program__name(prog));
		if (!err) {
			ASSERT_GT(processed, 0, "the verifier's statistics");
			ASSERT_LE(processed, PROCESSED_BUDGET, bpf_program__name(prog));
		}
		i++;
	}
	if (!ASSERT_OK(err, "every program loads as kprobe type, its stack checked")) {
		/* libbpf stops at the program refused: the last log written is its. */
		for (i = n - 1; i > 0 && !logs[i][0]; i--)
			;
		printf("the verifier's last words:\n%s\n",
		       logs[i] + (strlen(logs[i]) > 800 ? strlen(logs[i]) - 800 : 0));
	}
out:
	observer_bpf__destroy(skel);
	for (i = 0; i < n; i++)
		free(logs[i]);
}
