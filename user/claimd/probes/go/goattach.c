// SPDX-License-Identifier: GPL-2.0
/* The Go probes into one executable; see goattach.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/observer_api.h"
#include "probes/go/goattach.h"
#include "probes/go/goexec.h"

#define GO_LINKS_MAX (GOFN__COUNT + GOFN__COUNT * GOEXEC_RETS_MAX)

/* One uprobe at a file offset of path, its cookie the executable's slot. */
static struct bpf_link *attach_at(struct bpf_object *obj, const char *prog, const char *path,
				  uint64_t off, __u32 slot)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = slot);
	struct bpf_program *p = bpf_object__find_program_by_name(obj, prog);

	if (!p) {
		errno = ENOENT;
		return NULL;
	}
	return bpf_program__attach_uprobe_opts(p, -1, path, off, &opts);
}

/* The programs at a function's entry and at each of its RETs (NULL: none). */
static const char *const entry_prog[GOFN__COUNT] = {
	[GOFN_SERVE] = "go_serve",
	[GOFN_ROUND_TRIP] = "go_round_trip",
	[GOFN_NEWPROC] = "go_newproc",
	[GOFN_GRPC_SERVE] = "go_grpc_serve",
	[GOFN_GRPC_STATUS] = "go_grpc_status",
	[GOFN_GRPC_INVOKE] = "go_grpc_invoke",
	[GOFN_CONN_ROUND_TRIP] = "go_conn_round_trip",
};
/*
 * Entry programs that take a probe at the function's stack check
 * (goexec_fn.stack_check; go_entry_layout in bpf/runtimes/go.c): one trap
 * a call there, two at the first instruction. runtime.newproc1 runs on
 * the system stack: its probe stays at its entry.
 */
static const bool entry_at_stack_check[GOFN__COUNT] = {
	[GOFN_SERVE] = true,	   [GOFN_ROUND_TRIP] = true,  [GOFN_GRPC_SERVE] = true,
	[GOFN_GRPC_STATUS] = true, [GOFN_GRPC_INVOKE] = true, [GOFN_CONN_ROUND_TRIP] = true,
};
static const char *const ret_prog[GOFN__COUNT] = {
	[GOFN_SERVE] = "go_serve_ret",
	[GOFN_ROUND_TRIP] = "go_round_trip_ret",
	[GOFN_NEWPROC] = "go_newproc_ret",
	[GOFN_GRPC_SERVE] = "go_serve_ret",
	[GOFN_GRPC_INVOKE] = "go_grpc_invoke_ret",
};

/*
 * The probes of the functions in mask (bits by goexec_fn_id) that the
 * program has (fn, by id), each or none, handed to the observer.
 */
static int attach_fns(struct observer *obs, __u32 slot, const char *path,
		      const struct goexec_fn *fn, unsigned int mask)
{
	struct bpf_object *obj = observer__object(obs);
	struct bpf_link **links = calloc(GO_LINKS_MAX, sizeof(*links));
	int f, n = 0, err = 0;
	bool at_check;
	uint32_t i;

	if (!links)
		return -ENOMEM;
	for (f = 0; f < GOFN__COUNT && !err; f++) {
		if (!(mask & 1u << f) || !entry_prog[f] || !fn[f].entry ||
		    (ret_prog[f] && !fn[f].n_rets))
			continue; /* not in this program: its part stays out */
		at_check = entry_at_stack_check[f] && fn[f].stack_check;
		links[n] = attach_at(obj, entry_prog[f], path,
				     at_check ? fn[f].stack_check : fn[f].entry,
				     slot | (at_check ? CLAIMD_GO_AT_STACK_CHECK : 0));
		if (!links[n++]) {
			err = -errno;
			break;
		}
		for (i = 0; ret_prog[f] && i < fn[f].n_rets; i++) {
			links[n] = attach_at(obj, ret_prog[f], path, fn[f].rets[i], slot);
			if (!links[n++]) {
				err = -errno;
				break;
			}
		}
	}
	if (err) {
		while (n--)
			bpf_link__destroy(links[n]);
	} else {
		err = observer__keep_links(obs, links, n);
	}
	free(links);
	return err;
}

/* What each way of following a program probes (lineage apart, goattach_lineage). */
#define PROBES_PER_GOROUTINE                                                      \
	((1u << GOFN_SERVE) | (1u << GOFN_ROUND_TRIP) | (1u << GOFN_GRPC_SERVE) | \
	 (1u << GOFN_GRPC_STATUS) | (1u << GOFN_GRPC_INVOKE))
#define PROBES_BY_SYSCALLS (1u << GOFN_CONN_ROUND_TRIP)

int goattach(struct observer *obs, __u32 slot, const char *path, const struct goexec *g,
	     bool by_syscalls)
{
	struct bpf_map *exes = bpf_object__find_map_by_name(observer__object(obs), "go_exes");

	if (slot >= CLAIMD_GO_EXES_MAX)
		return -ENOSPC;
	if (!exes)
		return -ENOENT;
	if (bpf_map_update_elem(bpf_map__fd(exes), &slot, &g->offsets, 0))
		return -errno;
	return attach_fns(obs, slot, path, g->fn,
			  by_syscalls ? PROBES_BY_SYSCALLS : PROBES_PER_GOROUTINE);
}

int goattach_lineage(struct observer *obs, __u32 slot, const char *path,
		     const struct goexec_fn *newproc)
{
	struct goexec_fn fn[GOFN__COUNT] = {};

	fn[GOFN_NEWPROC] = *newproc;
	return attach_fns(obs, slot, path, fn, 1u << GOFN_NEWPROC);
}
