// SPDX-License-Identifier: GPL-2.0
/*
 * Go services, a uprobe runtime (probes/runtime.h): in, followed processes'
 * executables; out, the Go probes in each Go one (goattach.h), and its
 * processes marked CLAIMD_PROC_GO_SYSCALLS (net/http alone: framed by
 * their syscalls, one probe per call) or CLAIMD_PROC_GO (followed per
 * goroutine, not by syscall).
 * Goroutine lineage (runtime.newproc1) is probed in an executable only
 * once its programs ask for it (a call on a goroutine tied to no request):
 * checked each tick.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>

#include "probes/go/goattach.h"
#include "probes/go/goexec.h"
#include "log.h"
#include "kernel/observer_api.h"
#include "probes/runtime.h"

/*
 * What a file turned out to be. A Go program left to the syscall path runs
 * many goroutines on each thread and moves them between threads, its
 * HTTP client's I/O on goroutines of the library's own: its thread does
 * not say which request a call serves. Its processes are taken for
 * multiplexed (CLAIMD_PROC_MUX), as an event loop is: a call is tied only
 * by a request id its request carries (bpf/keyed.c), a failure without one
 * is unknown.
 */
#define GO_FILE_OTHER	((void *)1) /* not Go */
#define GO_FILE_PROBED	((void *)2)
#define GO_FILE_REFUSED ((void *)3) /* Go, left to the syscall path */

/* A probed executable, by its slot: what lineage's probes need later. */
struct go_slot {
	int fd;			  /* the file, open: its process may be gone by then */
	bool lineage;		  /* runtime.newproc1 probed, or tried */
	struct goexec_fn newproc; /* where goexec found it */
};

struct goprobes {
	struct observer *obs;
	int probed, refused;		  /* probed: the next executable's slot (goattach.h) too */
	int by_syscalls;		  /* of those probed, followed by their syscalls */
	int refused_by[GOEXEC__REFUSALS]; /* by goexec_refusal */
	int lineage;			  /* executables whose lineage is probed */
	int wanted_fd;			  /* go_lineage_wanted */
	struct go_slot slot[CLAIMD_GO_EXES_MAX];
};

static int goprobes_open(void *state, struct observer *obs)
{
	struct goprobes *gp = state;
	struct bpf_map *m =
		bpf_object__find_map_by_name(observer__object(obs), "go_lineage_wanted");

	gp->obs = obs;
	gp->wanted_fd = m ? bpf_map__fd(m) : -1;
	return 0;
}

static void goprobes_close(void *state)
{
	struct goprobes *gp = state;
	int i;

	for (i = 0; i < gp->probed && i < CLAIMD_GO_EXES_MAX; i++)
		if (gp->slot[i].fd >= 0)
			close(gp->slot[i].fd);
}

/* Lineage into the executables whose programs asked for it since. */
static void goprobes_tick(void *state, struct observer *obs)
{
	struct goprobes *gp = state;
	char path[64];
	__u32 i, want;
	int err;

	for (i = 0; gp->wanted_fd >= 0 && i < (__u32)gp->probed && i < CLAIMD_GO_EXES_MAX; i++) {
		struct go_slot *s = &gp->slot[i];

		if (s->lineage || bpf_map_lookup_elem(gp->wanted_fd, &i, &want) || !want)
			continue;
		s->lineage = true;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", s->fd);
		err = s->fd >= 0 ? goattach_lineage(obs, i, path, &s->newproc) : -EBADF;
		if (err) {
			pr_warn("Go: cannot probe goroutine lineage in Go program %u: %s; calls on "
				"goroutines its handlers start stay untied",
				i, strerror(-err));
			continue;
		}
		gp->lineage++;
		pr_info("Go: a call on a goroutine tied to no request in Go program %u: "
			"goroutine lineage probed (runtime.newproc1)",
			i);
	}
}

/* Said and counted: the file's HTTP stays with the syscall path (GO_FILE_REFUSED). */
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
	return GO_FILE_REFUSED;
}

/*
 * Is g, a program the probes can follow, to be followed by its syscalls
 * (goexec__by_syscalls), with the goroutine id where the programs read it?
 * Else per goroutine, said in the log.
 */
static bool by_syscalls(struct goprobes *gp, const struct goexec *g, __u32 tgid)
{
	const char *why = NULL;

	if (goexec__by_syscalls(g, &why) && observer__go_goid_offset(gp->obs, g->offsets.g_goid))
		return true;
	pr_info("Go: %s of process %u followed per goroutine (a trap at each request's and call's "
		"start and end), not by its syscalls: %s",
		g->version, tgid, why ? why : "its goroutine id sits elsewhere than the first's");
	return false;
}

