/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Loops without a call per iteration. bpf_loop() runs its callback through
 * a call and a return each time; with return thunks (spec_rstack_overflow:
 * "Safe RET" on AMD hosts) every return mispredicts, and a framing step cost
 * 7-8 ns of call alone (docs/performance.md). can_loop is the may_goto
 * instruction (Linux 6.9): the verifier bounds the loop at run time instead
 * of walking every iteration, and prunes the loop once its state repeats.
 * For that, nothing a loop carries from one iteration to the next may be a
 * scalar the verifier knows exactly: keep positions in map memory (loaded
 * back as unknown values) and mask them where they index.
 *
 * clang 14 has no may_goto mnemonic: the instruction is spelled in bytes
 * (opcode BPF_JMP | BPF_JCOND, the jump offset in its off field), as the
 * kernel's own selftests do for compilers without __BPF_FEATURE_MAY_GOTO.
 */
#ifndef CLAIMD_LOOP_BPF_H
#define CLAIMD_LOOP_BPF_H

/* The asm goto operands as the kernel writes them. */
/* clang-format off */
#ifdef __BPF_FEATURE_MAY_GOTO
#define CLAIMD_MAY_GOTO(label) asm volatile goto("may_goto %l[" #label "]" :::: label)
#else
/*
 * The offset is written as a .long: the jump's 16 bits, then the first half
 * of imm (0). A jump counts instructions of 8 bytes from the next one:
 * (label - 1b - 8) / 8, masked to the field's 16 bits.
 */
#define CLAIMD_MAY_GOTO(label)							\
	asm volatile goto("1:.byte 0xe5; .byte 0;"				\
			  ".long ((%l[" #label "] - 1b - 8) / 8) & 0xffff;"	\
			  ".short 0" :::: label)
#endif

/* True while the loop may go on: for (...; cond && can_loop; ...). */
#define can_loop							\
	({								\
		__label__ l_break, l_continue;				\
		int ret_ = 1;						\
		CLAIMD_MAY_GOTO(l_break);				\
		goto l_continue;					\
	l_break:							\
		ret_ = 0;						\
	l_continue:;							\
		ret_;							\
	})
/* clang-format on */

#endif /* CLAIMD_LOOP_BPF_H */
