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

int goattach(struct observer *obs, __u32 slot, const char *path, const struct goexec *g)
{
	static const char *const entry[GOFN__COUNT] = {
		[GOFN_SERVE] = "go_serve",
		[GOFN_ROUND_TRIP] = "go_round_trip",
		[GOFN_NEWPROC] = "go_newproc",
		[GOFN_GRPC_SERVE] = "go_grpc_serve",
		[GOFN_GRPC_STATUS] = "go_grpc_status",
		[GOFN_GRPC_INVOKE] = "go_grpc_invoke",
	};
	/* Functions whose return matters: a probe at each of their RETs. */
	static const char *const ret[GOFN__COUNT] = {
		[GOFN_SERVE] = "go_serve_ret",
		[GOFN_ROUND_TRIP] = "go_round_trip_ret",
		[GOFN_NEWPROC] = "go_newproc_ret",
		[GOFN_GRPC_SERVE] = "go_serve_ret",
		[GOFN_GRPC_INVOKE] = "go_grpc_invoke_ret",
	};
	struct bpf_object *obj = observer__object(obs);
	struct bpf_map *exes = bpf_object__find_map_by_name(obj, "go_exes");
	struct bpf_link **links;
	int f, n = 0, err = 0;
	uint32_t i;

	if (slot >= CLAIMD_GO_EXES_MAX)
		return -ENOSPC;
	if (!exes)
		return -ENOENT;
	if (bpf_map_update_elem(bpf_map__fd(exes), &slot, &g->offsets, 0))
		return -errno;
	links = calloc(GO_LINKS_MAX, sizeof(*links));
	if (!links)
		return -ENOMEM;
	for (f = 0; f < GOFN__COUNT && !err; f++) {
		const struct goexec_fn *fn = &g->fn[f];

		if (!fn->entry || (ret[f] && !fn->n_rets))
			continue; /* not in this program: its part stays out */
		links[n] = attach_at(obj, entry[f], path, fn->entry, slot);
		if (!links[n++]) {
			err = -errno;
			break;
		}
		for (i = 0; ret[f] && i < fn->n_rets; i++) {
			links[n] = attach_at(obj, ret[f], path, fn->rets[i], slot);
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
