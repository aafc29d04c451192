// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a Go executable for the Go probes; see goexec.h. The formats, as
 * the Go toolchain writes them (src/debug/buildinfo, src/runtime/symtab.go):
 *
 * .go.buildinfo: 14 bytes "\xff Go buildinf:", pointer size, flags. Flag 2
 * (Go 1.18 on): the version follows at byte 32 as a varint-prefixed string,
 * the module list after it as another; else two pointers at byte 16 to Go
 * string headers (pointer, length): the version's and the module list's.
 *
 * .gopclntab header: magic (0xfffffffa Go 1.16-1.17, 0xfffffff0 1.18-1.19,
 * 0xfffffff1 1.20 on), two zero bytes, instruction quantum, pointer size,
 * then words: nfunc, nfiles, [textStart (1.18 on)], funcnameOffset,
 * cuOffset, filetabOffset, pctabOffset, pclnOffset. At pclnOffset the
 * function table: nfunc+1 pairs (entry, funcoff), 32-bit offsets from
 * textStart (1.18 on) or pointer-sized addresses (before); the last entry
 * is the end of the text. At pclnOffset + funcoff each function's _func,
 * whose second 32-bit word is its name's offset in the name table.
 *
 * Struct field offsets: the tables below, by Go version and by grpc-go
 * version, for binaries without DWARF and with it alike
 * (tests/unit/test_goexec.c compares them with the DWARF of a binary built
 * here, through tests/peers/go/gooffsets). claimd does not read DWARF: most
 * deployed binaries are stripped of it, and a program the tables do not
 * cover is refused (goexec__refusal), its HTTP left to the syscall path.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <capstone/capstone.h>

#include "goexec.h"
#include "probes/elfsym.h"

static const char *const fn_names[GOFN__COUNT] = {
	[GOFN_SERVE] = "net/http.serverHandler.ServeHTTP",
	[GOFN_ROUND_TRIP] = "net/http.(*Transport).roundTrip",
	[GOFN_NEWPROC] = "runtime.newproc1",
	[GOFN_GRPC_SERVE] = "google.golang.org/grpc.(*Server).handleStream",
	[GOFN_GRPC_STATUS] = "google.golang.org/grpc/internal/transport.(*http2Server).WriteStatus",
	[GOFN_GRPC_INVOKE] = "google.golang.org/grpc.(*ClientConn).Invoke",
	[GOFN_CONN_ROUND_TRIP] = "net/http.(*persistConn).roundTrip",
	[GOFN_TLS_SERVER] = "crypto/tls.(*Conn).serverHandshake",
};

/*
 * Field offsets of amd64 Go 1.17 to 1.19 (net/http, net/url, net,
 * internal/poll, runtime): unchanged across these versions, the last
 * checked against DWARF by the tests. Go 1.20 and later are not in the
 * table: their layouts were not checked here.
 */
static const struct go_offsets go_1_17 = {
	.req_method = 0,
	.req_url = 16,
	.url_host = 40,
	.url_path = 56,
	.resp_conn = 0,
	.resp_wrote_header = 40,
	.resp_status = 120,
	.conn_rwc = 16,
	.conn_remote_addr = 32,
	.tls_conn = 0,
	.netconn_fd = 0,
	.netfd_pfd = 0,
	.pfd_sysfd = 16,
	.response_status = 16,
	.tcpaddr_port = 24,
	.pc_conn = 80,
	.pc_tls_state = 96,
	.g_goid = 152,
};

/*
 * grpc-go 1.33 (Debian 12's 1.33.3), checked against DWARF by the tests.
 * Its stream and status layouts moved at 1.60, 1.69 and 1.77, and the
 * versions between were not checked: only 1.33 is in the table.
 */
static const struct go_offsets grpc_1_33 = {
	.grpc_stream_method = 72,
	.grpc_h2s_conn = 32,
	.grpc_h2s_remote = 72,
	.grpc_status_s = 0,
	.grpc_error_e = 0,
	.grpc_spb_code = 0,
	.grpc_cc_target = 24,
};

