/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The observer's read/write program (tp_io_x, bpf/syscalls.c) follows every
 * syscall that moves a connection's bytes from one program: its section
 * attaches it to sys_exit_read, and this attaches it to the others' exit
 * tracepoints. Used by claimd and by the skeleton tests alike.
 */
#ifndef CLAIMD_IO_ATTACH_H
#define CLAIMD_IO_ATTACH_H

#include <bpf/libbpf.h>

#define IO_ATTACH_MAX 8 /* tracepoints besides the section's own */

/* Attaches prog; returns 0 or -errno (then nothing stays attached). */
int io_attach(struct bpf_program *prog, struct bpf_link *links[IO_ATTACH_MAX]);
void io_detach(struct bpf_link *links[IO_ATTACH_MAX]);

#endif /* CLAIMD_IO_ATTACH_H */
