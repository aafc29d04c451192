// SPDX-License-Identifier: GPL-2.0
/*
 * Go services, a uprobe runtime (probes/runtime.h): in, followed processes'
 * executables; out, the Go probes in each Go one (goattach.h), and its
 * processes marked CLAIMD_PROC_GO: followed per goroutine, not by syscall.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <json-c/json.h>

#include "probes/go/goattach.h"
#include "probes/go/goexec.h"
#include "log.h"
#include "kernel/observer_api.h"
#include "probes/runtime.h"

/* What a file turned out to be. */
#define GO_FILE_OTHER  ((void *)1) /* not Go, or Go left to the syscall path */
#define GO_FILE_PROBED ((void *)2)

struct goprobes {
	struct observer *obs;
	int probed, refused;		  /* probed: the next executable's slot (goattach.h) too */
	int refused_by[GOEXEC__REFUSALS]; /* by goexec_refusal */
};

static int goprobes_open(void *state, struct observer *obs)
{
	struct goprobes *gp = state;

	gp->obs = obs;
	return 0;
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
	err = goattach(gp->obs, gp->probed, path, &g);
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

static bool goprobes_probe(void *state, struct observer *obs, const struct probe_file *f)
{
	(void)obs; /* gp's own, since open */
	return look_at(state, f->path, f->tgid) == GO_FILE_PROBED;
}

static void goprobes_follow(void *state, struct observer *obs, __u32 tgid)
{
	(void)obs;
	mark_go(state, tgid);
}

static void goprobes_status(const void *state, struct json_object *o)
{
	const struct goprobes *gp = state;
	struct json_object *by = json_object_new_object();
	int r;

	json_object_object_add(o, "go_files", json_object_new_int(gp ? gp->probed : 0));
	json_object_object_add(o, "go_refused", json_object_new_int(gp ? gp->refused : 0));
	json_object_object_add(o, "go_refused_by", by);
	for (r = GOEXEC_PROBED + 1; r < GOEXEC__REFUSALS; r++)
		json_object_object_add(by, goexec__refusal_name(r),
				       json_object_new_int(gp ? gp->refused_by[r] : 0));
}

static const struct probe_runtime go_runtime = {
	.name = "go",
	.exe = true,
	.state_size = sizeof(struct goprobes),
	.open = goprobes_open,
	.probe = goprobes_probe,
	.follow = goprobes_follow,
	.status = goprobes_status,
};
PROBE_RUNTIME(go_runtime);
