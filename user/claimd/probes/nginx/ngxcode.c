// SPDX-License-Identifier: GPL-2.0
/*
 * Each offset nginx's probe reads, checked in the program's code: a
 * function nginx exports that loads the field from its first argument
 * (RDI, the System V ABI's) among its first instructions, before it
 * branches, calls or writes RDI. Decoded with capstone, operand by
 * operand: the base register, no index, the displacement, the size.
 * The request's signature ("HTTP") and the connection's data, which no
 * exported function reads so, are checked by the probe at every hit.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <capstone/capstone.h>

#include "probes/elfsym.h"
#include "probes/nginx/ngxcode.h"

/* How many instructions of a function's start are looked at. */
#define NGX_LOOK_INSNS 16
#define NGX_LOOK_BYTES 96

/* An offset the probe reads, and the function that shows it. */
struct ngx_field {
	const char *name; /* the field, as nginx's headers name it */
	const char *fn;	  /* an exported function loading it from its first argument */
	int64_t disp;
	uint8_t size;
};

/* bpf/runtimes/nginx.c's NGX_* offsets, each with its witness. */
static const struct ngx_field fields[] = {
	{ "ngx_chain_writer_ctx_t.connection", NGXCODE_PROBED_FN, 16, 8 },
	{ "ngx_http_request_t.connection", "ngx_http_upstream_init", 8, 8 },
	{ "ngx_connection_t.fd", "ngx_close_connection", 24, 4 },
};

static bool writes_rdi(csh cs, const cs_insn *insn)
{
	cs_regs rd, wr;
	uint8_t nr = 0, nw = 0, i;

	if (cs_regs_access(cs, insn, rd, &nr, wr, &nw))
		return true; /* not known: taken as written */
	for (i = 0; i < nw; i++)
		if (wr[i] == X86_REG_RDI || wr[i] == X86_REG_EDI || wr[i] == X86_REG_DI ||
		    wr[i] == X86_REG_DIL)
			return true;
	return false;
}

static bool loads_field(const cs_insn *insn, const struct ngx_field *f)
{
	const cs_x86 *x = &insn->detail->x86;
	uint8_t i;

	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RDI &&
		    op->mem.index == X86_REG_INVALID && op->mem.segment == X86_REG_INVALID &&
		    op->mem.disp == f->disp && op->size == f->size)
			return true;
	}
	return false;
}

static bool ends_block(const cs_insn *insn)
{
	uint8_t i;

	for (i = 0; i < insn->detail->groups_count; i++)
		switch (insn->detail->groups[i]) {
		case X86_GRP_JUMP:
		case X86_GRP_CALL:
		case X86_GRP_RET:
		case X86_GRP_INT:
			return true;
		}
	return false;
}

/* Does code (the start of f's witness) load f from its first argument before leaving? */
static bool shows(csh cs, const uint8_t *code, size_t len, const struct ngx_field *f)
{
	cs_insn *insn = cs_malloc(cs);
	uint64_t addr = 0;
	bool found = false;
	int n;

	for (n = 0; insn && n < NGX_LOOK_INSNS && cs_disasm_iter(cs, &code, &len, &addr, insn);
	     n++) {
		if (loads_field(insn, f)) {
			found = true;
			break;
		}
		if (ends_block(insn) || writes_rdi(cs, insn))
			break;
	}
	cs_free(insn, 1);
	return found;
}

/* "nginx/<digit>..." in .rodata, as NGINX_VER puts it there. */
static void read_version(Elf *elf, struct ngxcode *n)
{
	GElf_Shdr sh;
	size_t size = 0;
	const char *p = (const char *)elfsym__section_bytes(elf, ".rodata", &size, &sh);
	const char *end = p ? p + size : NULL;

	while (p && (p = memmem(p, (size_t)(end - p), "nginx/", 6)) && p + 7 < end) {
		size_t len = 6;

		if (p[6] < '0' || p[6] > '9') {
			p += 6;
			continue;
		}
		while (p + len < end && len < sizeof(n->version) - 1 &&
		       (isalnum((unsigned char)p[len]) || p[len] == '.'))
			len++;
		snprintf(n->version, sizeof(n->version), "%.*s", (int)len, p);
		return;
	}
}

static void verify(Elf *elf, int fd, struct ngxcode *n)
{
	uint8_t code[NGX_LOOK_BYTES];
	GElf_Ehdr eh;
	size_t i, len;
	csh cs;

	n->unverified = "its machine code";
	n->where = "the program (not x86-64)";
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	n->unverified = NULL;
	n->where = NULL;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]) && !n->unverified; i++) {
		len = elfsym__function_bytes(elf, fd, fields[i].fn, code, sizeof(code), NULL);
		if (!len || !shows(cs, code, len, &fields[i])) {
			n->unverified = fields[i].name;
			n->where = fields[i].fn;
		}
	}
	cs_close(&cs);
}

int ngxcode__open(const char *path, struct ngxcode *n)
{
	GElf_Sym sym;
	int fd, err = 0;
	Elf *elf;

	memset(n, 0, sizeof(*n));
	elf = elfsym__open(path, &fd);
	if (!elf)
		return -1;
	if (!elfsym__function(elf, NGXCODE_PROBED_FN, &sym)) {
		err = -1;
		errno = ENOEXEC;
	} else {
		read_version(elf, n);
		verify(elf, fd, n);
	}
	elfsym__close(elf, fd);
	return err;
}
