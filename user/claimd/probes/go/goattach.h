/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Go probes (bpf/runtimes/go.c) into one Go executable: in, the file and
 * what goexec read of it (its functions' entries and RETs, its struct
 * offsets); out, the executable's offsets in go_exes at its slot, and a
 * uprobe at each entry and RET, the slot its cookie, handed to the
 * observer. The programs and the map are found by name in its object.
 * runtime.newproc1 (goroutine lineage) is probed apart, when the
 * executable's programs ask for it (go_lineage_wanted, bpf/runtimes/go.c).
 */
#ifndef CLAIMD_GOATTACH_H
#define CLAIMD_GOATTACH_H

#include <stdbool.h>
#include <linux/types.h>

struct goexec;
struct goexec_fn;
struct observer;

/*
 * Every probe but lineage's: those that follow requests per goroutine, or
 * (by_syscalls: goexec__by_syscalls) the one where a goroutine hands its
 * call to a connection. 0, or -errno (-ENOSPC: slot beyond
 * CLAIMD_GO_EXES_MAX; then nothing is attached).
 */
int goattach(struct observer *obs, __u32 slot, const char *path, const struct goexec *g,
	     bool by_syscalls);
/* runtime.newproc1's probes (newproc: where goexec found it) at the executable's slot. */
int goattach_lineage(struct observer *obs, __u32 slot, const char *path,
		     const struct goexec_fn *newproc);

#endif
