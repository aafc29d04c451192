/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The window of user memory the framer scans: bytes are copied SCAN_WINDOW
 * at a time into per-CPU scratch (a map of its includer's) and stepped
 * through headers/http_parse.h by scan.c.
 */
#ifndef CLAIMD_SCAN_BPF_H
#define CLAIMD_SCAN_BPF_H

#include "loop.bpf.h"

#define SCAN_WINDOW 512 /* bytes copied from user memory at a time */

/* Bytes copied out of user memory for the parser. */
struct scan_buf {
	__u8 data[SCAN_WINDOW];
	/*
	 * scan.c's position in data: kept here, in the map, where the verifier
	 * does not follow its value, rather than in the loop's state on the
	 * stack, where every value it took made a state of its own.
	 */
	__u32 pos;
	__u32 pad;
};

#endif /* CLAIMD_SCAN_BPF_H */
