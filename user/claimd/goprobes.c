// SPDX-License-Identifier: GPL-2.0
/* Go executables found in followed processes and probed once; see goprobes.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "goexec.h"
#include "goprobes.h"
#include "hashtab.h"
#include "log.h"
#include "observer_api.h"

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
	int refused_by[GOEXEC__REFUSALS]; /* by goexec_refusal */
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

/* Said and counted: the file's HTTP stays with the syscall path. */
static void *refuse(struct goprobes *gp, const char *path, const struct goexec *g, __u32 tgid,
		    enum goexec_refusal r, const char *why)
{
	char file[256];
	ssize_t n = readlink(path, file, sizeof(file) - 1);

	file[n > 0 ? n : 0] = 0;
	pr_info("Go: %s (%s, grpc-go %s) of process %u not probed, left to the syscall path (%s): "
		"%s",
		file[0] ? file : path, g->version, g->grpc_version[0] ? g->grpc_version : "-", tgid,
		goexec__refusal_name(r), why);
	gp->refused++;
	gp->refused_by[r]++;
	return GO_FILE_OTHER;
}

/* Reads the file and probes it if it is a Go program the probes can follow. */
static void *look_at(struct goprobes *gp, const char *path, __u32 tgid)
{
	static struct goexec g; /* large: RET tables */
	const char *why = NULL;
	enum goexec_refusal r;
	int err;

	if (goexec__open(path, &g)) {
		if (errno != ENOEXEC)
			pr_warn("Go: cannot read the program of process %u: %s", tgid,
				strerror(errno));
		return GO_FILE_OTHER;
	}
	r = goexec__refusal(&g, &why);
	if (r != GOEXEC_PROBED)
		return refuse(gp, path, &g, tgid, r, why);
	err = observer__attach_go(gp->obs, path, &g);
	if (err) {
		pr_warn("Go: cannot probe the program of process %u: %s", tgid, strerror(-err));
		gp->refused++;
		gp->refused_by[GOEXEC_ATTACH]++;
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

int goprobes__refused_by(const struct goprobes *gp, int reason)
{
	return reason >= 0 && reason < GOEXEC__REFUSALS ? gp->refused_by[reason] : 0;
}