/* A grpc-go layout fills the fields from grpc_stream_method to the end. */
#define GRPC_FIELDS offsetof(struct go_offsets, grpc_stream_method)
_Static_assert(offsetof(struct go_offsets, grpc_cc_target) + sizeof(__u32) ==
		       sizeof(struct go_offsets),
	       "grpc-go's fields end struct go_offsets");

struct layout_row {
	int major, minor;
	const struct go_offsets *o;
};

/* What the table covers: each version named, none taken for a neighbour. */
static const struct layout_row go_rows[] = {
	{ 1, 17, &go_1_17 },
	{ 1, 18, &go_1_17 },
	{ 1, 19, &go_1_17 },
};

static const struct layout_row grpc_rows[] = {
	{ 1, 33, &grpc_1_33 },
};

static const struct go_offsets *layout_of(const struct layout_row *rows, size_t n, int major,
					  int minor)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rows[i].major == major && rows[i].minor == minor)
			return rows[i].o;
	return NULL;
}

#define ROWS(r) (r), sizeof(r) / sizeof((r)[0])

static const char *const refusal_names[GOEXEC__REFUSALS] = {
	[GOEXEC_PROBED] = "probed",	    [GOEXEC_ARCH] = "arch",
	[GOEXEC_GO_VERSION] = "go-version", [GOEXEC_GRPC_VERSION] = "grpc-version",
	[GOEXEC_NO_RUNTIME] = "no-runtime", [GOEXEC_NO_HTTP] = "no-http",
	[GOEXEC_ATTACH] = "attach",	    [GOEXEC_OFF] = "off",
};

const char *goexec__refusal_name(enum goexec_refusal r)
{
	return r < GOEXEC__REFUSALS ? refusal_names[r] : "?";
}

const char *goexec__fn_name(enum goexec_fn_id id)
{
	return id < GOFN__COUNT ? fn_names[id] : "?";
}

struct elf_file {
	int fd;
	Elf *elf;
};

static uint64_t read_word(const uint8_t *p, int ptr_size)
{
	uint64_t v = 0;

	memcpy(&v, p, ptr_size == 4 ? 4 : 8);
	return v;
}

/* n bytes at virtual address vaddr, from the file (pre-1.18 buildinfo). */
static int read_vaddr(const struct elf_file *f, uint64_t vaddr, void *buf, size_t n)
{
	uint64_t off = elfsym__file_offset(f->elf, vaddr);

	if (!off || pread(f->fd, buf, n, off) != (ssize_t)n)
		return -1;
	return 0;
}

bool goexec__parse_go_version(const char *s, int *major, int *minor)
{
	/* "go1.19.8", "go1.20", "go1.21rc2": a development build ("devel ...") has none. */
	return sscanf(s, "go%d.%d", major, minor) == 2 && *major >= 0 && *minor >= 0;
}

bool goexec__parse_grpc_version(const char *s, int *major, int *minor)
{
	if (*s == 'v')
		s++;
	return sscanf(s, "%d.%d", major, minor) == 2 && *major >= 0 && *minor >= 0;
}

static void parse_version(struct goexec *g)
{
	if (!goexec__parse_go_version(g->version, &g->major, &g->minor)) {
		g->major = 0;
		g->minor = 0;
	}
	/* amd64: the register ABI from Go 1.17 on (src/cmd/compile/abi-internal.md). */
	g->regabi = g->major > 1 || (g->major == 1 && g->minor >= 17);
}

/* The next tab-ended field of [*p, end) into out (cut to len); *p moved past its tab. */
static void next_field(const char **p, const char *end, char *out, size_t len)
{
	const char *tab = memchr(*p, '\t', (size_t)(end - *p));
	const char *q = tab ? tab : end;

	snprintf(out, len, "%.*s", (int)(q - *p), *p);
	*p = tab ? tab + 1 : end;
}

