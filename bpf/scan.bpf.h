/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The window of user memory the framer scans: bytes are copied SCAN_WINDOW
 * at a time into scratch (a map of its includer's) and stepped through
 * headers/http_parse.h by scan.c.
 */
#ifndef CLAIMD_SCAN_BPF_H
#define CLAIMD_SCAN_BPF_H

#include "loop.bpf.h"

#define SCAN_WINDOW    512 /* bytes copied from user memory at a time */
#define SCAN_IOV_BLOCK 8   /* iovec entries copied from user memory at a time */

struct uiovec {
	__u64 base;
	__u64 len;
};

/* Bytes copied out of user memory for the parser. */
struct scan_buf {
	__u8 data[SCAN_WINDOW];
	/*
	 * scan.c's position in data: kept here, in the map, where the verifier
	 * does not follow its value, rather than in the loop's state on the
	 * stack, where every value it took made a state of its own.
	 */
	__u32 pos;
	/* feed_segment's rounds: the bytes data holds, from this offset in the syscall's bytes */
	__u32 wlen;
	__u64 wbase;
	__u64 off; /* bytes framed so far */
	__u32 rounds;
	__u32 pad;
	/* The segment feed_segment frames: its user memory and length, set by its caller. */
	__u64 ubuf;
	__u64 len;
	/* A vectored syscall's entries, copied a block at a time (stream.c, iov_step). */
	struct uiovec iov[SCAN_IOV_BLOCK];
};

/*
 * The eight bytes at data[idx] (idx <= SCAN_WINDOW - 8), as one load. clang
 * cannot tell the address is aligned and splits a plain load into eight byte
 * loads and fourteen shifts and ors (clang 14): a fifth of a framing step.
 * The kernel lets a program load unaligned from a map value where the CPU
 * does that well (x86, arm64: no BPF_F_STRICT_ALIGNMENT here).
 */
static __always_inline __u64 scan_word_at(const struct scan_buf *b, __u32 idx)
{
	const __u8 *p = &b->data[idx];
	__u64 w;

	asm volatile("%0 = *(u64 *)(%1 + 0)" : "=r"(w) : "r"(p));
	return w;
}

#endif /* CLAIMD_SCAN_BPF_H */
