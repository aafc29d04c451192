/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Error ownership as the kernel computes it, and the read-only verdict map
 * that libclaim reads with no system call.
 *
 * The verdict of a failed ingress (design.md, the decision matrix):
 *   1. no egress of it failed                           -> claimed
 *   2. a failed egress said "x-error-claim: unclaimed",
 *      or failed on a fail-close edge                   -> unclaimed
 *   3. every failed egress is on a fail-open edge       -> claimed
 *   4. otherwise (unknown edges)                        -> unclaimed
 * A failed call followed by a successful retry of it does not count as
 * failed. The cause is the failed egress that decided.
 *
 * The verdict map is an mmapable array of CLAIM_SLOTS slots. Slot 0 holds a
 * header; a thread's slot is claim_thread_index(tid), among the first
 * CLAIM_THREAD_SLOTS; a Go request's is its serving goroutine's
 * (claim_goroutine_index), among the CLAIM_GOROUTINE_SLOTS after them, so
 * that no thread's writes land on a goroutine's (threads' ids run over
 * the whole of their region within pid_max). A slot names the thread or
 * goroutine it describes (a reused slot is detected) and carries a
 * sequence number, odd while the kernel writes it: read it, copy, read it
 * again.
 */
#ifndef CLAIMD_VERDICT_H
#define CLAIMD_VERDICT_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "claim_types.h"

#define CLAIM_MAP_MAGIC 0x4d49414cu /* "CLAIM" in spirit: 'L','A','I','M' */
/*
 * 3: goroutines' slots a region of their own, after the threads'; 2 had
 * them among the threads'. 2: a slot is a cache line (64 bytes); 1 had two
 * in a line.
 */
#define CLAIM_MAP_VERSION     3
#define CLAIM_THREAD_SLOTS    65536
#define CLAIM_GOROUTINE_SLOTS 65536
#define CLAIM_SLOTS	      (CLAIM_THREAD_SLOTS + CLAIM_GOROUTINE_SLOTS)

/*
 * An edge's class (design.md: the ratio's thresholds), one table:
 * X(enum, number, name). The number is what the class map holds and
 * claimd_edge_class exports.
 */
#define CLAIM_CLASS_TABLE(X)                       \
	X(CLAIM_CLASS_UNKNOWN, 0, "unknown")       \
	X(CLAIM_CLASS_FAIL_CLOSE, 1, "fail-close") \
	X(CLAIM_CLASS_FAIL_OPEN, 2, "fail-open")

enum claim_class {
	CLAIM_CLASS_TABLE(CLAIM_TYPES_ENUM_) CLAIM_CLASS__COUNT,
};

/*
 * Slot 0 of the verdict map. The map is frozen, so not even claimd can write
 * it through the bpf() syscall: claimd sets 'alive' and 'generation' by
 * running the claimd_hdr program (BPF_PROG_TEST_RUN) with a claim_hdr_args
 * as its one u64 argument (alive in the low half).
 */
struct claim_map_header {
	__u32 magic;
	__u32 version;
	__u32 slots;
	__u32 slot_size;
	__u32 alive;	  /* 1 while a claimd keeps the slots current */
	__u32 generation; /* bumped by each claimd that takes the map over */
	__u64 pad[5];
};

struct claim_hdr_args {
	__u32 alive;
	__u32 generation;
};

/*
 * One thread's running verdict: what it would be if its service failed now.
 * A cache line each: the kernel writes a slot twice a request, and two
 * threads of a service (consecutive tids) sharing a line on two CPUs made
 * each write wait for the line to come back from the other.
 */
struct claim_slot {
	__u32 seq;    /* odd while being written */
	__u32 tid;    /* the thread this slot describes; 0 in a goroutine's */
	__u8 active;  /* 1 while the thread (goroutine) serves an ingress */
	__u8 verdict; /* enum claim_verdict */
	__u8 rule;    /* enum claim_rule */
	__u8 pad;
	__u16 cause_port; /* callee of the deciding egress, if any */
	__u16 pad2;
	__u8 cause_addr[16];
	__u64 goroutine; /* a goroutine's slot: its runtime.g's address; 0 in a thread's */
	__u32 tgid;	 /* a goroutine's slot: its process */
	/* its process's count of calls outside requests when its request began (proc_word) */
	__u32 outside_seen;
	__u8 reserved[8];
	/*
	 * Not this slot's thread's: the process whose main thread's slot this is
	 * (claim_thread_index(tgid)), in the high half, and its count of
	 * calls outside requests (a worker's, a background job's) in the low,
	 * written at each such call. A request whose outside_seen is not that
	 * count may have had a call made for it that its log lacks: its
	 * running verdict is unknown (untied-call), as its recorded one is.
	 * CLAIM_PROC_COLLIDED in the high half: two processes met here, no
	 * count is known.
	 */
	__u64 proc_word;
};

#define CLAIM_PROC_COLLIDED 0xffffffffu

/*
 * Is the running verdict in a slot of process pid, whose request saw
 * outside_seen calls outside requests at its start, unsure, given the
 * proc_word of pid's main thread's slot? The same test in every reader.
 */
static inline int claim_proc_unsure(__u64 proc_word, __u32 pid, __u32 outside_seen)
{
	__u32 who = proc_word >> 32;

	if (who == CLAIM_PROC_COLLIDED)
		return 1;
	/* Another process's word: pid never made such a call (its own would have collided). */
	if (who != pid)
		return outside_seen != 0;
	return (__u32)proc_word != outside_seen;
}

/* The slot of thread (or process: its main thread's) id. */
static inline __u32 claim_thread_index(__u32 id)
{
	return 1 + id % (CLAIM_THREAD_SLOTS - 1);
}

/*
 * The slot of the request goroutine g (the address of its runtime.g, which
 * Go keeps in R14 and in the thread's TLS) of process tgid serves. Readers in
 * other languages compute the same: the 64-bit product wraps, its high half
 * taken.
 */
static inline __u32 claim_goroutine_index(__u32 tgid, __u64 g)
{
	__u64 h = (g ^ ((__u64)tgid << 32)) * 0x9e3779b97f4a7c15ULL;

	return CLAIM_THREAD_SLOTS + (__u32)(h >> 32) % CLAIM_GOROUTINE_SLOTS;
}

/* Key of the class map claimd fills: one caller instance, one callee address. */
struct claimd_edge_key {
	__u32 tgid;	   /* the caller's process */
	__u16 local_port;  /* the caller's service port */
	__u16 callee_port; /* host order */
	__u8 callee_addr[16];
};

#endif /* CLAIMD_VERDICT_H */