bool goexec__modinfo_grpc(const char *mod, size_t len, char *ver, size_t vlen)
{
	const char *p = mod, *end = mod + len;
	bool found = false;

	ver[0] = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;
		char kind[8], path[64], v[32];

		next_field(&p, line_end, kind, sizeof(kind));
		next_field(&p, line_end, path, sizeof(path));
		next_field(&p, line_end, v, sizeof(v));
		p = line_end + 1;
		if (found) {
			/* Replaced: the replacement's version, none for a directory. */
			if (!strcmp(kind, "=>"))
				snprintf(ver, vlen, "%s", v[0] == 'v' ? v + 1 : "");
			break;
		}
		if (!strcmp(kind, "dep") && !strcmp(path, "google.golang.org/grpc")) {
			found = true;
			snprintf(ver, vlen, "%s", v[0] == 'v' ? v + 1 : v);
		}
	}
	return ver[0];
}

int goexec__user_agent_grpc(const void *data, size_t size, char *ver, size_t vlen)
{
	static const char ua[] = "grpc-go/";
	const char *p = data, *end = p + size, *hit;
	int major = -1, minor = -1;

	ver[0] = 0;
	while (p < end && (hit = memmem(p, (size_t)(end - p), ua, sizeof(ua) - 1))) {
		const char *v = hit + sizeof(ua) - 1, *q = v;
		char one[32];
		int a, b;

		while (q < end && q - v < (long)sizeof(one) - 1 &&
		       ((*q >= '0' && *q <= '9') || *q == '.'))
			q++;
		while (q > v && q[-1] == '.')
			q--;
		p = hit + 1;
		snprintf(one, sizeof(one), "%.*s", (int)(q - v), v);
		if (!goexec__parse_grpc_version(one, &a, &b))
			continue; /* "grpc-go/" in a message, not the constant */
		if (major >= 0 && (a != major || b != minor)) {
			ver[0] = 0;
			return -1;
		}
		if (major < 0)
			snprintf(ver, vlen, "%s", one);
		major = a;
		minor = b;
	}
	return major >= 0;
}

/* A uvarint-prefixed string of b at *i: its bytes and length; *i moved past it. */
static const uint8_t *inline_string(const uint8_t *b, size_t size, size_t *i, uint64_t *len)
{
	int shift = 0;

	*len = 0;
	while (*i < size && shift < 64) {
		*len |= (uint64_t)(b[*i] & 0x7f) << shift;
		shift += 7;
		if (!(b[(*i)++] & 0x80))
			break;
	}
	if (*len > size - *i)
		return NULL;
	*i += *len;
	return b + *i - *len;
}

static int read_buildinfo(const struct elf_file *f, struct goexec *g, char **mod, size_t *mod_len)
{
	static const char magic[] = "\xff Go buildinf:";
	GElf_Shdr sh;
	size_t size = 0;
	const uint8_t *b = elfsym__section_bytes(f->elf, ".go.buildinfo", &size, &sh);
	int ptr_size;
	uint64_t len = 0;

	if (!b || size < 32 || memcmp(b, magic, 14))
		return -1;
	ptr_size = b[14];
	if (b[15] & 2) {
		size_t i = 32;
		const uint8_t *v = inline_string(b, size, &i, &len), *m;
		uint64_t mlen = 0;

		if (!v)
			return -1;
		/* A long version ("go1.21.0 X:boringcrypto,...") is cut: its head is what counts. */
		len = len < sizeof(g->version) ? len : sizeof(g->version) - 1;
		memcpy(g->version, v, len);
		m = inline_string(b, size, &i, &mlen);
		*mod = m ? malloc(mlen ? mlen : 1) : NULL;
		if (*mod) {
			memcpy(*mod, m, mlen);
			*mod_len = mlen;
		}
	} else {
		uint8_t hdr[16];
		uint64_t str, mlen;

		if (ptr_size != 8 && ptr_size != 4)
			return -1;
		str = read_word(b + 16, ptr_size);
		if (read_vaddr(f, str, hdr, 2 * ptr_size))
			return -1;
		len = read_word(hdr + ptr_size, ptr_size);
		len = len < sizeof(g->version) ? len : sizeof(g->version) - 1;
		if (read_vaddr(f, read_word(hdr, ptr_size), g->version, len))
			return -1;
		/* The module list, when there is one (grpc-go's version may be in it). */
		str = read_word(b + 16 + ptr_size, ptr_size);
		if (!read_vaddr(f, str, hdr, 2 * ptr_size)) {
			mlen = read_word(hdr + ptr_size, ptr_size);
			*mod = mlen && mlen < (1u << 20) ? malloc(mlen) : NULL;
			if (*mod && read_vaddr(f, read_word(hdr, ptr_size), *mod, mlen)) {
				free(*mod);
				*mod = NULL;
			}
			*mod_len = *mod ? mlen : 0;
		}
	}
	g->version[len] = 0;
	parse_version(g);
	return 0;
}

