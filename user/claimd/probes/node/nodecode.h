/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A Node.js program read: is it node, and where does its code keep what
 * Node's probe reads (bpf/runtimes/node.c, bpf/node.bpf.h)? Each offset is
 * found in a function of the program that uses it, and each is checked
 * against a second function where one can be: a program built otherwise
 * (a changed layout, code claimd does not follow) is refused, naming what
 * it did not show.
 */
#ifndef CLAIMD_NODECODE_H
#define CLAIMD_NODECODE_H

#include <stdbool.h>
#include <stdint.h>

/* The function Node's probe is attached to: the HTTP parser's Execute(data, len). */
#define NODECODE_PROBED_FN "_ZN4node12_GLOBAL__N_16Parser7ExecuteEPKcm"
/* ... and AsyncWrap::AsyncReset, where an async resource gets its id and trigger. */
#define NODECODE_RESET_FN "_ZN4node9AsyncWrap10AsyncResetEN2v85LocalINS1_6ObjectEEEdb"

struct nodecode {
	/* Offsets: an async resource's id; its realm, the realm's environment,
	 * the environment's async_id_fields (their buffer's address). */
	uint16_t async_id, realm, env, fields;
	/* Where AsyncReset has stored both (its offset in the function), this in
	 * general register reset_reg (0-15: RAX, RBX, RCX, RDX, RSI, RDI, RBP, RSP,
	 * R8-R15). */
	uint64_t reset_at;
	uint8_t reset_reg;
	const char *unverified; /* the first thing its code does not show, or NULL */
	const char *where;	/* ... the function it was sought in */
};

/* The offsets as the parse probe's cookie: four 16-bit fields, the async id's lowest. */
uint64_t nodecode__cookie(const struct nodecode *n);

/* The AsyncReset probe's cookie: this's register (bits 0-7), the async id's offset (16-31). */
uint64_t nodecode__reset_cookie(const struct nodecode *n);

/*
 * Reads the program at path into *n: 0; -1 with errno ENOEXEC when it is
 * no Node.js (no NODECODE_RESET_FN among its functions), else errno.
 */
int nodecode__open(const char *path, struct nodecode *n);

#endif
