/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The syscalls behind a socket's bytes (bpf/sockio.c, tp_io_x): the
 * socket tracepoints say bytes moved, the syscall's number in its saved
 * registers says through which call, and so where its buffer and its
 * socket's descriptor are. And connect, which another thread may still be
 * in (bpf/go_dials.c). The architecture's own table
 * (arch/<arch>/.../unistd), for the two claimd is built for.
 */
#ifndef CLAIMD_SYSNR_BPF_H
#define CLAIMD_SYSNR_BPF_H

#if defined(__TARGET_ARCH_x86)
#define SYSNR_READ	 0
#define SYSNR_WRITE	 1
#define SYSNR_READV	 19
#define SYSNR_WRITEV	 20
#define SYSNR_SENDFILE64 40
#define SYSNR_CONNECT	 42
#define SYSNR_SENDTO	 44
#define SYSNR_RECVFROM	 45
#define SYSNR_SENDMSG	 46
#define SYSNR_RECVMSG	 47
#define SYSNR_SPLICE	 275
#define SYSNR_RECVMMSG	 299
#define SYSNR_SENDMMSG	 307
/* The syscall a task's saved registers belong to. */
#define SYSNR_OF(regs) ((long)(regs)->orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define SYSNR_READ	 63
#define SYSNR_WRITE	 64
#define SYSNR_READV	 65
#define SYSNR_WRITEV	 66
#define SYSNR_SENDFILE64 71
#define SYSNR_CONNECT	 203
#define SYSNR_SPLICE	 76
#define SYSNR_SENDTO	 206
#define SYSNR_RECVFROM	 207
#define SYSNR_SENDMSG	 211
#define SYSNR_RECVMSG	 212
#define SYSNR_RECVMMSG	 243
#define SYSNR_SENDMMSG	 269
#define SYSNR_OF(regs)	 ((long)(regs)->syscallno)
#else
#error "syscall numbers for this architecture are not known (bpf/sysnr.bpf.h)"
#endif

#endif /* CLAIMD_SYSNR_BPF_H */
