// SPDX-License-Identifier: GPL-2.0
/* Go executables found in followed processes and probed once; see goprobes.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/bpf.h>

#include "probes/go/goexec.h"
#include "probes/go/goprobes.h"
#include "hashtab.h"
#include "log.h"
#include "kernel/observer_api.h"

/* What a file turned out to be. */
#define GO_FILE_OTHER  ((void *)1) /* not Go, or Go left to the syscall path */
#define GO_FILE_PROBED ((void *)2)

struct file_id {
	dev_t dev;
	ino_t ino;
};

struct goprobes {
	struct observer *obs;
	struct hashtab *files; /* struct file_id -> GO_FILE_* */
	int probed, refused;
};

struct goprobes *goprobes__new(struct observer *obs)
{
	struct goprobes *gp = calloc(1, sizeof(*gp));

	if (!gp)
		return NULL;
	gp->obs = obs;
	gp->files = hashtab__new();
	if (!gp->files) {
		free(gp);
		return NULL;
	}
	return gp;
}

void goprobes__free(struct goprobes *gp)
{
	if (!gp)
		return;
	hashtab__free(gp->files);
	free(gp);
}

/* Reads the file and probes it if it is a Go program the probes can follow. */
static void *look_at(struct goprobes *gp, const char *path, __u32 tgid)
{
	static struct goexec g; /* large: RET tables */
	const char *why = NULL;
	int err;

	if (goexec__open(path, &g)) {
		if (errno != ENOEXEC)
			pr_warn("Go: cannot read the program of process %u: %s", tgid,
				strerror(errno));
		return GO_FILE_OTHER;
	}
	if (!goexec__probeable(&g, &why)) {
		pr_info("Go: %s in process %u not probed: %s", g.version, tgid, why);
		gp->refused++;
		return GO_FILE_OTHER;
	}
	err = observer__attach_go(gp->obs, path, &g);
	if (err) {
		pr_warn("Go: cannot probe the program of process %u: %s", tgid, strerror(-err));
		gp->refused++;
		return GO_FILE_OTHER;
	}
	pr_info("Go: probing %s (%s%s) of process %u: requests followed per goroutine", g.version,
		g.stripped ? "stripped" : "with symbols", g.has_dwarf ? ", DWARF" : "", tgid);
	gp->probed++;
	return GO_FILE_PROBED;
}

/* The process's word in traced[]: Go, and no longer taken for multiplexed. */
static void mark_go(struct goprobes *gp, __u32 tgid)
{
	int fd = observer__traced_fd(gp->obs);
	__u32 v = 0;

	if (bpf_map_lookup_elem(fd, &tgid, &v))
		return;
	if ((v & CLAIMD_PROC_GO) && !(v & CLAIMD_PROC_MUX))
		return;
	v = (v | CLAIMD_PROC_GO | CLAIMD_PROC_TRACED) & ~CLAIMD_PROC_MUX;
	bpf_map_update_elem(fd, &tgid, &v, BPF_ANY);
}

int goprobes__process(struct goprobes *gp, __u32 tgid)
{
	struct file_id id;
	char path[64];
	struct stat st;
	void *what;
	int fresh = 0;

	snprintf(path, sizeof(path), "/proc/%u/exe", tgid);
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	memset(&id, 0, sizeof(id));
	id.dev = st.st_dev;
	id.ino = st.st_ino;
	what = hashtab__get(gp->files, &id, sizeof(id));
	if (!what) {
		what = look_at(gp, path, tgid);
		hashtab__put(gp->files, &id, sizeof(id), what, NULL);
		fresh = what == GO_FILE_PROBED;
	}
	if (what == GO_FILE_PROBED)
		mark_go(gp, tgid);
	return fresh;
}

int goprobes__files(const struct goprobes *gp)
{
	return gp->probed;
}

int goprobes__refused(const struct goprobes *gp)
{
	return gp->refused;
}
