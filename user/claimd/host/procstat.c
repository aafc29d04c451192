// SPDX-License-Identifier: GPL-2.0
/* A process's state, parent and flags from /proc/PID/stat; see procstat.h. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/procstat.h"

int procstat__read(pid_t pid, struct procstat *out)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* "pid (comm) S ppid pgrp session tty tpgid flags ...": comm may hold spaces. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d %*d %*d %*d %*d %lu", &out->state, &ppid, &out->flags) != 3)
		return -1;
	out->ppid = ppid;
	return 0;
}