/*
 * grpc-go's version, from the module list and from the user agent
 * constant: where both say, they must agree (major.minor); a GOPATH-mode
 * build lists no modules, and only the constant says.
 */
static void read_grpc_version(const struct elf_file *f, struct goexec *g, const char *mod,
			      size_t mod_len)
{
	char from_mod[32] = "", from_ua[32] = "";
	int a, b, c, d;
	GElf_Shdr sh;
	size_t size = 0;
	const uint8_t *ro = elfsym__section_bytes(f->elf, ".rodata", &size, &sh);

	if (mod)
		goexec__modinfo_grpc(mod, mod_len, from_mod, sizeof(from_mod));
	if (ro && goexec__user_agent_grpc(ro, size, from_ua, sizeof(from_ua)) < 0)
		g->grpc_conflict = true;
	if (!goexec__parse_grpc_version(from_mod, &a, &b))
		from_mod[0] = 0;
	if (!goexec__parse_grpc_version(from_ua, &c, &d))
		from_ua[0] = 0;
	if (from_mod[0] && from_ua[0] && (a != c || b != d))
		g->grpc_conflict = true;
	if (g->grpc_conflict)
		return;
	if (from_mod[0]) {
		snprintf(g->grpc_version, sizeof(g->grpc_version), "%s", from_mod);
		g->grpc_from = from_ua[0] ? "module list and user agent" : "module list";
	} else if (from_ua[0]) {
		snprintf(g->grpc_version, sizeof(g->grpc_version), "%s", from_ua);
		g->grpc_from = "user agent";
	} else {
		return;
	}
	goexec__parse_grpc_version(g->grpc_version, &g->grpc_major, &g->grpc_minor);
}

/* The layout of one pclntab: where its tables are. */
struct pcln {
	const uint8_t *tab;
	size_t size;
	int ptr_size;
	bool off32; /* Go 1.18 on: 32-bit entries relative to text_start */
	uint64_t nfunc;
	uint64_t text_start;
	const uint8_t *names;
	const uint8_t *functab;
};

