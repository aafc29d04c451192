/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Go executables: what claimd needs to put uprobes in one. From the ELF file
 * alone (no symbol table needed: binaries stripped with -ldflags=-s -w keep
 * .gopclntab): the Go version (.go.buildinfo), grpc-go's version (the
 * module list in .go.buildinfo, else grpc-go's user agent constant in
 * .rodata), the file offset of each function the Go probes use
 * (.gopclntab), the file offset of every RET instruction in it (Go moves
 * goroutine stacks: uretprobes would corrupt them, so a function's return
 * is probed at each RET), and the offsets of the struct fields the probes
 * read (headers/goprobe.h), from a table of the Go and grpc-go versions
 * whose layouts are known.
 *
 * A program the table does not cover is refused, never probed with a guessed
 * layout (a field read at the wrong offset gives a confident wrong answer):
 * goexec__refusal says why, and its HTTP stays with the syscall path.
 */
#ifndef CLAIMD_GOEXEC_H
#define CLAIMD_GOEXEC_H

#include <stdbool.h>
#include <stddef.h>
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
	/* net/http.(*persistConn).roundTrip: a goroutine hands its request to a connection */
	GOFN_CONN_ROUND_TRIP,
	GOFN_TLS_SERVER, /* crypto/tls.(*Conn).serverHandshake: it may serve TLS (not probed) */
	GOFN__COUNT,
};

/*
 * Why a Go executable is left to the syscall path, a class counted apart
 * (claimctl status, go_refused_by). The whole program is refused, never a
 * part of it: the Go probes turn the syscall path off for the whole process,
 * so a part not probed would be seen by neither (a gRPC call unseen, a
 * net/http request it failed would be claimed).
 */
enum goexec_refusal {
	GOEXEC_PROBED = 0,
	GOEXEC_ARCH,	     /* not amd64: the register ABI and RETs read are amd64's */
	GOEXEC_GO_VERSION,   /* a Go version the offset table does not cover, or none read */
	GOEXEC_GRPC_VERSION, /* grpc-go in it, its version not in the table, or not read */
	GOEXEC_NO_RUNTIME,   /* runtime.newproc1 or its RETs not found */
	GOEXEC_NO_HTTP,	     /* neither a net/http nor a grpc-go server or client */
	GOEXEC_ATTACH,	     /* the uprobes could not be attached (goprobes.c) */
	GOEXEC_OFF,	     /* claimd --no-go (goprobes.c) */
	GOEXEC__REFUSALS,
};

struct goexec_fn {
	uint64_t entry; /* file offset of the first instruction; 0: not in this binary */
	/*
	 * File offset of its prologue's stack check's branch (the JBE after
	 * CMP against the goroutine's stack guard, 16(R14)): a branch the
	 * kernel emulates at a uprobe, where a probe at the entry traps twice
	 * (the breakpoint, then a single step of the copied instruction). The
	 * arguments' registers are the entry's there; the branch taken, the
	 * function grows its stack and starts over. 0: no such prologue.
	 */
	uint64_t stack_check;
	uint32_t size;	 /* bytes */
	uint32_t n_rets; /* RET instructions found */
	uint64_t rets[GOEXEC_RETS_MAX];
};

struct goexec {
	char version[32]; /* "go1.19.8" */
	int major, minor; /* 0, 0: not read */
	bool amd64;
	bool regabi;	/* arguments in registers, the goroutine in R14 */
	bool stripped;	/* no .symtab */
	bool has_dwarf; /* .debug_info present */
	/*
	 * Its TLS segment holds runtime.g alone (8 bytes: runtime.tlsg, in an
	 * internally or an externally linked program), so a thread's g is at
	 * its fs base - 8, where go/claim reads it too.
	 */
	bool tls_g_below_fs;
	/*
	 * grpc-go's version, "1.33.3", from the module list (a module-mode
	 * build) or from its user agent "grpc-go/1.33.3" (every build: a
	 * constant in .rodata); "" when neither says, or when two disagree.
	 */
	char grpc_version[32];
	int grpc_major, grpc_minor;
	const char *grpc_from;	   /* where grpc_version was read; NULL: not read */
	bool grpc_conflict;	   /* two versions read (module list, user agents): none taken */
	uint32_t nfunc;		   /* functions in .gopclntab */
	struct go_offsets offsets; /* from the table: Go's and grpc-go's, 0 where not covered */
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
 * Can the probes follow HTTP in it? GOEXEC_PROBED when its Go version, and
 * its grpc-go version if grpc-go's probed functions are in it, are in the
 * offset table, runtime.newproc1 and at least a net/http or grpc-go server
 * or client are found, each with its RETs; else why not, and in *why a
 * sentence for the log (a static string).
 */
enum goexec_refusal goexec__refusal(const struct goexec *g, const char **why);

/*
 * Can a program the probes follow (goexec__refusal) be followed by its
 * syscalls instead (CLAIMD_PROC_GO_SYSCALLS: its requests framed from
 * their bytes, one probe per call)? When it is net/http alone: no grpc-go
 * (HTTP/2 multiplexes its streams), no TLS server (its requests' bytes
 * are ciphertext), (*persistConn).roundTrip found, and its g where the
 * programs read it (tls_g_below_fs). Else false, and in *why a sentence
 * for the log (a static string).
 */
bool goexec__by_syscalls(const struct goexec *g, const char **why);

/* The class's name in claimctl status: "go-version", "grpc-version", ... */
const char *goexec__refusal_name(enum goexec_refusal r);

/* "go1.19.8" (a GOEXPERIMENT suffix allowed) into 1, 19; false for another form. */
bool goexec__parse_go_version(const char *s, int *major, int *minor);

/* "v1.33.3", "1.33.3", "v1.34.0-dev" into 1, 33 (the patch is not used); false else. */
bool goexec__parse_grpc_version(const char *s, int *major, int *minor);

/*
 * grpc-go's version in a module list (.go.buildinfo's modinfo: lines
 * "dep\tgoogle.golang.org/grpc\tv1.33.3\th1:..." and, when the module was
 * replaced, "=>\tpath\tversion\th1:..." after it) into ver, "v" dropped.
 * False when grpc-go is not listed, or replaced by a directory (no version).
 */
bool goexec__modinfo_grpc(const char *mod, size_t len, char *ver, size_t vlen);

/*
 * grpc-go's version from its user agent constants ("grpc-go/1.33.3"; Go
 * packs string constants with no terminator, so a version is its digits and
 * dots) in data: 1 and the version in ver; 0 when none is found; -1 when
 * two name other major.minor versions.
 */
int goexec__user_agent_grpc(const void *data, size_t size, char *ver, size_t vlen);

#endif
