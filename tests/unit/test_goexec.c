// SPDX-License-Identifier: GPL-2.0
/*
 * goexec__open (user/claimd/probes/go/goexec.c) on real Go programs built here by
 * Debian's Go and grpc-go (tests/peers/go/goservice, net/http and gRPC,
 * plain and stripped with -s -w):
 * the version from .go.buildinfo, the probed functions from .gopclntab in
 * both (the same file offsets: stripping drops symbols, not code), each RET
 * offset holding a RET opcode, and the struct field table equal to what the
 * plain binaries' DWARF says (tests/peers/go/gooffsets reads it). A file that
 * is not a Go program is refused with ENOEXEC.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes/go/goexec.h"
#include "harness.h"
#include "test_progs.h"

static bool go_peer(const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/tests/go/%s", test__build_dir(), name);
	if (access(path, X_OK) == 0)
		return true;
	test__skip("%s not built (make go-peers; needs golang-go)", path);
	return false;
}

/* Every RET offset holds 0xc3 (near RET, no immediate: Go emits no other). */
static int rets_hold_ret(const char *path, const struct goexec_fn *fn)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok = 0;
	uint32_t i;

	if (fd < 0)
		return 0;
	for (i = 0; i < fn->n_rets; i++) {
		uint8_t b = 0;

		ok += pread(fd, &b, 1, fn->rets[i]) == 1 && b == 0xc3;
		ok -= fn->rets[i] <= fn->entry || fn->rets[i] >= fn->entry + fn->size;
	}
	close(fd);
	return ok;
}

static void check_binary(const char *path, struct goexec *g, bool stripped)
{
	const char *why = NULL;
	int i;

	if (!ASSERT_OK(goexec__open(path, g), "goexec__open"))
		return;
	ASSERT_EQ(strncmp(g->version, "go1.", 4), 0, "version from .go.buildinfo");
	ASSERT_EQ(g->major, 1, "major");
	ASSERT_GE(g->minor, 17, "minor (Debian 12 has 1.19)");
	ASSERT_TRUE(g->regabi, "register ABI");
	ASSERT_EQ(g->stripped, stripped, "stripped");
	ASSERT_EQ(g->has_dwarf, !stripped, "DWARF");
	ASSERT_GT(g->nfunc, 1000, "functions in .gopclntab");
	for (i = 0; i < GOFN__COUNT; i++) {
		const struct goexec_fn *fn = &g->fn[i];

		if (!ASSERT_GT(fn->entry, 0, goexec__fn_name(i)))
			continue;
		ASSERT_GT(fn->size, 0, "size");
		ASSERT_GT(fn->n_rets, 0, "RETs found");
		ASSERT_EQ(rets_hold_ret(path, fn), (int)fn->n_rets, "each RET inside, opcode 0xc3");
	}
	ASSERT_TRUE(goexec__probeable(g, &why), why ? why : "probeable");
}