static int pcln_open(struct pcln *p, Elf *elf)
{
	GElf_Shdr sh, text;
	const uint8_t *t;
	uint32_t magic;
	uint64_t name_off, pcln_off;
	int w, nwords;

	p->tab = t = elfsym__section_bytes(elf, ".gopclntab", &p->size, &sh);
	if (!t || p->size < 16)
		return errno = ENOEXEC, -1;
	memcpy(&magic, t, 4);
	p->ptr_size = t[7];
	if (t[4] || t[5] || (p->ptr_size != 8 && p->ptr_size != 4))
		return errno = ENOTSUP, -1;
	if (magic == 0xfffffff0 || magic == 0xfffffff1)
		p->off32 = true;
	else if (magic != 0xfffffffa)
		return errno = ENOTSUP, -1;
	w = p->ptr_size;
	nwords = p->off32 ? 8 : 7;
	if (p->size < (size_t)(8 + nwords * w))
		return errno = ENOTSUP, -1;
	p->nfunc = read_word(t + 8, w);
	if (p->off32) {
		p->text_start = read_word(t + 8 + 2 * w, w);
		name_off = read_word(t + 8 + 3 * w, w);
		pcln_off = read_word(t + 8 + 7 * w, w);
		/* PIE: textStart is filled by a relocation, 0 in the file. */
		if (!p->text_start && elfsym__section(elf, ".text", &text))
			p->text_start = text.sh_addr;
	} else {
		name_off = read_word(t + 8 + 2 * w, w);
		pcln_off = read_word(t + 8 + 6 * w, w);
	}
	if (name_off >= p->size || pcln_off >= p->size)
		return errno = ENOTSUP, -1;
	p->names = t + name_off;
	p->functab = t + pcln_off;
	/* The function table: nfunc + 1 pairs. */
	if ((uint64_t)(p->functab - t) + (p->nfunc + 1) * 2 * (p->off32 ? 4 : w) > p->size)
		return errno = ENOTSUP, -1;
	return 0;
}

/* Entry i of the function table: its address and its _func's offset. */
static void pcln_entry(const struct pcln *p, uint64_t i, uint64_t *addr, uint64_t *funcoff)
{
	if (p->off32) {
		uint32_t e[2];

		memcpy(e, p->functab + i * 8, 8);
		*addr = p->text_start + e[0];
		*funcoff = e[1];
		return;
	}
	*addr = read_word(p->functab + i * 2 * p->ptr_size, p->ptr_size);
	*funcoff = read_word(p->functab + (i * 2 + 1) * p->ptr_size, p->ptr_size);
}

static const char *pcln_name(const struct pcln *p, uint64_t funcoff)
{
	const uint8_t *fn = p->functab + funcoff;
	int32_t name_off;
	int skip = p->off32 ? 4 : p->ptr_size; /* the entry field */

	if (fn + skip + 4 > p->tab + p->size)
		return NULL;
	memcpy(&name_off, fn + skip, 4);
	if (name_off < 0 || p->names + name_off >= p->tab + p->size)
		return NULL;
	return (const char *)p->names + name_off;
}

/* Instructions into a function its prologue's stack check ends by, at most. */
#define STACK_CHECK_INSNS 4

/*
 * Does insn compare RSP (or R12, RSP less the frame) with the goroutine's
 * stack guard, g.stackguard0 at 16(R14), as a Go prologue's stack check
 * does before its JBE?
 */
static bool is_guard_cmp(const cs_insn *insn)
{
	return insn->id == X86_INS_CMP && (!strcmp(insn->op_str, "rsp, qword ptr [r14 + 0x10]") ||
					   !strcmp(insn->op_str, "r12, qword ptr [r14 + 0x10]"));
}

/*
 * The RETs of the function at file offset off, size bytes long, and its
 * stack check's branch (struct goexec_fn).
 */
static int find_rets(int fd, struct goexec_fn *fn)
{
	uint8_t *code = malloc(fn->size);
	const uint8_t *p = code;
	size_t left = fn->size;
	uint64_t addr = 0;
	cs_insn *insn = NULL;
	unsigned int n = 0;
	bool guard_cmp = false; /* the instruction before compared with the stack guard */
	csh cs;
	int err = 0;

	if (!code)
		return -1;
	if (pread(fd, code, fn->size, fn->entry) != (ssize_t)fn->size) {
		free(code);
		return errno = EIO, -1;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		free(code);
		return errno = ENOTSUP, -1;
	}
	insn = cs_malloc(cs);
	fn->n_rets = 0;
	fn->stack_check = 0;
	while (insn && left) {
		if (!cs_disasm_iter(cs, &p, &left, &addr, insn)) {
			/* Not an instruction (padding): skip a byte and go on. */
			p++;
			left--;
			addr++;
			n = STACK_CHECK_INSNS; /* past any prologue */
			continue;
		}
		if (n < STACK_CHECK_INSNS) {
			n++;
			if (guard_cmp && insn->id == X86_INS_JBE)
				fn->stack_check = fn->entry + insn->address;
			guard_cmp = !fn->stack_check && is_guard_cmp(insn);
		}
		if (insn->id != X86_INS_RET)
			continue;
		if (fn->n_rets == GOEXEC_RETS_MAX) {
			err = -1;
			errno = E2BIG;
			break;
		}
		fn->rets[fn->n_rets++] = fn->entry + insn->address;
	}
	if (!insn)
		err = -1, errno = ENOMEM;
	cs_free(insn, 1);
	cs_close(&cs);
	free(code);
	return err;
}

