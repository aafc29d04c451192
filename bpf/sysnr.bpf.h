/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The numbers of the syscalls one program follows (bpf/syscalls.c, tp_io_x):
 * it is attached to the exit tracepoint of each, and tells them apart by
 * the number the tracepoint hands it (trace_event_raw_sys_exit.id). The
 * architecture's own table (arch/<arch>/.../unistd), for the two claimd is
 * built for.
 */
#ifndef CLAIMD_SYSNR_BPF_H
#define CLAIMD_SYSNR_BPF_H

#if defined(__TARGET_ARCH_x86)
#define SYSNR_READ	 0
#define SYSNR_WRITE	 1
#define SYSNR_READV	 19
#define SYSNR_WRITEV	 20
#define SYSNR_SENDFILE64 40
#define SYSNR_SENDTO	 44
#define SYSNR_RECVFROM	 45
#define SYSNR_SENDMSG	 46
#define SYSNR_RECVMSG	 47
#elif defined(__TARGET_ARCH_arm64)
#define SYSNR_READ	 63
#define SYSNR_WRITE	 64
#define SYSNR_READV	 65
#define SYSNR_WRITEV	 66
#define SYSNR_SENDFILE64 71
#define SYSNR_SENDTO	 206
#define SYSNR_RECVFROM	 207
#define SYSNR_SENDMSG	 211
#define SYSNR_RECVMSG	 212
#else
#error "syscall numbers for this architecture are not known (bpf/sysnr.bpf.h)"
#endif

#endif /* CLAIMD_SYSNR_BPF_H */