/*
 * Reads the file and probes it if it is a Go program the probes can follow;
 * *word then says how (CLAIMD_PROC_GO or CLAIMD_PROC_GO_SYSCALLS). Any Go
 * program when off (claimd --no-go) is refused (GO_FILE_REFUSED).
 */
static void *look_at(struct goprobes *gp, const char *path, __u32 tgid, bool off, __u32 *word)
{
	static struct goexec g; /* large: RET tables */
	const char *why = NULL;
	enum goexec_refusal r;
	bool syscalls;
	int err;

	if (goexec__open(path, &g)) {
		if (errno != ENOEXEC)
			pr_warn("Go: cannot read the program of process %u: %s", tgid,
				strerror(errno));
		return GO_FILE_OTHER;
	}
	if (off) {
		r = GOEXEC_OFF;
		why = "claimd --no-go";
	} else {
		r = goexec__refusal(&g, &why);
	}
	if (r != GOEXEC_PROBED)
		return refuse(gp, path, &g, tgid, r, why);
	syscalls = by_syscalls(gp, &g, tgid);
	err = goattach(gp->obs, gp->probed, path, &g, syscalls);
	if (err) {
		pr_warn("Go: cannot probe the program of process %u: %s", tgid, strerror(-err));
		gp->refused++;
		gp->refused_by[GOEXEC_ATTACH]++;
		return GO_FILE_REFUSED;
	}
	/* Its slot is below CLAIMD_GO_EXES_MAX: goattach took it. */
	gp->slot[gp->probed].fd = open(path, O_RDONLY | O_CLOEXEC);
	gp->slot[gp->probed].newproc = g.fn[GOFN_NEWPROC];
	pr_info("Go: probing %s (%s%s) of process %u as Go program %d: %s", g.version,
		g.stripped ? "stripped" : "with symbols", g.has_dwarf ? ", DWARF" : "", tgid,
		gp->probed,
		syscalls ? "requests framed by its syscalls, one probe per call"
			 : "requests followed per goroutine");
	gp->probed++;
	if (syscalls)
		gp->by_syscalls++;
	*word = syscalls ? CLAIMD_PROC_GO_SYSCALLS : CLAIMD_PROC_GO;
	return GO_FILE_PROBED;
}

static bool goprobes_probe(void *state, struct observer *obs, const struct probe_file *f,
			   __u32 *word)
{
	void *what = look_at(state, f->path, f->tgid, f->off, word);

	(void)obs; /* gp's own, since open */
	if (what == GO_FILE_REFUSED)
		*word = CLAIMD_PROC_MUX;
	return what != GO_FILE_OTHER;
}

/*
 * The process's word in traced[]: Go as its program is followed, no longer
 * taken for multiplexed; or, left to the syscall path, multiplexed.
 */
static void goprobes_follow(void *state, struct observer *obs, __u32 tgid, __u32 word)
{
	struct goprobes *gp = state;

	(void)obs;
	observer__proc_word(gp->obs, tgid, word | CLAIMD_PROC_TRACED,
			    (word & CLAIMD_PROC_MUX) ? 0 : CLAIMD_PROC_MUX);
}

static void goprobes_status(const void *state, struct json_object *o)
{
	const struct goprobes *gp = state;
	struct json_object *by = json_object_new_object();
	int r;

	json_object_object_add(o, "go_files", json_object_new_int(gp ? gp->probed : 0));
	json_object_object_add(o, "go_files_by_syscalls",
			       json_object_new_int(gp ? gp->by_syscalls : 0));
	json_object_object_add(o, "go_refused", json_object_new_int(gp ? gp->refused : 0));
	json_object_object_add(o, "go_lineage_files", json_object_new_int(gp ? gp->lineage : 0));
	json_object_object_add(o, "go_refused_by", by);
	for (r = GOEXEC_PROBED + 1; r < GOEXEC__REFUSALS; r++)
		json_object_object_add(by, goexec__refusal_name(r),
				       json_object_new_int(gp ? gp->refused_by[r] : 0));
}

static const struct probe_runtime go_runtime = {
	.name = "go",
	.exe = true,
	.looks_when_off = true,
	.word = CLAIMD_PROC_GO,
	.state_size = sizeof(struct goprobes),
	.open = goprobes_open,
	.close = goprobes_close,
	.probe = goprobes_probe,
	.follow = goprobes_follow,
	.tick = goprobes_tick,
	.status = goprobes_status,
};
PROBE_RUNTIME(go_runtime);