static int read_functions(const struct elf_file *f, struct goexec *g)
{
	struct pcln p;
	uint64_t i;
	int id;

	if (pcln_open(&p, f->elf))
		return -1;
	g->nfunc = p.nfunc;
	for (i = 0; i < p.nfunc; i++) {
		uint64_t addr, funcoff, end, unused;
		const char *name;

		pcln_entry(&p, i, &addr, &funcoff);
		name = pcln_name(&p, funcoff);
		if (!name)
			continue;
		for (id = 0; id < GOFN__COUNT; id++) {
			struct goexec_fn *fn = &g->fn[id];

			if (fn->entry || strcmp(name, fn_names[id]))
				continue;
			pcln_entry(&p, i + 1, &end, &unused);
			fn->entry = elfsym__file_offset(f->elf, addr);
			fn->size = end > addr ? end - addr : 0;
			if (fn->entry && fn->size && find_rets(f->fd, fn))
				fn->n_rets = 0; /* too many, or unreadable: not probed */
		}
	}
	return 0;
}

/*
 * Does the program's TLS segment hold 8 bytes, runtime.tlsg alone? The
 * executable's block sits right below the thread pointer (x86-64's TLS
 * variant II), so g is at fs - 8. A program with thread-locals of its own
 * (cgo code declaring some) has a larger block, g somewhere in it.
 */
static bool tls_holds_g_alone(Elf *elf)
{
	size_t n = 0, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		uint64_t align;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_TLS)
			continue;
		align = ph.p_align ? ph.p_align : 1;
		return (ph.p_memsz + align - 1) / align * align == 8;
	}
	return false;
}

/* The offsets of the table for g's versions; those it does not cover stay 0. */
static void fill_offsets(struct goexec *g)
{
	const struct go_offsets *go = layout_of(ROWS(go_rows), g->major, g->minor);
	const struct go_offsets *grpc = layout_of(ROWS(grpc_rows), g->grpc_major, g->grpc_minor);

	if (go)
		memcpy(&g->offsets, go, GRPC_FIELDS);
	if (grpc)
		memcpy((char *)&g->offsets + GRPC_FIELDS, (const char *)grpc + GRPC_FIELDS,
		       sizeof(g->offsets) - GRPC_FIELDS);
}

int goexec__open(const char *path, struct goexec *g)
{
	struct elf_file f = { .fd = -1 };
	GElf_Shdr sh;
	GElf_Ehdr eh;
	char *mod = NULL;
	size_t mod_len = 0;
	int err = -1, saved;

	memset(g, 0, sizeof(*g));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return errno = ENOTSUP, -1;
	f.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f.fd < 0)
		return -1;
	f.elf = elf_begin(f.fd, ELF_C_READ_MMAP, NULL);
	if (!f.elf || elf_kind(f.elf) != ELF_K_ELF) {
		errno = ENOEXEC;
		goto cleanup;
	}
	if (read_buildinfo(&f, g, &mod, &mod_len)) {
		errno = ENOEXEC;
		goto cleanup;
	}
	g->amd64 = gelf_getehdr(f.elf, &eh) && eh.e_machine == EM_X86_64;
	g->stripped = !elfsym__section(f.elf, ".symtab", &sh);
	g->has_dwarf = elfsym__section(f.elf, ".debug_info", &sh) ||
		       elfsym__section(f.elf, ".zdebug_info", &sh);
	read_grpc_version(&f, g, mod, mod_len);
	g->tls_g_below_fs = tls_holds_g_alone(f.elf);
	fill_offsets(g);
	err = read_functions(&f, g);
