/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What /proc/PID/stat says of a process that claimd asks about: its state,
 * its parent, its flags. One reader for every question: is it leaving
 * (host/handover.c), whose process did it start from (kernel/seed.c).
 */
#ifndef CLAIMD_PROCSTAT_H
#define CLAIMD_PROCSTAT_H

#include <sys/types.h>

struct procstat {
	char state; /* 'R', 'S', ... 'Z' */
	pid_t ppid;
	unsigned long flags; /* the kernel's PF_* */
};

/* Reads pid's: 0, or -1 when it is gone or its line cannot be read. */
int procstat__read(pid_t pid, struct procstat *out);

#endif /* CLAIMD_PROCSTAT_H */
