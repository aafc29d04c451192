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
 *
 * What the offset table covers (Go 1.17 to 1.19, grpc-go 1.33), and what is
 * refused: the version parsers and the readers of grpc-go's version (module
 * list, user agent) on made-up inputs, goexec__refusal on versions set by
 * hand, and copies of goservice whose Go or grpc-go version strings are
 * rewritten in place (tests/lib/gopatch.h) read back and refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gopatch.h"
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

/*
 * Is fn's stack check's branch a JBE (0x76, or 0x0f 0x86) among its first
 * instructions, where the arguments' registers are still the entry's?
 */
static bool stack_check_is_jbe(const char *path, const struct goexec_fn *fn)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t b[2] = {};
	bool ok;

	if (fd < 0)
		return false;
	ok = fn->stack_check > fn->entry && fn->stack_check < fn->entry + 24 &&
	     pread(fd, b, 2, fn->stack_check) == 2 &&
	     (b[0] == 0x76 || (b[0] == 0x0f && b[1] == 0x86));
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
		ASSERT_TRUE(stack_check_is_jbe(path, fn), "its stack check's JBE found");
	}
	/* GOPATH mode: no module list, grpc-go's version from its user agent. */
	ASSERT_STREQ(g->grpc_version, "1.33.3", "grpc-go version (Debian 12)");
	ASSERT_STREQ(g->grpc_from ? g->grpc_from : "", "user agent", "read from its user agent");
	ASSERT_FALSE(g->grpc_conflict, "one grpc-go version");
	ASSERT_EQ(goexec__refusal(g, &why), GOEXEC_PROBED, why ? why : "probeable");
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
	{ "net/http.persistConn.conn", offsetof(struct go_offsets, pc_conn) },
	{ "net/http.persistConn.tlsState", offsetof(struct go_offsets, pc_tls_state) },
	{ "runtime.g.goid", offsetof(struct go_offsets, g_goid) },
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

