// SPDX-License-Identifier: GPL-2.0
/* Host checks before loading; see sysprobe.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "log.h"
#include "host/sysprobe.h"

#define BPF_FS_MAGIC  0xcafe4a11
#define TRACEFS_MAGIC 0x74726163

static const struct sysprobe_env default_env = {
	.btf = "/sys/kernel/btf/vmlinux",
	.bpffs = "/sys/fs/bpf",
	.tracefs = "/sys/kernel/tracing",
	.lockdown = "/sys/kernel/security/lockdown",
	.euid = -1,
};

/* Logs a message and keeps it in the report. */
__attribute__((format(printf, 3, 4))) static void say(struct sysprobe *p, enum log_level level,
						      const char *fmt, ...)
{
	size_t used = strlen(p->report);
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_msg(level, "%s", line);
	if (used + 1 < sizeof(p->report))
		snprintf(p->report + used, sizeof(p->report) - used, "%s\n", line);
}

static bool fs_is(const char *path, long magic)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == magic;
}

static bool ensure_mounted(struct sysprobe *p, const struct sysprobe_env *env, const char *path,
			   const char *type, long magic, const char *opts)
{
	if (fs_is(path, magic))
		return true;
	if (env->no_mount) {
		say(p, LOG_ERROR, "%s is not mounted on %s: mount it (mount -t %s %s %s)", type,
		    path, type, type, path);
		return false;
	}
	mkdir(path, 0755);
	if (mount(type, path, type, 0, opts)) {
		say(p, LOG_ERROR,
		    "%s is not mounted on %s and mounting it failed: %s (mount it: mount -t %s %s "
		    "%s)",
		    type, path, strerror(errno), type, type, path);
		return false;
	}
	pr_info("mounted %s on %s", type, path);
	return true;
}

static void read_lockdown(struct sysprobe *p, const char *path)
{
	char buf[128], *l, *r;
	FILE *f = fopen(path, "r");

	snprintf(p->lockdown, sizeof(p->lockdown), "unknown");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		/* "none [integrity] confidentiality": the bracketed one is in force */
		l = strchr(buf, '[');
		r = l ? strchr(l, ']') : NULL;
		if (l && r) {
			*r = 0;
			snprintf(p->lockdown, sizeof(p->lockdown), "%.*s",
				 (int)sizeof(p->lockdown) - 1, l + 1);
		}
	}
	fclose(f);
}

const char *sysprobe__feature_name(enum sysprobe_feature f)
{
	static const char *const names[SYSPROBE__COUNT] = {
		[SYSPROBE_PROG_TRACEPOINT] = "tracepoint programs",
		[SYSPROBE_PROG_UPROBE] = "uprobe programs",
		[SYSPROBE_PROG_RAW_TP] = "raw tracepoint programs",
		[SYSPROBE_MAP_RINGBUF] = "ring buffer maps",
		[SYSPROBE_HELPER_LOOP] = "the bpf_loop helper",
		[SYSPROBE_HELPER_TASK_PT_REGS] = "the bpf_task_pt_regs helper",
		[SYSPROBE_HELPER_READ_KERNEL] = "the bpf_probe_read_kernel helper",
		[SYSPROBE_HELPER_READ_USER] = "the bpf_probe_read_user helper",
		[SYSPROBE_INSN_MAY_GOTO] = "the may_goto instruction",
		[SYSPROBE_KFUNC_UNTYPED_CAST] = "bpf_rdonly_cast to no type",
		[SYSPROBE_PROG_UNIX_CONNECT] = "the cgroup hook on Unix connects",
	};

	return f < SYSPROBE__COUNT ? names[f] : "?";
}

const char *sysprobe__feature_key(enum sysprobe_feature f)
{
	static const char *const keys[SYSPROBE__COUNT] = {
		[SYSPROBE_PROG_TRACEPOINT] = "tracepoint",
		[SYSPROBE_PROG_UPROBE] = "uprobe",
		[SYSPROBE_PROG_RAW_TP] = "raw_tp",
		[SYSPROBE_MAP_RINGBUF] = "ringbuf",
		[SYSPROBE_HELPER_LOOP] = "bpf_loop",
		[SYSPROBE_HELPER_TASK_PT_REGS] = "task_pt_regs",
		[SYSPROBE_HELPER_READ_KERNEL] = "read_kernel",
		[SYSPROBE_HELPER_READ_USER] = "read_user",
		[SYSPROBE_INSN_MAY_GOTO] = "may_goto",
		[SYSPROBE_KFUNC_UNTYPED_CAST] = "untyped_cast",
		[SYSPROBE_PROG_UNIX_CONNECT] = "unix_connect",
	};

	return f < SYSPROBE__COUNT ? keys[f] : "?";
}

