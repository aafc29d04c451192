/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the host allows, checked before anything is loaded: privileges, BTF,
 * bpffs and tracefs (mounted when missing), lockdown, and the BPF features
 * the observer uses. Each missing piece is reported in a sentence that says
 * what to do about it.
 */
#ifndef CLAIMD_SYSPROBE_H
#define CLAIMD_SYSPROBE_H

#include <stdbool.h>

struct sysprobe {
	bool root;
	bool btf;
	bool bpffs;
	bool tracefs;
	bool syscall_tracepoints;
	bool ringbuf;
	bool bpf_loop;
	bool task_pt_regs;
	char lockdown[32]; /* "none", "integrity", "confidentiality", or "unknown" */
};

/* Fills *p; mounts bpffs and tracefs if they are missing. Returns 0 when the
 * observer can run, else -1 after logging every missing piece. */
int sysprobe__run(struct sysprobe *p);

/* A sentence for an errno from loading or attaching the programs. */
const char *sysprobe__explain(int err);

#endif
