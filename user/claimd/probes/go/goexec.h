/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Go executables: what claimd needs to put uprobes in one. From the ELF file
 * alone (no symbol table needed: binaries stripped with -ldflags=-s -w keep
 * .gopclntab): the Go version (.go.buildinfo), the file offset of each
 * function the Go probes use (.gopclntab), the file offset of every RET
 * instruction in it (Go moves goroutine stacks: uretprobes would corrupt
 * them, so a function's return is probed at each RET), and the offsets of
 * the struct fields the probes read (headers/goprobe.h).
 *
 * Binaries without the register ABI (Go before 1.17 on amd64) are found and
 * reported, not probed: their HTTP stays with the syscall path.
 */
#ifndef CLAIMD_GOEXEC_H
#define CLAIMD_GOEXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "goprobe.h"

#define GOEXEC_RETS_MAX 32 /* RETs probed per function; more: not probed */

enum goexec_fn_id {
	GOFN_SERVE = 0,	  /* net/http.serverHandler.ServeHTTP: a request, start to end */
	GOFN_ROUND_TRIP,  /* net/http.(*Transport).roundTrip: a call, start to end */
	GOFN_NEWPROC,	  /* runtime.newproc1: who started which goroutine */
	GOFN_GRPC_SERVE,  /* grpc.(*Server).handleStream: a gRPC request, start to end */
	GOFN_GRPC_STATUS, /* transport.(*http2Server).WriteStatus: its status */
	GOFN_GRPC_INVOKE, /* grpc.(*ClientConn).Invoke: a unary call, start to end */
	GOFN__COUNT,
};

struct goexec_fn {
	uint64_t entry;	 /* file offset of the first instruction; 0: not in this binary */
	uint32_t size;	 /* bytes */
	uint32_t n_rets; /* RET instructions found */
	uint64_t rets[GOEXEC_RETS_MAX];
};

struct goexec {
	char version[32]; /* "go1.19.8" */
	int major, minor;
	bool regabi;	/* arguments in registers, the goroutine in R14 */
	bool stripped;	/* no .symtab */
	bool has_dwarf; /* .debug_info present */
	uint32_t nfunc; /* functions in .gopclntab */
	struct go_offsets offsets;
	struct goexec_fn fn[GOFN__COUNT];
};

/* The symbol each goexec_fn_id stands for. */
const char *goexec__fn_name(enum goexec_fn_id id);

/*
 * Reads the Go executable at path into g. 0; -1 with errno: ENOEXEC when
 * the file is not a Go program (no .go.buildinfo or .gopclntab), ENOTSUP for
 * a pclntab format it does not know, else the I/O error.
 */
int goexec__open(const char *path, struct goexec *g);

/*
 * Can the probes follow HTTP in it? The register ABI, and at least the
 * server or the client functions, each with its RETs found. why: a reason
 * when not (for the log and claimctl).
 */
bool goexec__probeable(const struct goexec *g, const char **why);

#endif
