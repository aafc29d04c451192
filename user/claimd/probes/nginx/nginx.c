// SPDX-License-Identifier: GPL-2.0
/*
 * nginx, a uprobe runtime (probes/runtime.h): in, followed processes'
 * executables; out, one probe in each nginx whose code shows the offsets
 * it reads (ngxcode.h), at ngx_chain_writer, where a request begins to be
 * written upstream (bpf/runtimes/nginx.c), and its processes marked
 * CLAIMD_PROC_NGINX: their requests held by their connections from the
 * first, each call tied to its request there. An nginx that does not
 * verify is refused, said and counted (nginx_refused): its processes are
 * followed as any event loop's (keyed.c), by what their calls carry, or
 * not at all (unknown).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "kernel/observer_api.h"
#include "log.h"
#include "probes/nginx/ngxcode.h"
#include "probes/runtime.h"

#define NGX_FILES_MAX 16

struct ngxprobes {
	int files, refused;
};

static const struct probe_fn nginx_fns[] = {
	{ "nginx_chain_writer", NGXCODE_PROBED_FN, false },
};

static const struct probe_set nginx_set = {
	.fns = nginx_fns,
	.n = 1,
	.all = true,
	.max = NGX_FILES_MAX,
	.name = NGXCODE_PROBED_FN,
	.says = "nginx: each call tied where nginx writes it upstream (ngx_chain_writer)",
};

static bool ngxprobes_probe(void *state, struct observer *obs, const struct probe_file *f,
			    __u32 *word)
{
	struct ngxprobes *np = state;
	char file[256];
	struct ngxcode n;
	ssize_t len;

	(void)word; /* CLAIMD_PROC_NGINX, the runtime's own */
	if (ngxcode__open(f->path, &n)) {
		if (errno != ENOEXEC)
			pr_warn("nginx: cannot read the program of process %u: %s", f->tgid,
				strerror(errno));
		return false;
	}
	/* Said by the file's own name: f->path may be /proc/PID/exe. */
	len = readlink(f->path, file, sizeof(file) - 1);
	file[len > 0 ? len : 0] = 0;
	if (n.unverified) {
		np->refused++;
		pr_warn("nginx: %s (%s) refused: its code does not show %s where claimd reads it "
			"(sought in %s); its calls are tied only by what they carry, else its "
			"requests are unknown",
			file[0] ? file : f->path, n.version[0] ? n.version : "version not found",
			n.unverified, n.where);
		return false;
	}
	if (!probes__attach_set(obs, f, &nginx_set, &np->files))
		return false;
	pr_info("nginx: %s (%s): offsets verified in its code", file[0] ? file : f->path,
		n.version[0] ? n.version : "version not found");
	return true;
}

/* A process of a probed nginx: keyed from its first request (its word says nginx). */
static void ngxprobes_follow(void *state, struct observer *obs, __u32 tgid, __u32 word)
{
	(void)state;
	observer__proc_word(obs, tgid, word | CLAIMD_PROC_TRACED, 0);
}

static void ngxprobes_status(const void *state, struct json_object *o)
{
	const struct ngxprobes *np = state;

	json_object_object_add(o, "nginx_files", json_object_new_int(np ? np->files : 0));
	json_object_object_add(o, "nginx_refused", json_object_new_int(np ? np->refused : 0));
}

static const struct probe_runtime nginx_runtime = {
	.name = "nginx",
	.exe = true,
	.word = CLAIMD_PROC_NGINX,
	.state_size = sizeof(struct ngxprobes),
	.probe = ngxprobes_probe,
	.follow = ngxprobes_follow,
	.status = ngxprobes_status,
};
PROBE_RUNTIME(nginx_runtime);
