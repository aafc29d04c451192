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

/*
 * The function Node's parse probe is attached to: the HTTP parser's
 * OnStreamRead(nread, buf), where the server's parser is handed the bytes
 * just read from its connection (a client's parser is fed from JavaScript,
 * and never passes there); and its thunk, which the stream's listener
 * table calls, this its StreamListener part (thunk_adjust bytes in).
 */
#define NODECODE_PROBED_FN "_ZN4node12_GLOBAL__N_16Parser12OnStreamReadElRK8uv_buf_t"
/* AsyncWrap::AsyncReset, where an async resource gets its id and trigger: node's mark. */
#define NODECODE_RESET_FN "_ZN4node9AsyncWrap10AsyncResetEN2v85LocalINS1_6ObjectEEEdb"
/*
 * TCPWrap::New, which makes every TCP socket's wrap (its constructor
 * inlined): the lineage probe sits after the base's constructor it calls,
 * which gave the socket its ids.
 */
#define NODECODE_TCP_FN "_ZN4node7TCPWrap3NewERKN2v820FunctionCallbackInfoINS1_5ValueEEE"
#define NODECODE_TCP_BASE_FN                                                                  \
	"_ZN4node14ConnectionWrapINS_7TCPWrapE8uv_tcp_sEC1EPNS_11EnvironmentEN2v85LocalINS6_" \
	"6Objec"                                                                              \
	"tEEENS_9AsyncWrap12ProviderTypeE"

struct nodecode {
	/* Offsets: an async resource's id; its realm, the realm's environment,
	 * the environment's async_id_fields (their buffer's address). */
	uint16_t async_id, realm, env, fields;
	/* Where a new TCP socket's TCPWrap has its id and trigger (an offset in
	 * NODECODE_TCP_FN: after its base's constructor, at the first
	 * instruction from there the kernel emulates at a uprobe where the
	 * code allows, tcp_emulated), the wrap in general register tcp_reg
	 * (0-15: RAX, RBX, RCX, RDX, RSI, RDI, RBP, RSP, R8-R15). */
	uint64_t tcp_at;
	uint8_t tcp_reg;
	bool tcp_emulated;
	/* OnStreamRead's thunk: its address's offset from the function's and
	 * the adjustment to this; thunk_adjust 0: none found. */
	uint16_t thunk_adjust;
	/* Where the probes go, as offsets in the file (the probe is attached by
	 * offset: libbpf would read the 185,000 symbols again per probe): the
	 * parser's OnStreamRead, its thunk (if thunk_adjust), TCPWrap::New + tcp_at. */
	uint64_t parse_off, thunk_off, tcp_off;
	const char *unverified; /* the first thing its code does not show, or NULL */
	const char *where;	/* ... the function it was sought in */
};

/*
 * The offsets as the parse probe's cookie, with adjust (what this's
 * address lies past the parser's: 0 at the function, thunk_adjust at its
 * thunk): async id (bits 0-7), realm (8-15), environment (16-31),
 * async_id_fields (32-47), adjust (48-63).
 */
uint64_t nodecode__cookie(const struct nodecode *n, uint16_t adjust);

/* The TCPWrap probe's cookie: this's register (bits 0-7), the async id's offset (16-31). */
uint64_t nodecode__tcp_cookie(const struct nodecode *n);

/*
 * Reads the program at path into *n: 0; -1 with errno ENOEXEC when it is
 * no Node.js (no NODECODE_RESET_FN among its functions), else errno.
 */
int nodecode__open(const char *path, struct nodecode *n);

#endif
