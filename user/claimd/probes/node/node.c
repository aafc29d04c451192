// SPDX-License-Identifier: GPL-2.0
/*
 * Node.js, a uprobe runtime (probes/runtime.h): in, followed processes'
 * executables; out, probes in each node whose code shows where it keeps
 * what they read (nodecode.h), at its HTTP parser's OnStreamRead (and its
 * thunk) and where a new TCP socket's TCPWrap has its id
 * (bpf/runtimes/node.c), its
 * layout their cookies, and its processes
 * marked CLAIMD_PROC_NODE: their requests held by their connections from
 * the first, each call tied by the async context that writes it
 * (bpf/node.bpf.h). A node that does not verify is refused, said and
 * counted (node_refused): its processes are followed as any event loop's
 * (keyed.c), by what their calls carry, or not at all (unknown).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <json-c/json.h>

#include "kernel/observer_api.h"
#include "log.h"
#include "probes/node/nodecode.h"
#include "probes/runtime.h"

#define NODE_FILES_MAX 16

/* Every probe, or none: 0 or -errno. */
static int node_attach(struct observer *obs, const char *path, const struct nodecode *n)
{
	const struct probe_fn fns[] = {
		{ .prog = "node_parser_read",
		  .off = n->parse_off,
		  .cookie = nodecode__cookie(n, 0) },
		{ .prog = "node_tcp_wrap", .off = n->tcp_off, .cookie = nodecode__tcp_cookie(n) },
		{ .prog = "node_parser_read",
		  .off = n->thunk_off,
		  .cookie = nodecode__cookie(n, n->thunk_adjust) },
	};

	return probes__attach_fns(obs, path, fns, n->thunk_adjust ? 3 : 2, true);
}

static bool nodeprobes_probe(void *state, struct observer *obs, const struct probe_file *f,
			     __u32 *word)
{
	struct probes_verified *np = state;
	struct nodecode n;
	char file[256];
	const char *name;
	int err;

	(void)word; /* CLAIMD_PROC_NODE, the runtime's own */
	if (nodecode__open(f->path, &n)) {
		if (errno != ENOEXEC)
			pr_warn("node: cannot read the program of process %u: %s", f->tgid,
				strerror(errno));
		return false;
	}
	name = probes__file_name(f, file, sizeof(file));
	if (n.unverified) {
		np->refused++;
		pr_warn("node: %s refused: its code does not show %s (sought in %s); its calls "
			"are tied only by what they carry, else its requests are unknown",
			name, n.unverified, n.where);
		return false;
	}
	err = np->files >= NODE_FILES_MAX ? -ENOSPC : node_attach(obs, f->path, &n);
	if (err) {
		pr_warn("cannot probe node's HTTP parser in %s: %s", name, strerror(-err));
		return false;
	}
	np->files++;
	pr_info("node: %s: layout found in its code (async id +0x%x; realm +0x%x, environment "
		"+0x%x, async_id_fields +0x%x; a new socket's ids at TCPWrap+0x%llx%s; "
		"the parser's OnStreamRead%s): each call tied by the async context writing it",
		name, n.async_id, n.realm, n.env, n.fields, (unsigned long long)n.tcp_at,
		n.tcp_emulated ? ", an instruction the kernel emulates" : ", one it steps",
		n.thunk_adjust ? " and its thunk" : "");
	return true;
}

static void nodeprobes_status(const void *state, struct json_object *o)
{
	probes__verified_status(state, "node", o);
}

static const struct probe_runtime node_runtime = {
	.name = "node",
	.exe = true,
	.word = CLAIMD_PROC_NODE,
	.state_size = sizeof(struct probes_verified),
	.probe = nodeprobes_probe,
	.follow = probes__follow_word, /* its processes keyed from their first request */
	.status = nodeprobes_status,
};
PROBE_RUNTIME(node_runtime);
