// SPDX-License-Identifier: GPL-2.0
/* tp_io_x on both socket tracepoints; see io_attach.h. */
#include <errno.h>

#include "kernel/io_attach.h"

/* The section's is sock_recv_length. */
static const char *const io_tracepoints[IO_ATTACH_MAX] = { "sock_send_length" };

int io_attach(struct bpf_program *prog, struct bpf_link *links[IO_ATTACH_MAX])
{
	int i, err;

	for (i = 0; i < IO_ATTACH_MAX; i++) {
		links[i] = bpf_program__attach_raw_tracepoint(prog, io_tracepoints[i]);
		if (!links[i]) {
			err = -errno;
			io_detach(links);
			return err;
		}
	}
	return 0;
}

void io_detach(struct bpf_link *links[IO_ATTACH_MAX])
{
	int i;

	for (i = 0; i < IO_ATTACH_MAX; i++) {
		bpf_link__destroy(links[i]);
		links[i] = NULL;
	}
}
