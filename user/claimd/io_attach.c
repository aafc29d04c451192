// SPDX-License-Identifier: GPL-2.0
/* tp_io_x on the exit tracepoints of the syscalls it follows; see io_attach.h. */
#include <errno.h>

#include "io_attach.h"

/* bpf/sysnr.bpf.h has their numbers; sys_exit_read is the section's. */
static const char *const io_tracepoints[IO_ATTACH_MAX] = {
	"sys_exit_recvfrom", "sys_exit_readv",	"sys_exit_recvmsg", "sys_exit_write",
	"sys_exit_sendto",   "sys_exit_writev", "sys_exit_sendmsg", "sys_exit_sendfile64",
};

int io_attach(struct bpf_program *prog, struct bpf_link *links[IO_ATTACH_MAX])
{
	int i, err;

	for (i = 0; i < IO_ATTACH_MAX; i++) {
		links[i] = bpf_program__attach_tracepoint(prog, "syscalls", io_tracepoints[i]);
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