static const struct {
	const char *name;
	size_t off;
} fields[] = {
	{ "net/http.Request.Method", offsetof(struct go_offsets, req_method) },
	{ "net/http.Request.URL", offsetof(struct go_offsets, req_url) },
	{ "net/url.URL.Host", offsetof(struct go_offsets, url_host) },
	{ "net/url.URL.Path", offsetof(struct go_offsets, url_path) },
	{ "net/http.response.conn", offsetof(struct go_offsets, resp_conn) },
	{ "net/http.response.wroteHeader", offsetof(struct go_offsets, resp_wrote_header) },
	{ "net/http.response.status", offsetof(struct go_offsets, resp_status) },
	{ "net/http.conn.rwc", offsetof(struct go_offsets, conn_rwc) },
	{ "net/http.conn.remoteAddr", offsetof(struct go_offsets, conn_remote_addr) },
	{ "crypto/tls.Conn.conn", offsetof(struct go_offsets, tls_conn) },
	{ "net.conn.fd", offsetof(struct go_offsets, netconn_fd) },
	{ "net.netFD.pfd", offsetof(struct go_offsets, netfd_pfd) },
	{ "internal/poll.FD.Sysfd", offsetof(struct go_offsets, pfd_sysfd) },
	{ "net/http.Response.StatusCode", offsetof(struct go_offsets, response_status) },
	{ "net.TCPAddr.Port", offsetof(struct go_offsets, tcpaddr_port) },
	{ "google.golang.org/grpc/internal/transport.Stream.method",
	  offsetof(struct go_offsets, grpc_stream_method) },
	{ "google.golang.org/grpc/internal/transport.http2Server.conn",
	  offsetof(struct go_offsets, grpc_h2s_conn) },
	{ "google.golang.org/grpc/internal/transport.http2Server.remoteAddr",
	  offsetof(struct go_offsets, grpc_h2s_remote) },
	{ "google.golang.org/grpc/internal/status.Status.s",
	  offsetof(struct go_offsets, grpc_status_s) },
	{ "google.golang.org/grpc/internal/status.Error.e",
	  offsetof(struct go_offsets, grpc_error_e) },
	{ "google.golang.org/genproto/googleapis/rpc/status.Status.Code",
	  offsetof(struct go_offsets, grpc_spb_code) },
	{ "google.golang.org/grpc.ClientConn.target", offsetof(struct go_offsets, grpc_cc_target) },
};

#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

/* The fields of the table the DWARF of exe holds, against the table; found[i] set for each. */
static void check_offsets(const char *exe, const struct goexec *g, bool found[N_FIELDS])
{
	char tool[H_PATH], out[8192], *line, *save = NULL;
	const char *argv[] = { tool, exe, NULL };
	size_t i;

	if (!go_peer("gooffsets", tool, sizeof(tool)))
		return;
	if (!ASSERT_EQ(proc_run(argv, out, sizeof(out), 30000), 0, "gooffsets"))
		return;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[160];
		unsigned int off;

		if (sscanf(line, "%159s %u", name, &off) != 2)
			continue;
		for (i = 0; i < N_FIELDS; i++) {
			__u32 mine = *(const __u32 *)((const char *)&g->offsets + fields[i].off);

			if (strcmp(fields[i].name, name))
				continue;
			found[i] = true;
			if (!ASSERT_EQ(mine, off, name))
				printf("  %s: DWARF says %u\n", name, off);
		}
	}
}

void test_goexec(void)
{
	static struct goexec plain, stripped;
	bool found[N_FIELDS] = { false };
	char path[H_PATH], spath[H_PATH];
	size_t i;

	if (test__start_subtest("not_go")) {
		struct goexec g;

		errno = 0;
		ASSERT_EQ(goexec__open("/bin/sh", &g), -1, "/bin/sh refused");
		ASSERT_EQ(errno, ENOEXEC, "ENOEXEC");
	}
	if (!go_peer("goservice", path, sizeof(path)) ||
	    !go_peer("goservice.stripped", spath, sizeof(spath)))
		return;
	if (test__start_subtest("plain"))
		check_binary(path, &plain, false);
	if (test__start_subtest("stripped")) {
		check_binary(spath, &stripped, true);
		ASSERT_STREQ(stripped.version, plain.version, "same version");
		for (i = 0; i < GOFN__COUNT; i++) {
			ASSERT_EQ(stripped.fn[i].entry, plain.fn[i].entry, goexec__fn_name(i));
			ASSERT_EQ(stripped.fn[i].n_rets, plain.fn[i].n_rets, "same RETs");
		}
	}
	if (test__start_subtest("offsets_match_dwarf")) {
		check_offsets(path, &plain, found);
		for (i = 0; i < N_FIELDS; i++)
			if (!ASSERT_TRUE(found[i], "field found in DWARF"))
				printf("  %s\n", fields[i].name);
	}
}