/* Is f in CLAIMD_TEST_MISSING ("uprobe,ringbuf")? For tests only. */
static bool pretend_missing(enum sysprobe_feature f)
{
	const char *list = getenv(SYSPROBE_TEST_ENV), *key = sysprobe__feature_key(f), *p;
	size_t n = strlen(key);

	for (p = list; p && *p; p += strcspn(p, ","), p += *p == ',') {
		if (!strncmp(p, key, n) && (p[n] == ',' || !p[n]))
			return true;
	}
	return false;
}

/* Does the kernel load this program of type t? */
static int prog_loads(enum bpf_prog_type t, const struct bpf_insn *insns, size_t n)
{
	int fd = bpf_prog_load(t, NULL, "GPL", insns, n, NULL);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* Does a tracepoint program with a may_goto (BPF_JMP | BPF_JCOND) load? */
static int may_goto_loads(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_JMP | 0xe0 /* BPF_JCOND */ }, /* may_goto +0 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return prog_loads(BPF_PROG_TYPE_TRACEPOINT, insns, sizeof(insns) / sizeof(insns[0]));
}

/*
 * Does a raw tracepoint program load that casts a value to no type with
 * bpf_rdonly_cast (Linux 6.17) and loads eight bytes through it, as the
 * socket filter does (sock_head_of)?
 */
static int untyped_cast_loads(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int id = vmlinux ? btf__find_by_name_kind(vmlinux, "bpf_rdonly_cast", BTF_KIND_FUNC) : -1;
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2 }, /* no type */
		{ .code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_KFUNC_CALL, .imm = id },
		{ .code = BPF_LDX | BPF_MEM | BPF_DW,
		  .dst_reg = BPF_REG_0,
		  .src_reg = BPF_REG_0,
		  .off = 8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	btf__free(vmlinux);
	return id > 0 &&
	       prog_loads(BPF_PROG_TYPE_RAW_TRACEPOINT, insns, sizeof(insns) / sizeof(insns[0]));
}

/*
 * Does a cgroup address program load for BPF_CGROUP_UNIX_CONNECT (Linux
 * 6.7), which libbpf 1.1 does not name? (The kernel refuses an attach
 * type it does not know for the program type.)
 */
static int unix_connect_hook_loads(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = SYSPROBE_UNIX_CONNECT);
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), &opts);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* The kernel's answer, through libbpf's probes (each loads a tiny program or map). */
static int kernel_feature(enum sysprobe_feature f, void *ctx)
{
	(void)ctx;
	if (pretend_missing(f))
		return 0;
	switch (f) {
	case SYSPROBE_PROG_TRACEPOINT:
		return libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACEPOINT, NULL) == 1;
	case SYSPROBE_PROG_UPROBE:
		return libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL) == 1;
	case SYSPROBE_PROG_RAW_TP:
		return libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) == 1;
	case SYSPROBE_MAP_RINGBUF:
		return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	case SYSPROBE_HELPER_LOOP:
		return libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_loop, NULL) == 1;
	case SYSPROBE_HELPER_TASK_PT_REGS:
		return libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_task_pt_regs,
					       NULL) == 1;
	case SYSPROBE_HELPER_READ_KERNEL:
		return libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_probe_read_kernel,
					       NULL) == 1;
	case SYSPROBE_HELPER_READ_USER:
		return libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_probe_read_user,
					       NULL) == 1;
	case SYSPROBE_INSN_MAY_GOTO:
		return may_goto_loads();
	case SYSPROBE_KFUNC_UNTYPED_CAST:
		return untyped_cast_loads();
	case SYSPROBE_PROG_UNIX_CONNECT:
		return unix_connect_hook_loads();
	default:
		return 0;
	}
}