cleanup:
	saved = errno;
	free(mod);
	if (f.elf)
		elf_end(f.elf);
	close(f.fd);
	errno = saved;
	return err;
}

static bool fn_ready(const struct goexec *g, enum goexec_fn_id id)
{
	return g->fn[id].entry && g->fn[id].n_rets;
}

/* The Go probes' gRPC part would be attached: one of its functions is in g. */
static bool has_grpc(const struct goexec *g)
{
	return g->fn[GOFN_GRPC_SERVE].entry || g->fn[GOFN_GRPC_STATUS].entry ||
	       g->fn[GOFN_GRPC_INVOKE].entry;
}

/* Why grpc-go's version is refused, NULL when it is in the table. */
static const char *grpc_refusal(const struct goexec *g)
{
	if (g->grpc_conflict)
		return "two grpc-go versions read (its module list, its user agents): which one "
		       "was built is not known";
	if (!g->grpc_from)
		return "grpc-go's version not found (neither in its module list nor as its user "
		       "agent in .rodata): its layouts are not known";
	if (!layout_of(ROWS(grpc_rows), g->grpc_major, g->grpc_minor))
		return "grpc-go version outside the offset table (grpc-go 1.33): its layouts are "
		       "not known";
	return NULL;
}

static enum goexec_refusal refused(const char **why, enum goexec_refusal r, const char *reason)
{
	if (why)
		*why = reason;
	return r;
}

enum goexec_refusal goexec__refusal(const struct goexec *g, const char **why)
{
	const char *grpc = has_grpc(g) ? grpc_refusal(g) : NULL;

	if (!g->amd64)
		return refused(why, GOEXEC_ARCH,
			       "not an amd64 program: the probes read amd64's ABI");
	if (!g->major)
		return refused(why, GOEXEC_GO_VERSION, "Go version not read from .go.buildinfo");
	if (!g->regabi)
		return refused(why, GOEXEC_GO_VERSION, "built before Go 1.17 (no register ABI)");
	if (!layout_of(ROWS(go_rows), g->major, g->minor))
		return refused(why, GOEXEC_GO_VERSION,
			       "Go version outside the offset table (Go 1.17 to 1.19): its layouts "
			       "are not known");
	if (grpc)
		return refused(why, GOEXEC_GRPC_VERSION, grpc);
	if (!fn_ready(g, GOFN_NEWPROC))
		return refused(why, GOEXEC_NO_RUNTIME, "runtime.newproc1 or its RETs not found");
	if (!fn_ready(g, GOFN_SERVE) && !fn_ready(g, GOFN_ROUND_TRIP) &&
	    !(fn_ready(g, GOFN_GRPC_SERVE) && g->fn[GOFN_GRPC_STATUS].entry) &&
	    !fn_ready(g, GOFN_GRPC_INVOKE))
		return refused(why, GOEXEC_NO_HTTP,
			       "no net/http or grpc-go server or client in it");
	return refused(why, GOEXEC_PROBED, NULL);
}

bool goexec__by_syscalls(const struct goexec *g, const char **why)
{
	const char *no = NULL;

	if (has_grpc(g))
		no = "grpc-go in it: HTTP/2 carries many requests at once on a connection";
	else if (g->fn[GOFN_TLS_SERVER].entry)
		no = "a TLS server in it: its requests' bytes are ciphertext";
	else if (!g->fn[GOFN_CONN_ROUND_TRIP].entry)
		no = "net/http.(*persistConn).roundTrip not found";
	else if (!g->tls_g_below_fs)
		no = "thread-locals of its own beside runtime.g: where g sits is not known";
	if (why)
		*why = no;
	return !no;
}
