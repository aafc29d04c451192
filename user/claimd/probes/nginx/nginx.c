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

static const struct probe_fn nginx_fns[] = {
	{ .prog = "nginx_chain_writer", .func = NGXCODE_PROBED_FN },
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
	struct probes_verified *np = state;
	char file[256];
	struct ngxcode n;
	const char *name;

	(void)word; /* CLAIMD_PROC_NGINX, the runtime's own */
	if (ngxcode__open(f->path, &n)) {
		if (errno != ENOEXEC)
			pr_warn("nginx: cannot read the program of process %u: %s", f->tgid,
				strerror(errno));
		return false;
	}
	name = probes__file_name(f, file, sizeof(file));
	if (n.unverified) {
		np->refused++;
		pr_warn("nginx: %s (%s) refused: its code does not show %s where claimd reads it "
			"(sought in %s); its calls are tied only by what they carry, else its "
			"requests are unknown",
			name, n.version[0] ? n.version : "version not found", n.unverified,
			n.where);
		return false;
	}
	if (!probes__attach_set(obs, f, &nginx_set, &np->files))
		return false;
	pr_info("nginx: %s (%s): offsets verified in its code", name,
		n.version[0] ? n.version : "version not found");
	return true;
}

static void ngxprobes_status(const void *state, struct json_object *o)
{
	probes__verified_status(state, "nginx", o);
}

static const struct probe_runtime nginx_runtime = {
	.name = "nginx",
	.exe = true,
	.word = CLAIMD_PROC_NGINX,
	.state_size = sizeof(struct probes_verified),
	.probe = ngxprobes_probe,
	.follow = probes__follow_word, /* its processes keyed from their first request */
	.status = ngxprobes_status,
};
PROBE_RUNTIME(nginx_runtime);
