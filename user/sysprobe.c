// SPDX-License-Identifier: GPL-2.0
/* Host checks before loading; see sysprobe.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "log.h"
#include "sysprobe.h"

#define BPF_FS_MAGIC  0xcafe4a11
#define TRACEFS_MAGIC 0x74726163
#define DEBUGFS_MAGIC 0x64626720

static bool fs_is(const char *path, long magic)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == magic;
}

static bool ensure_mounted(const char *path, const char *type, long magic, const char *opts)
{
	if (fs_is(path, magic))
		return true;
	mkdir(path, 0755);
	if (mount(type, path, type, 0, opts)) {
		pr_err("%s is not mounted on %s and mounting it failed: %s", type, path,
		       strerror(errno));
		return false;
	}
	pr_info("mounted %s on %s", type, path);
	return true;
}

static void read_lockdown(struct sysprobe *p)
{
	char buf[128], *l, *r;
	FILE *f = fopen("/sys/kernel/security/lockdown", "r");

	snprintf(p->lockdown, sizeof(p->lockdown), "unknown");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		/* "none [integrity] confidentiality": the bracketed one is in force */
		l = strchr(buf, '[');
		r = l ? strchr(l, ']') : NULL;
		if (l && r) {
			*r = 0;
			snprintf(p->lockdown, sizeof(p->lockdown), "%s", l + 1);
		}
	}
	fclose(f);
}

int sysprobe__run(struct sysprobe *p)
{
	int ok = 1;

	memset(p, 0, sizeof(*p));
	p->root = geteuid() == 0;
	if (!p->root) {
		pr_err("claimd must run as root: loading BPF programs and reading other "
		       "processes' sockets need CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN "
		       "(try: sudo claimd)");
		return -1;
	}
	p->btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	if (!p->btf) {
		pr_err("the kernel exposes no BTF (/sys/kernel/btf/vmlinux is missing): claimd "
		       "needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		ok = 0;
	}
	p->bpffs = ensure_mounted("/sys/fs/bpf", "bpf", BPF_FS_MAGIC, "mode=0755");
	if (!p->bpffs)
		ok = 0;
	p->tracefs = fs_is("/sys/kernel/tracing", TRACEFS_MAGIC) ||
		     ensure_mounted("/sys/kernel/tracing", "tracefs", TRACEFS_MAGIC, NULL);
	if (!p->tracefs)
		ok = 0;
	p->syscall_tracepoints =
		access("/sys/kernel/tracing/events/syscalls/sys_exit_read", F_OK) == 0;
	if (p->tracefs && !p->syscall_tracepoints) {
		pr_err("the kernel has no syscall tracepoints "
		       "(/sys/kernel/tracing/events/syscalls): it needs CONFIG_FTRACE_SYSCALLS=y");
		ok = 0;
	}
	read_lockdown(p);
	if (!strcmp(p->lockdown, "confidentiality"))
		pr_warn("kernel lockdown is 'confidentiality': BPF may not read kernel or user "
			"memory, so claimd cannot see traffic; boot with lockdown=integrity or "
			"none");

	p->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	if (!p->ringbuf) {
		pr_err("the kernel has no BPF ring buffer (Linux 5.8 or later is needed)");
		ok = 0;
	}
	p->bpf_loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_loop, NULL) == 1;
	if (!p->bpf_loop) {
		pr_err("the kernel lacks the bpf_loop helper (Linux 5.17 or later is needed)");
		ok = 0;
	}
	p->task_pt_regs =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_task_pt_regs, NULL) == 1;
	if (!p->task_pt_regs) {
		pr_err("the kernel lacks bpf_task_pt_regs for tracepoints (Linux 5.15 or later)");
		ok = 0;
	}
	return ok ? 0 : -1;
}

const char *sysprobe__explain(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EPERM:
	case EACCES:
		return "the kernel refused (permission): check that claimd runs as root, that "
		       "kernel lockdown is not 'confidentiality', and that no security module "
		       "denies bpf()";
	case E2BIG:
	case ENOSPC:
		return "the verifier rejected a program as too complex for this kernel";
	case EINVAL:
		return "the kernel rejected a program or map: it may be too old for claimd";
	case ENOENT:
		return "a tracepoint or kernel type claimd needs does not exist on this kernel";
	case ENOMEM:
		return "not enough memory for the BPF maps (see --conns and --threads)";
	}
	return strerror(err);
}
