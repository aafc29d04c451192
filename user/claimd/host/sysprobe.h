/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the host allows, checked before anything is loaded: privileges, BTF,
 * bpffs and tracefs (mounted when missing), lockdown, and the BPF program
 * types, maps and helpers the observer uses. Each missing piece is reported
 * in a sentence that says what to do about it. Where claimd can do without
 * something (uprobes: TLS and explicit request context), it runs degraded
 * and says so; otherwise it does not start.
 *
 * The paths and the kernel's answers come from a struct sysprobe_env, so
 * that tests can point the checks at missing files and pretend features
 * are missing (tests/unit/test_sysprobe.c); claimd uses the defaults.
 * For end-to-end tests, CLAIMD_TEST_MISSING (a comma-separated list of
 * sysprobe__feature_key names, e.g. "uprobe,ringbuf") makes claimd act as if
 * the kernel lacked those features; it can only take abilities away.
 */
#ifndef CLAIMD_SYSPROBE_H
#define CLAIMD_SYSPROBE_H

#include <stdbool.h>
#include <stddef.h>

/* What the observer needs from the kernel's BPF. */
enum sysprobe_feature {
	SYSPROBE_PROG_TRACEPOINT = 0, /* tracepoints: processes' exec and exit */
	SYSPROBE_PROG_UPROBE,	      /* uprobes: TLS plaintext and libclaim's context */
	SYSPROBE_PROG_RAW_TP,	      /* raw_tp: a connection's bytes, the verdict map's header */
	SYSPROBE_MAP_RINGBUF,
	SYSPROBE_HELPER_LOOP,
	SYSPROBE_HELPER_TASK_PT_REGS,
	SYSPROBE_HELPER_READ_KERNEL, /* the socket behind an fd; lockdown may forbid it */
	SYSPROBE_HELPER_READ_USER,   /* the bytes a syscall moved */
	SYSPROBE_INSN_MAY_GOTO,	     /* loops without a call per step (bpf/loop.bpf.h) */
	SYSPROBE_KFUNC_UNTYPED_CAST, /* optional: the socket filter's one load (bpf/sock.bpf.h) */
	SYSPROBE_PROG_UNIX_CONNECT, /* optional: the cgroup hook on Unix connects (bpf/connects.c) */
	SYSPROBE__COUNT,
};

struct sysprobe_env {
	const char *btf;      /* default /sys/kernel/btf/vmlinux */
	const char *bpffs;    /* default /sys/fs/bpf */
	const char *tracefs;  /* default /sys/kernel/tracing */
	const char *tcp;      /* default <tracefs>/events/tcp */
	const char *sock;     /* default <tracefs>/events/sock */
	const char *lockdown; /* default /sys/kernel/security/lockdown */
	bool no_mount;	      /* report a missing bpffs or tracefs, do not mount it */
	int euid;	      /* -1: geteuid() */
	/* 1 when the kernel has the feature, 0 when not; NULL: ask the kernel. */
	int (*feature)(enum sysprobe_feature f, void *ctx);
	void *ctx;
};

struct sysprobe {
	bool root;
	bool btf;
	bool bpffs;
	bool tracefs;
	bool tcp_tracepoints; /* tcp:tcp_destroy_sock: a socket's end */
	bool sock_tracepoints; /* sock:sock_recv_length, sock_send_length: the bytes; inet_sock_set_state */
	bool has[SYSPROBE__COUNT];
	bool uprobes;	    /* TLS and explicit context can be followed */
	bool untyped_cast;  /* bpf_rdonly_cast to no type: the filter reads a socket in one load */
	bool unix_connects; /* the Unix connect hook: a failed connect to a socket file is seen */
	bool degraded;	    /* runs, without something: see report */
	char lockdown[32];  /* "none", "integrity", "confidentiality", or "unknown" */
	char report[2048];  /* every message, one per line */
};

/* Fills *p with what the host allows; env NULL: this host, as it is. Mounts
 * bpffs and tracefs if they are missing (unless env->no_mount). Returns 0
 * when the observer can run (perhaps degraded), else -1 after logging every
 * missing piece. */
int sysprobe__check(const struct sysprobe_env *env, struct sysprobe *p);
static inline int sysprobe__run(struct sysprobe *p)
{
	return sysprobe__check(NULL, p);
}

/* A sentence for an errno from loading or attaching the programs. */
const char *sysprobe__explain(int err);
const char *sysprobe__feature_name(enum sysprobe_feature f);
/* Its short name, as CLAIMD_TEST_MISSING lists it ("uprobe", "ringbuf", ...). */
const char *sysprobe__feature_key(enum sysprobe_feature f);

#define SYSPROBE_TEST_ENV "CLAIMD_TEST_MISSING"

/*
 * The attach type of the cgroup hook on Unix connects (enum bpf_attach_type,
 * Linux 6.7), which libbpf 1.1's headers do not name.
 */
#define SYSPROBE_UNIX_CONNECT 49

#endif