static void versions(void)
{
	bool (*const go)(const char *, int *, int *) = goexec__parse_go_version;
	bool (*const grpc)(const char *, int *, int *) = goexec__parse_grpc_version;
	const struct {
		bool (*parse)(const char *, int *, int *);
		const char *s;
		bool ok;
		int major, minor;
	} cases[] = {
		{ go, "go1.19.8", true, 1, 19 },
		{ go, "go1.20", true, 1, 20 },
		{ go, "go1.21rc2", true, 1, 21 },
		{ go, "go1.19.8 X:boringcrypto", true, 1, 19 },
		{ go, "go2.0", true, 2, 0 },
		{ go, "devel go1.22-abcdef Tue", false, 0, 0 },
		{ go, "go", false, 0, 0 },
		{ go, "", false, 0, 0 },
		{ grpc, "v1.33.3", true, 1, 33 },
		{ grpc, "1.33.3", true, 1, 33 },
		{ grpc, "v1.34.0-dev.0.20201020", true, 1, 34 },
		{ grpc, "1.60", true, 1, 60 },
		{ grpc, "(devel)", false, 0, 0 },
		{ grpc, "v1", false, 0, 0 },
		{ grpc, "", false, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int major = 0, minor = 0;
		bool ok = cases[i].parse(cases[i].s, &major, &minor);

		ASSERT_EQ(ok, cases[i].ok, cases[i].s);
		if (ok && cases[i].ok)
			ASSERT_TRUE(major == cases[i].major && minor == cases[i].minor, cases[i].s);
	}
}

/* A module list's head as Go writes it: a 16-byte sentinel, the main package and module. */
#define MOD_HEAD                  \
	"0w\xaf\x0c\x92t\x08\x02" \
	"A\xe1\xc1\x07\xe6\xd6\x18\xe6path\tex.com/svc\nmod\tex.com/svc\t(devel)\t\n"
#define DEP_PROTO "dep\tgithub.com/golang/protobuf\tv1.4.3\th1:abc=\n"

static void modinfo(void)
{
	static const struct {
		const char *what, *mod, *want; /* want NULL: no version */
	} cases[] = {
		{ "listed", MOD_HEAD DEP_PROTO "dep\tgoogle.golang.org/grpc\tv1.33.3\th1:x=\n",
		  "1.33.3" },
		{ "last line, no newline",
		  MOD_HEAD "dep\tgoogle.golang.org/grpc\tv1.60.1\th1:x=", "1.60.1" },
		{ "replaced by a module",
		  MOD_HEAD "dep\tgoogle.golang.org/grpc\tv1.33.3\n=>\tex.com/"
			   "grpc\tv1.50.1\th1:y=\n" DEP_PROTO,
		  "1.50.1" },
		{ "replaced by a directory",
		  MOD_HEAD "dep\tgoogle.golang.org/grpc\tv1.33.3\n=>\t../grpc\t\t\n", NULL },
		{ "another module replaced",
		  MOD_HEAD "dep\tgoogle.golang.org/grpc\tv1.33.3\th1:x=\n" DEP_PROTO
			   "=>\t../protobuf\t\t\n",
		  "1.33.3" },
		{ "a module under its path only",
		  MOD_HEAD "dep\tgoogle.golang.org/grpc/examples\tv0.0.0\th1:x=\n", NULL },
		{ "not listed", MOD_HEAD DEP_PROTO, NULL },
		{ "empty", "", NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char ver[32] = "x";
		bool ok =
			goexec__modinfo_grpc(cases[i].mod, strlen(cases[i].mod), ver, sizeof(ver));

		ASSERT_EQ(ok, cases[i].want != NULL, cases[i].what);
		if (cases[i].want)
			ASSERT_STREQ(ver, cases[i].want, cases[i].what);
	}
}

static void user_agent(void)
{
	static const struct {
		const char *what, *data, *want;
		int ret;
	} cases[] = {
		/* As Go's linker packs them: no terminator, neighbours of the same length. */
		{ "packed", "gcstoptheworldgrpc-go/1.33.3grpc-trace-bin", "1.33.3", 1 },
		{ "twice, the same", "grpc-go/1.33.3grpc-trace-bin GC prog\n grpc-go/1.33.3 is",
		  "1.33.3", 1 },
		{ "patch releases", "grpc-go/1.33.3 grpc-go/1.33.4", "1.33.3", 1 },
		{ "a neighbour of digits", "grpc-go/1.33.30123456789abcd", "1.33.30123456789", 1 },
		{ "a message, then the constant", "grpc-go/%s: bad grpc-go/1.60.1.", "1.60.1", 1 },
		{ "two versions", "grpc-go/1.33.3 and grpc-go/1.60.1", NULL, -1 },
		{ "none", "grpc-gox/1.33.3 grpc-go/", NULL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char ver[32] = "x";
		int ret = goexec__user_agent_grpc(cases[i].data, strlen(cases[i].data), ver,
						  sizeof(ver));

		ASSERT_EQ(ret, cases[i].ret, cases[i].what);
		if (cases[i].want)
			ASSERT_STREQ(ver, cases[i].want, cases[i].what);
	}
}

/* g, its versions set to go1.<minor> and grpc-go 1.<grpc_minor> (-1: none read). */
static enum goexec_refusal refusal_at(struct goexec *g, int major, int minor, int grpc_minor)
{
	g->major = major;
	g->minor = minor;
	g->regabi = major > 1 || (major == 1 && minor >= 17);
	g->grpc_major = grpc_minor >= 0 ? 1 : 0;
	g->grpc_minor = grpc_minor >= 0 ? grpc_minor : 0;
	g->grpc_from = grpc_minor >= 0 ? "user agent" : NULL;
	return goexec__refusal(g, NULL);
}

/* The table's decisions, on the plain binary's functions with versions set by hand. */
static void table(const struct goexec *plain)
{
	static struct goexec g;
	const char *why = NULL;

	g = *plain;
	ASSERT_EQ(refusal_at(&g, 1, 16, 33), GOEXEC_GO_VERSION, "Go 1.16: older");
	ASSERT_EQ(refusal_at(&g, 1, 17, 33), GOEXEC_PROBED, "Go 1.17");
	ASSERT_EQ(refusal_at(&g, 1, 18, 33), GOEXEC_PROBED, "Go 1.18");
	ASSERT_EQ(refusal_at(&g, 1, 19, 33), GOEXEC_PROBED, "Go 1.19");
	ASSERT_EQ(refusal_at(&g, 1, 20, 33), GOEXEC_GO_VERSION, "Go 1.20: newer");
	ASSERT_EQ(refusal_at(&g, 1, 29, 33), GOEXEC_GO_VERSION, "Go 1.29");
	ASSERT_EQ(refusal_at(&g, 2, 0, 33), GOEXEC_GO_VERSION, "Go 2.0");
	ASSERT_EQ(refusal_at(&g, 0, 0, 33), GOEXEC_GO_VERSION, "no Go version read");
	ASSERT_EQ(refusal_at(&g, 1, 19, 32), GOEXEC_GRPC_VERSION, "grpc-go 1.32");
	ASSERT_EQ(refusal_at(&g, 1, 19, 34), GOEXEC_GRPC_VERSION, "grpc-go 1.34");
	ASSERT_EQ(refusal_at(&g, 1, 19, 60), GOEXEC_GRPC_VERSION, "grpc-go 1.60");
	ASSERT_EQ(refusal_at(&g, 1, 19, -1), GOEXEC_GRPC_VERSION, "grpc-go's version not read");
	ASSERT_EQ(refusal_at(&g, 1, 16, 60), GOEXEC_GO_VERSION, "Go's version said first");
	g.grpc_conflict = true;
	ASSERT_EQ(refusal_at(&g, 1, 19, -1), GOEXEC_GRPC_VERSION, "grpc-go's versions disagree");
	g.grpc_conflict = false;
	/* Without grpc-go's functions its version does not matter: net/http alone. */
	memset(&g.fn[GOFN_GRPC_SERVE], 0, 3 * sizeof(g.fn[0]));
	ASSERT_EQ(refusal_at(&g, 1, 19, -1), GOEXEC_PROBED, "no grpc-go: its version unneeded");
	ASSERT_EQ(refusal_at(&g, 1, 20, -1), GOEXEC_GO_VERSION, "no grpc-go, Go 1.20");
	memset(&g.fn[GOFN_SERVE], 0, 2 * sizeof(g.fn[0]));
	ASSERT_EQ(refusal_at(&g, 1, 19, 33), GOEXEC_NO_HTTP, "no net/http, no grpc-go");
	g = *plain;
	g.fn[GOFN_NEWPROC].n_rets = 0;
	ASSERT_EQ(refusal_at(&g, 1, 19, 33), GOEXEC_NO_RUNTIME, "newproc1's RETs not found");
	g = *plain;
	g.amd64 = false;
	ASSERT_EQ(refusal_at(&g, 1, 19, 33), GOEXEC_ARCH, "not amd64");
	g.amd64 = true;
	refusal_at(&g, 1, 20, 33);
	ASSERT_EQ(goexec__refusal(&g, &why), GOEXEC_GO_VERSION, "why said");
	ASSERT_TRUE(why && strstr(why, "offset table"), "why names the table");
	ASSERT_STREQ(goexec__refusal_name(GOEXEC_GO_VERSION), "go-version", "class name");
	ASSERT_STREQ(goexec__refusal_name(GOEXEC_GRPC_VERSION), "grpc-version", "class name");
}

/*
 * A copy of src, each of from (after anchor, at most max) rewritten to to,
 * read back: its refusal, and g as read. dir: where the copy goes.
 */
static enum goexec_refusal patched(const char *dir, const char *src, const char *anchor,
				   size_t anchor_len, const char *from, const char *to, int max,
				   int want_n, struct goexec *g)
{
	static int copies;
	char dst[H_PATH];
	const char *why = NULL;
	enum goexec_refusal r;

	snprintf(dst, sizeof(dst), "%s/goservice.%d", dir, ++copies);
	if (!ASSERT_EQ(gopatch_copy(src, dst, anchor, anchor_len, from, to, max), want_n,
		       "strings rewritten") ||
	    !ASSERT_OK(goexec__open(dst, g), "goexec__open of the copy"))
		return GOEXEC__REFUSALS;
	r = goexec__refusal(g, &why);
	printf("%.*s: %s, grpc-go %s: %s (%s)\n", (int)strcspn(to, "\n"), to, g->version,
	       g->grpc_version, goexec__refusal_name(r), why ? why : "");
	return r;
}

/*
 * A module list that names grpc-go, as a module-mode build's does: three
 * of the GOPATH build's lines in .go.buildinfo rewritten, same length, to a
 * "dep" line (its checksum padded). Read back: a patch release beside the
 * user agent's 1.33.3 agrees; another minor version disagrees, refused.
 */
static void module_list(const char *dir, const char *path)
{
	static const char lines[] =
		"build\tCGO_CFLAGS=\nbuild\tCGO_CPPFLAGS=\nbuild\tCGO_CXXFLAGS=\n";
	static const char *const versions[] = { "1.33.5", "1.61.0" };
	static struct goexec g;
	char dep[sizeof(lines)];
	int i, n;

	for (i = 0; i < 2; i++) {
		n = snprintf(dep, sizeof(dep),
			     "dep\tgoogle.golang.org/grpc\tv%s\th1:", versions[i]);
		memset(dep + n, 'x', sizeof(dep) - 2 - n);
		dep[sizeof(dep) - 2] = '\n';
		dep[sizeof(dep) - 1] = 0;
		if (patched(dir, path, GOPATCH_BUILDINFO, GOPATCH_BUILDINFO_LEN, lines, dep, 1, 1,
			    &g) == GOEXEC__REFUSALS)
			return;
		if (i == 0) {
			ASSERT_EQ(goexec__refusal(&g, NULL), GOEXEC_PROBED, "1.33.5 listed: 1.33");
			ASSERT_STREQ(g.grpc_version, "1.33.5", "the module list's version");
			ASSERT_STREQ(g.grpc_from ? g.grpc_from : "", "module list and user agent",
				     "both read");
		} else {
			ASSERT_EQ(goexec__refusal(&g, NULL), GOEXEC_GRPC_VERSION, "1.61.0 listed");
			ASSERT_TRUE(g.grpc_conflict, "module list and user agent disagree");
		}
	}
}

static void patched_versions(const char *path, const char *spath, const struct goexec *plain)
{
	static struct goexec g;
	char dir[H_PATH];
	size_t i;
	bool zero = true;

	if (!ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "directory"))
		return;
	/* The Go version in .go.buildinfo (the runtime's own copy before it stays). */
	ASSERT_EQ(patched(dir, path, GOPATCH_BUILDINFO, GOPATCH_BUILDINFO_LEN, plain->version,
			  "go1.29.8", 1, 1, &g),
		  GOEXEC_GO_VERSION, "Go 1.29 refused");
	ASSERT_STREQ(g.version, "go1.29.8", "the version as rewritten");
	ASSERT_EQ(g.fn[GOFN_SERVE].entry, plain->fn[GOFN_SERVE].entry, "the rest as built");
	for (i = 0; i < offsetof(struct go_offsets, grpc_stream_method); i++)
		zero &= !((const char *)&g.offsets)[i];
	ASSERT_TRUE(zero, "no Go offsets guessed");
	/* grpc-go's user agent, both copies, stripped: .rodata is kept. */
	ASSERT_EQ(patched(dir, spath, NULL, 0, "grpc-go/1.33.3", "grpc-go/1.93.3", 0, 2, &g),
		  GOEXEC_GRPC_VERSION, "grpc-go 1.93 refused");
	ASSERT_STREQ(g.grpc_version, "1.93.3", "grpc-go's version as rewritten");
	ASSERT_EQ(g.offsets.req_url, plain->offsets.req_url, "Go's offsets from the table");
	ASSERT_EQ(g.offsets.grpc_stream_method, 0, "no grpc-go offset guessed");
	/* One copy of two rewritten: a patch release is 1.33 still; a minor, two versions. */
	ASSERT_EQ(patched(dir, path, NULL, 0, "grpc-go/1.33.3", "grpc-go/1.33.4", 1, 1, &g),
		  GOEXEC_PROBED, "a patch release: same layout");
	ASSERT_EQ(patched(dir, path, NULL, 0, "grpc-go/1.33.3", "grpc-go/1.61.3", 1, 1, &g),
		  GOEXEC_GRPC_VERSION, "two grpc-go versions: refused");
	ASSERT_TRUE(g.grpc_conflict, "said to disagree");
	ASSERT_STREQ(g.grpc_version, "", "no version taken");
	module_list(dir, path);
	tmpdir_remove(dir);
}

/*
 * Which programs are framed by their syscalls: goservice (grpc-go, a TLS
 * server) is not; the same source built plain (gohttp, stripped or not) is,
 * its g alone in its TLS segment and (*persistConn).roundTrip found.
 */
static void by_syscalls(const struct goexec *full)
{
	static struct goexec g;
	const char *const plain[] = { "gohttp", "gohttp.stripped" };
	const char *why = NULL;
	char path[H_PATH];
	size_t i;

	ASSERT_FALSE(goexec__by_syscalls(full, &why), "goservice: per goroutine");
	ASSERT_OK_PTR(why, "and why");
	for (i = 0; i < 2; i++) {
		if (!go_peer(plain[i], path, sizeof(path)) ||
		    !ASSERT_OK(goexec__open(path, &g), plain[i]))
			return;
		why = NULL;
		ASSERT_EQ(goexec__refusal(&g, NULL), GOEXEC_PROBED, "followed");
		ASSERT_TRUE(g.tls_g_below_fs, "g alone in its TLS segment");
		ASSERT_GT(g.fn[GOFN_CONN_ROUND_TRIP].entry, 0, "(*persistConn).roundTrip");
		ASSERT_EQ(g.fn[GOFN_TLS_SERVER].entry, 0, "no TLS server");
		ASSERT_TRUE(goexec__by_syscalls(&g, &why), why ? why : plain[i]);
	}
}

void test_goexec(void)
{
	static struct goexec plain, stripped;
	bool found[N_FIELDS] = { false };
	char path[H_PATH], spath[H_PATH];
	size_t i;

	if (test__start_subtest("versions"))
		versions();
	if (test__start_subtest("modinfo"))
		modinfo();
	if (test__start_subtest("user_agent"))
		user_agent();
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
	/* The plain binary as read, whichever subtests ran. */
	if (!plain.nfunc && !ASSERT_OK(goexec__open(path, &plain), "goexec__open"))
		return;
	if (test__start_subtest("table"))
		table(&plain);
	if (test__start_subtest("patched_versions"))
		patched_versions(path, spath, &plain);
	if (test__start_subtest("by_syscalls"))
		by_syscalls(&plain);
}
