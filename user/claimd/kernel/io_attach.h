/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The observer's program for a connection's bytes (tp_io_x, bpf/sockio.c)
 * follows both directions: its section attaches it to the raw tracepoint
 * sock_recv_length, and this to sock_send_length too. Used by claimd and by the skeleton
 * tests alike.
 */
#ifndef CLAIMD_IO_ATTACH_H
#define CLAIMD_IO_ATTACH_H

#include <bpf/libbpf.h>

#define IO_ATTACH_MAX 1 /* tracepoints besides the section's own */

/* Attaches prog; returns 0 or -errno (then nothing stays attached). */
int io_attach(struct bpf_program *prog, struct bpf_link *links[IO_ATTACH_MAX]);
void io_detach(struct bpf_link *links[IO_ATTACH_MAX]);

#endif /* CLAIMD_IO_ATTACH_H */
