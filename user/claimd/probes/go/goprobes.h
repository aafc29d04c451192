/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Go services: each followed process's executable is read once (by device
 * and inode; goexec.h); a Go one with the register ABI and net/http gets the
 * Go probes (bpf/goprobe.c), attached to the file, so every process running
 * it, now or later, is probed. Each process running a probed executable is
 * marked CLAIMD_PROC_GO: its HTTP is followed per goroutine, and the syscall
 * path leaves its bytes alone (one path per process, never both).
 */
#ifndef CLAIMD_GOPROBES_H
#define CLAIMD_GOPROBES_H

#include <linux/types.h>

struct observer;
struct goprobes;

struct goprobes *goprobes__new(struct observer *obs);
void goprobes__free(struct goprobes *gp);
/* The process tgid (one claimd follows): its executable probed if Go, the
 * process marked. 1 if its executable was probed now, else 0. */
int goprobes__process(struct goprobes *gp, __u32 tgid);
/* Go executables probed; found and left to the syscall path (too old, no net/http). */
int goprobes__files(const struct goprobes *gp);
int goprobes__refused(const struct goprobes *gp);

#endif