/* What each missing feature means, and what to do. */
static void missing(struct sysprobe *p, enum sysprobe_feature f)
{
	switch (f) {
	case SYSPROBE_PROG_TRACEPOINT:
		say(p, LOG_ERROR,
		    "the kernel does not load tracepoint BPF programs (CONFIG_BPF_EVENTS=y is "
		    "needed, and no security module may deny them): claimd cannot follow "
		    "processes' "
		    "exec and exit");
		break;
	case SYSPROBE_PROG_RAW_TP:
		say(p, LOG_ERROR,
		    "the kernel does not load raw tracepoint BPF programs: claimd cannot follow "
		    "connections or publish its verdict map (Linux 4.17 or later)");
		break;
	case SYSPROBE_MAP_RINGBUF:
		say(p, LOG_ERROR,
		    "the kernel has no BPF ring buffer (Linux 5.8 or later is needed)");
		break;
	case SYSPROBE_HELPER_LOOP:
		say(p, LOG_ERROR,
		    "the kernel lacks the bpf_loop helper (Linux 5.17 or later is needed)");
		break;
	case SYSPROBE_HELPER_TASK_PT_REGS:
		say(p, LOG_ERROR,
		    "the kernel lacks bpf_task_pt_regs for tracepoints (Linux 5.15 or later)");
		break;
	case SYSPROBE_HELPER_READ_KERNEL:
		if (!strcmp(p->lockdown, "confidentiality"))
			say(p, LOG_ERROR,
			    "kernel lockdown is 'confidentiality': BPF programs may not read "
			    "kernel "
			    "memory, which claimd needs to find the socket behind a file "
			    "descriptor; boot with lockdown=integrity (or none) to run claimd");
		else
			say(p, LOG_ERROR,
			    "BPF programs may not read kernel memory here (bpf_probe_read_kernel "
			    "is "
			    "refused: kernel lockdown or a security module); claimd needs it to "
			    "find the socket behind a file descriptor");
		break;
	case SYSPROBE_HELPER_READ_USER:
		say(p, LOG_ERROR,
		    "BPF programs may not read user memory here (bpf_probe_read_user is refused): "
		    "claimd cannot see the bytes services send and receive");
		break;
	case SYSPROBE_INSN_MAY_GOTO:
		say(p, LOG_ERROR,
		    "the kernel's BPF verifier lacks the may_goto instruction (Linux 6.9 or later "
		    "is needed): claimd's framing loops use it");
		break;
	case SYSPROBE_KFUNC_UNTYPED_CAST:
		say(p, LOG_INFO,
		    "the kernel's bpf_rdonly_cast takes no cast to no type (Linux 6.17 adds it): "
		    "the socket filter reads three fields of a socket where it would read one "
		    "word, "
		    "a few ns more on every TCP read and write");
		break;
	case SYSPROBE_PROG_UNIX_CONNECT:
		say(p, LOG_WARN,
		    "the kernel has no cgroup hook on Unix socket connects "
		    "(BPF_CGROUP_UNIX_CONNECT, Linux 6.7 adds it): a connect to a socket file "
		    "that fails (no such file, nobody listening) goes unseen, and a request it "
		    "failed is judged as if it had made no call");
		break;
	default:
		break;
	}
}

/* A group of the tracepoints claimd attaches to. */
struct event_group {
	const char *group;	  /* its directory under <tracefs>/events */
	const char *const *names; /* its events claimd looks for: one each is enough to say */
	const char *what;	  /* its kind, as said */
	const char *needs;	  /* what it takes, said when missing */
};

static const struct event_group tcp_group = {
	"tcp", (const char *const[]){ "tcp_destroy_sock", NULL }, "TCP",
	"claimd sees a socket's end there (Linux 4.16 or later)"
};
static const struct event_group sock_group = {
	"sock",
	(const char *const[]){ "sock_recv_length", "sock_send_length", "inet_sock_set_state",
			       NULL },
	"socket",
	"claimd takes the bytes connections carry from them, and their births and ends (Linux "
	"6.3 or later)"
};

/*
 * Are all of g's events in tracefs's events directory of its group (or in
 * 'given', a directory that stands for it)? If not, and tracefs is there,
 * says which is missing and what it takes.
 */
static bool events_exist(struct sysprobe *p, const char *given, const char *tracefs,
			 const struct event_group *g)
{
	char dir[512], file[600];
	const char *const *n;

	if (given)
		snprintf(dir, sizeof(dir), "%s", given);
	else
		snprintf(dir, sizeof(dir), "%s/events/%s", tracefs, g->group);
	for (n = g->names; *n; n++) {
		snprintf(file, sizeof(file), "%s/%s", dir, *n);
		if (access(file, F_OK)) {
			if (p->tracefs)
				say(p, LOG_ERROR,
				    "the kernel has no %s tracepoints (no %s in %s): %s", g->what,
				    *n, dir, g->needs);
			return false;
		}
	}
	return true;
}

