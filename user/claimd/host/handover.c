// SPDX-License-Identifier: GPL-2.0
/* The pin directory lock and waiting for a leaving claimd; see handover.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "host/handover.h"
#include "host/procstat.h"
#include "log.h"

#define LEAVING_COMM	"claimd:stopping" /* 15 characters: what a comm holds */
#define PF_EXITING_FLAG 0x4u		  /* include/linux/sched.h: getting shut down */
#define POLL_MS		50

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Who holds a flock on the file of fd: from /proc/locks; 0 if nobody is listed. */
static pid_t flock_holder(int fd)
{
	char line[256], want[64];
	struct stat st;
	pid_t pid = 0;
	FILE *f;

	if (fstat(fd, &st))
		return 0;
	/* "1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF": dev in hex, inode in decimal. */
	snprintf(want, sizeof(want), "%02x:%02x:%lu", major(st.st_dev), minor(st.st_dev),
		 (unsigned long)st.st_ino);
	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		char kind[16], id[64];
		int p;

		if (strstr(line, "->")) /* a waiter, not a holder */
			continue;
		if (sscanf(line, "%*s %15s %*s %*s %d %63s", kind, &p, id) == 3 &&
		    !strcmp(kind, "FLOCK") && !strcmp(id, want))
			pid = p;
	}
	fclose(f);
	return pid;
}

bool handover__pid_leaving(pid_t pid)
{
	char path[64], comm[32] = "";
	struct procstat st;
	ssize_t n;
	int fd;

	if (procstat__read(pid, &st))
		return true; /* gone */
	if (st.state == 'Z' || st.state == 'X' || (st.flags & PF_EXITING_FLAG))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	comm[n > 0 ? n : 0] = 0;
	comm[strcspn(comm, "\n")] = 0;
	return !strcmp(comm, LEAVING_COMM);
}

void handover__mark_leaving(void)
{
	prctl(PR_SET_NAME, LEAVING_COMM, 0, 0, 0);
}

int handover__lock(const char *dir, int wait_ms)
{
	long long start = mono_ms();
	bool told = false;
	pid_t pid = 0;
	int fd, err;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		err = -errno;
		pr_err("cannot create pin directory %s: %s", dir, strerror(errno));
		return err;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot open pin directory %s: %s", dir, strerror(errno));
		return err;
	}
	for (;;) {
		if (!flock(fd, LOCK_EX | LOCK_NB)) {
			if (told)
				pr_info("pin directory %s released after %.1f s; going on", dir,
					(mono_ms() - start) / 1000.0);
			return fd;
		}
		if (errno != EWOULDBLOCK) {
			err = -errno;
			pr_err("cannot lock pin directory %s: %s", dir, strerror(errno));
			break;
		}
		pid = flock_holder(fd);
		/* A holder that runs on keeps the directory: no waiting for it. */
		err = -EWOULDBLOCK;
		if (pid > 0 && !handover__pid_leaving(pid))
			break;
		if (mono_ms() - start >= wait_ms)
			break;
		if (!told) {
			if (pid > 0)
				pr_warn("pin directory %s is held by claimd pid %d, which is "
					"exiting: "
					"waiting up to %d s for it to be released",
					dir, (int)pid, wait_ms / 1000);
			else
				pr_warn("waiting up to %d s for pin directory %s to be released",
					wait_ms / 1000, dir);
			told = true;
		}
		usleep(POLL_MS * 1000);
	}
	if (err == -EWOULDBLOCK) {
		char who[64] = "";

		if (pid > 0)
			snprintf(who, sizeof(who), " (pid %d%s)", (int)pid,
				 told ? ", still there after waiting" : "");
		pr_err("another claimd is already running with pin directory %s%s; stop it first, "
		       "or give this one its own --pin-dir and --control",
		       dir, who);
	}
	close(fd);
	return err;
}