int sysprobe__check(const struct sysprobe_env *env, struct sysprobe *p)
{
	int (*feature)(enum sysprobe_feature, void *);
	int ok = 1, i;

	if (!env)
		env = &default_env;
	feature = env->feature ? env->feature : kernel_feature;
	memset(p, 0, sizeof(*p));
	p->root = (env->euid < 0 ? (int)geteuid() : env->euid) == 0;
	if (!p->root) {
		say(p, LOG_ERROR,
		    "claimd must run as root: loading BPF programs and reading other processes' "
		    "sockets need CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN (try: sudo claimd)");
		return -1;
	}
	p->btf = access(env->btf, R_OK) == 0;
	if (!p->btf) {
		say(p, LOG_ERROR,
		    "the kernel exposes no BTF (%s is missing): claimd needs a kernel built with "
		    "CONFIG_DEBUG_INFO_BTF=y",
		    env->btf);
		ok = 0;
	}
	p->bpffs = ensure_mounted(p, env, env->bpffs, "bpf", BPF_FS_MAGIC, "mode=0755");
	if (!p->bpffs)
		ok = 0;
	p->tracefs = ensure_mounted(p, env, env->tracefs, "tracefs", TRACEFS_MAGIC, NULL);
	if (!p->tracefs)
		ok = 0;
	p->tcp_tracepoints = events_exist(p, env->tcp, env->tracefs, &tcp_group);
	p->sock_tracepoints = events_exist(p, env->sock, env->tracefs, &sock_group);
	if (!p->tcp_tracepoints || !p->sock_tracepoints)
		ok = 0;
	read_lockdown(p, env->lockdown);

	if (getenv(SYSPROBE_TEST_ENV) && !env->feature)
		say(p, LOG_WARN, "%s=%s: acting as if the kernel lacked those (for tests)",
		    SYSPROBE_TEST_ENV, getenv(SYSPROBE_TEST_ENV));
	for (i = 0; i < SYSPROBE__COUNT; i++)
		p->has[i] = feature(i, env->ctx) == 1;
	for (i = 0; i < SYSPROBE__COUNT; i++) {
		if (p->has[i] || i == SYSPROBE_PROG_UPROBE)
			continue;
		missing(p, i);
		/* Only slower without the one, blind to failed Unix connects without the other. */
		if (i != SYSPROBE_KFUNC_UNTYPED_CAST && i != SYSPROBE_PROG_UNIX_CONNECT)
			ok = 0;
	}
	p->untyped_cast = p->has[SYSPROBE_KFUNC_UNTYPED_CAST];
	p->unix_connects = p->has[SYSPROBE_PROG_UNIX_CONNECT];
	/* Without uprobes claimd still follows plain HTTP: a stated degraded mode. */
	p->uprobes = p->has[SYSPROBE_PROG_UPROBE];
	if (ok && !p->uprobes) {
		p->degraded = true;
		say(p, LOG_WARN,
		    "degraded: the kernel does not load uprobe BPF programs, so TLS traffic "
		    "(OpenSSL) and libclaim's explicit request context are not followed; plain "
		    "HTTP/1.x is");
	}
	return ok ? 0 : -1;
}

const char *sysprobe__explain(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EPERM:
		return "the kernel refused (permission): check that claimd runs as root, that "
		       "kernel lockdown is not 'confidentiality', and that no security module "
		       "denies bpf()";
	case EACCES:
		return "the verifier rejected a program: its log above says why (its limits, "
		       "such as 512 bytes of stack for a chain of calls, differ between "
		       "kernels), or a security module denied bpf()";
	case E2BIG:
	case ENOSPC:
		return "the verifier rejected a program as too complex for this kernel";
	case EINVAL:
		return "the kernel rejected a program or map: it may be too old for claimd";
	case ENOENT:
		return "a tracepoint or kernel type claimd needs does not exist on this kernel";
	case ENOMEM:
		return "not enough memory for the BPF maps (see --conns, --threads and "
		       "--ringbuf-size)";
	}
	return strerror(err);
}
