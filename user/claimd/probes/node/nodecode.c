// SPDX-License-Identifier: GPL-2.0
/*
 * Where a Node.js binary keeps what Node's probe reads, found in its code
 * (capstone, operand by operand) and checked twice:
 *
 *  - AsyncWrap::AsyncReset draws a resource's new id: it loads this's
 *    realm, the realm's environment, the environment's async_id_fields
 *    (a chain of three loads from RDI), adds 1 to the counter at [2]
 *    (+16) and stores the sum at this + the async id's offset, then its
 *    trigger next to it (+8);
 *  - TCPWrap::New (its constructor inlined) calls its base's constructor
 *    with the new object: after that call, where a register the call keeps
 *    holds that object, a new socket's ids are known; the lineage probe
 *    goes on the first instruction from there that the kernel emulates, if
 *    the code before it leaves that register and those ids alone;
 *  - AsyncHooks::push_async_context stores the context it enters, its id
 *    and trigger packed in one register (unpcklpd), at [0] of a buffer it
 *    loads from this: the running context's id at [0], its trigger at [1];
 *  - InternalCallbackScope's constructor calls push_async_context on its
 *    environment's AsyncHooks (lea RDI, [env + hooks]): hooks + the
 *    buffer's offset there must be the async_id_fields offset found above;
 *  - the HTTP parser's on_headers_complete passes its this unchanged as
 *    the AsyncWrap of AsyncWrap::MakeCallback: the parser is its async
 *    resource at offset 0, so OnStreamRead's this is too.
 *
 * Registers are followed as paths from the function's arguments (RDI,
 * RSI): "RDI, then the pointer at +a, then the pointer at +b". A load
 * extends a path, a move copies it, lea adds to a bare argument, any other
 * write forgets it, a call forgets the registers the ABI lets it clobber.
 * Straight through the code, branches not followed: what is sought is the
 * functions' main line, and a match is a chain of specific operands.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <capstone/capstone.h>

#include "probes/elfsym.h"
#include "probes/node/nodecode.h"

#define FN_PUSH_CONTEXT "_ZN4node10AsyncHooks18push_async_contextEddN2v85LocalINS1_6ObjectEEE"
#define FN_CALLBACK_SCOPE                                                                    \
	"_ZN4node21InternalCallbackScopeC2EPNS_11EnvironmentEN2v85LocalINS3_6ObjectEEERKNS_" \
	"13async_contextEi"
#define FN_HEADERS_DONE "_ZN4node12_GLOBAL__N_16Parser19on_headers_completeEv"
#define FN_MAKE_CALLBACK \
	"_ZN4node9AsyncWrap12MakeCallbackEN2v85LocalINS1_8FunctionEEEiPNS2_INS1_5ValueEEE"

#define CODE_MAX   4096 /* bytes of a function looked at */
#define INSNS_MAX  600
#define PATH_DEPTH 3

enum { ROOT_NONE = 0, ROOT_RDI, ROOT_RSI };

/* What a register holds: an argument (plus add), or pointers loaded from it at off[]. */
struct rpath {
	uint8_t root;
	uint8_t depth;
	uint32_t val; /* no root: which value it is (0 none), kept by moves */
	int64_t add;  /* depth 0 only: lea's displacement */
	int64_t off[PATH_DEPTH];
};

/* The 16 general registers, each with the names of its parts. */
static const x86_reg gprs[16][5] = {
	{ X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, X86_REG_AH },
	{ X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL, X86_REG_BH },
	{ X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH },
	{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH },
	{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL, X86_REG_INVALID },
	{ X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, X86_REG_INVALID },
	{ X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL, X86_REG_INVALID },
	{ X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL, X86_REG_INVALID },
	{ X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B, X86_REG_INVALID },
	{ X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B, X86_REG_INVALID },
	{ X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B, X86_REG_INVALID },
	{ X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B, X86_REG_INVALID },
	{ X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B, X86_REG_INVALID },
	{ X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B, X86_REG_INVALID },
	{ X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B, X86_REG_INVALID },
	{ X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B, X86_REG_INVALID },
};

/* The index of the general register reg is a part of, or -1. */
static int gpr_of(unsigned int reg)
{
	int i, j;

	for (i = 0; i < 16; i++)
		for (j = 0; j < 5; j++)
			if (gprs[i][j] != X86_REG_INVALID && gprs[i][j] == reg)
				return i;
	return -1;
}

/* The index of a full 64-bit general register, or -1. */
static int gpr64(unsigned int reg)
{
	int i = gpr_of(reg);

	return i >= 0 && gprs[i][0] == reg ? i : -1;
}

#define FORKS_MAX 32

/* The registers at a conditional branch, for the code it goes forward to. */
struct fork {
	uint64_t target;
	struct rpath regs[16];
};

struct walk {
	csh cs;
	struct rpath regs[16];
	const cs_insn *insn;
	int xmm_pair; /* unpcklpd xmm0, xmm1 seen */
	bool gone;    /* the last instruction went elsewhere (ret, jmp): the next is a target */
	struct fork forks[FORKS_MAX];
	int nforks;
	uint32_t vals; /* values numbered so far */
};

static bool path_is(const struct rpath *p, uint8_t root, uint8_t depth)
{
	return p->root == root && p->depth == depth;
}

/* A memory operand [base + disp] with no index nor segment: base's register index, or -1. */
static int plain_mem(const cs_x86_op *op)
{
	if (op->type != X86_OP_MEM || op->mem.index != X86_REG_INVALID ||
	    op->mem.segment != X86_REG_INVALID)
		return -1;
	return gpr64(op->mem.base);
}

/* Register r holds a value no path names: a new one. */
static void forget(struct walk *w, int r)
{
	memset(&w->regs[r], 0, sizeof(struct rpath));
	w->regs[r].val = ++w->vals;
}

/* The instruction's effect on the registers' paths. */
static void step(struct walk *w)
{
	const cs_insn *insn = w->insn;
	const cs_x86 *x = &insn->detail->x86;
	static const int clobbered[] = { 0, 2, 3, 4, 5, 8, 9, 10, 11 };
	cs_regs rd, wr;
	uint8_t nr = 0, nw = 0, i;
	struct rpath next = { 0 };
	int dst = -1, base;
	bool set = false;

	if ((insn->id == X86_INS_MOV || insn->id == X86_INS_LEA) && x->op_count == 2 &&
	    x->operands[0].type == X86_OP_REG && (dst = gpr64(x->operands[0].reg)) >= 0) {
		const cs_x86_op *src = &x->operands[1];

		if (insn->id == X86_INS_MOV && src->type == X86_OP_REG && gpr64(src->reg) >= 0) {
			next = w->regs[gpr64(src->reg)];
			set = true;
		} else if ((base = plain_mem(src)) >= 0 && w->regs[base].root) {
			const struct rpath *b = &w->regs[base];

			if (insn->id == X86_INS_LEA && b->depth == 0) {
				next = *b;
				next.add += src->mem.disp;
				set = true;
			} else if (insn->id == X86_INS_MOV && src->size == 8 && !b->add &&
				   b->depth < PATH_DEPTH) {
				next = *b;
				next.off[next.depth++] = src->mem.disp;
				set = true;
			}
		}
	}
	/* A register written otherwise holds a value of its own, numbered. */
	if (!cs_regs_access(w->cs, insn, rd, &nr, wr, &nw))
		for (i = 0; i < nw; i++)
			if (gpr_of(wr[i]) >= 0)
				forget(w, gpr_of(wr[i]));
	if (cs_insn_group(w->cs, insn, X86_GRP_CALL))
		for (i = 0; i < sizeof(clobbered) / sizeof(clobbered[0]); i++)
			forget(w, clobbered[i]);
	if (set)
		w->regs[dst] = next;
}

/*
 * The registers where a branch forward lands: after a ret or a jmp, those
 * the branch had; reached also by falling through, what both agree on.
 */
static void land(struct walk *w, uint64_t addr)
{
	int i, r;

	for (i = 0; i < w->nforks; i++) {
		if (w->forks[i].target != addr)
			continue;
		if (w->gone) {
			memcpy(w->regs, w->forks[i].regs, sizeof(w->regs));
			w->gone = false;
			continue;
		}
		for (r = 0; r < 16; r++)
			if (memcmp(&w->regs[r], &w->forks[i].regs[r], sizeof(struct rpath)))
				memset(&w->regs[r], 0, sizeof(struct rpath));
	}
}

/* A branch: a conditional one forward keeps the registers for its target. */
static void branch(struct walk *w)
{
	const cs_insn *insn = w->insn;
	const cs_x86 *x = &insn->detail->x86;

	if (cs_insn_group(w->cs, insn, X86_GRP_RET) || insn->id == X86_INS_JMP) {
		w->gone = true;
		return;
	}
	if (!cs_insn_group(w->cs, insn, X86_GRP_JUMP) || x->op_count != 1 ||
	    x->operands[0].type != X86_OP_IMM || (uint64_t)x->operands[0].imm <= insn->address ||
	    w->nforks >= FORKS_MAX)
		return;
	w->forks[w->nforks].target = (uint64_t)x->operands[0].imm;
	memcpy(w->forks[w->nforks].regs, w->regs, sizeof(w->regs));
	w->nforks++;
}

/* Calls each instruction of code (at address addr) with the registers before it. */
static bool walk(csh cs, const uint8_t *code, size_t len, uint64_t addr, int root_reg,
		 bool (*seen)(struct walk *, void *), void *arg)
{
	struct walk *w = calloc(1, sizeof(*w));
	cs_insn *insn = cs_malloc(cs);
	bool done = false;
	int n;

	if (!w || !insn) {
		free(w);
		cs_free(insn, 1);
		return false;
	}
	w->cs = cs;
	w->regs[root_reg == ROOT_RDI ? 5 : 4].root = root_reg;
	for (n = 0; n < INSNS_MAX && !done && cs_disasm_iter(cs, &code, &len, &addr, insn); n++) {
		w->insn = insn;
		land(w, insn->address);
		/* Code after a ret or jmp that no branch seen goes to (padding, a
		 * block reached backwards): nothing known, until a branch's target. */
		if (w->gone)
			memset(w->regs, 0, sizeof(w->regs));
		done = seen(w, arg);
		step(w);
		branch(w);
	}
	cs_free(insn, 1);
	free(w);
	return done;
}

static const cs_x86_op *op(const struct walk *w, int i)
{
	return &w->insn->detail->x86.operands[i];
}

static int op_count(const struct walk *w)
{
	return w->insn->detail->x86.op_count;
}

/*
 * AsyncReset: the counter's add through RDI's chain, then the id's store
 * into this, then the trigger's next to it.
 */
struct reset_seen {
	struct rpath chain;
	bool counted;
	int64_t id;
	bool stored;
};

static bool reset_seen(struct walk *w, void *arg)
{
	struct reset_seen *s = arg;
	int b;

	if (!s->counted && w->insn->id == X86_INS_ADDSD && op_count(w) == 2 &&
	    (b = plain_mem(op(w, 1))) >= 0 && path_is(&w->regs[b], ROOT_RDI, 3) &&
	    op(w, 1)->mem.disp == 16) {
		s->chain = w->regs[b];
		s->counted = true;
		return false;
	}
	if (s->counted && w->insn->id == X86_INS_MOVSD && op_count(w) == 2 &&
	    (b = plain_mem(op(w, 0))) >= 0 && path_is(&w->regs[b], ROOT_RDI, 0) &&
	    !w->regs[b].add && op(w, 1)->type == X86_OP_REG) {
		if (!s->stored) {
			s->id = op(w, 0)->mem.disp;
			s->stored = true;
			return false;
		}
		return op(w, 0)->mem.disp == s->id + 8;
	}
	return false;
}

/*
 * TCPWrap::New: the call to its base's constructor (target), given the new
 * object in RDI; after it, a register the call keeps that holds the same
 * value (the constructor's inlined rest uses it as this). Then where the
 * probe goes: the first instruction from there that the kernel emulates at
 * a uprobe (a relative call, jump or conditional jump, a one-byte nop),
 * where one it must step out of line traps twice (the breakpoint, then the
 * step's debug exception). Only past instructions that leave the register
 * and the object's id and trigger (ids, 16 bytes) as they were: plain
 * moves, arithmetic and stores into the object elsewhere; else right after
 * the call.
 */
struct ctor_seen {
	uint64_t target;
	int64_t ids;	   /* the object's async id's offset */
	struct rpath self; /* RDI at the call */
	uint64_t after;	   /* the address after the call, 0 until seen */
	int reg;	   /* the register holding the object there, -1 until known */
	uint64_t at;	   /* where the probe goes: after, or an emulated instruction past it */
	bool emulated;	   /* the instruction at at is one the kernel emulates */
	int looked;	   /* instructions looked at from after */
};

#define CTOR_LOOK_MAX 8 /* instructions past the call an emulated one may be sought in */

/* Does the kernel emulate insn at a uprobe, rather than step it out of line (a second trap)? */
static bool kernel_emulates(const cs_insn *insn)
{
	static const unsigned int relative[] = {
		X86_INS_CALL, X86_INS_JMP, X86_INS_JA, X86_INS_JAE, X86_INS_JB, X86_INS_JBE,
		X86_INS_JE,   X86_INS_JNE, X86_INS_JG, X86_INS_JGE, X86_INS_JL, X86_INS_JLE,
		X86_INS_JO,   X86_INS_JNO, X86_INS_JP, X86_INS_JNP, X86_INS_JS, X86_INS_JNS,
	};
	const cs_x86 *x = &insn->detail->x86;
	size_t i;

	/* One byte: every kernel emulates it (a multi-byte nop only newer ones). */
	if (insn->id == X86_INS_NOP)
		return insn->size == 1;
	for (i = 0; i < sizeof(relative) / sizeof(relative[0]); i++)
		if (insn->id == relative[i])
			return x->op_count == 1 && x->operands[0].type == X86_OP_IMM;
	return false;
}

/*
 * Does the instruction leave the object in register reg, and its id and
 * trigger, as they were? Only plain moves and arithmetic, writing neither
 * the register nor memory but the object's own outside ids.
 */
static bool keeps_object(csh cs, const cs_insn *insn, int reg, int64_t ids)
{
	static const unsigned int plain[] = {
		X86_INS_MOV,	X86_INS_MOVABS, X86_INS_LEA,	X86_INS_MOVZX,	X86_INS_MOVSX,
		X86_INS_MOVSXD, X86_INS_MOVUPS, X86_INS_MOVAPS, X86_INS_MOVDQU, X86_INS_MOVDQA,
		X86_INS_PXOR,	X86_INS_XORPS,	X86_INS_ADD,	X86_INS_SUB,	X86_INS_AND,
		X86_INS_OR,	X86_INS_XOR,	X86_INS_CMP,	X86_INS_TEST,
	};
	const cs_x86 *x = &insn->detail->x86;
	cs_regs rd, wr;
	uint8_t nr = 0, nw = 0, i;
	bool known = false;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		known |= insn->id == plain[i];
	if (!known || x->prefix[0] || cs_regs_access(cs, insn, rd, &nr, wr, &nw))
		return false;
	for (i = 0; i < nw; i++)
		if (gpr_of(wr[i]) == reg)
			return false;
	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *o = &x->operands[i];

		if (o->type != X86_OP_MEM || !(o->access & CS_AC_WRITE))
			continue;
		if (plain_mem(o) != reg || (o->mem.disp < ids + 16 && o->mem.disp + o->size > ids))
			return false;
	}
	return true;
}

static bool ctor_seen(struct walk *w, void *arg)
{
	static const int kept[] = { 1, 6, 12, 13, 14, 15 }; /* RBX, RBP, R12-R15 */
	struct ctor_seen *s = arg;
	size_t i;

	if (!s->after) {
		if (w->insn->id != X86_INS_CALL || op_count(w) != 1 ||
		    op(w, 0)->type != X86_OP_IMM || (uint64_t)op(w, 0)->imm != s->target)
			return false;
		s->self = w->regs[5];
		s->after = w->insn->address + w->insn->size;
		s->reg = -1;
		return !s->self.root && !s->self.val; /* nothing known of it: not seen */
	}
	if (s->reg < 0) {
		for (i = 0; i < sizeof(kept) / sizeof(kept[0]) && s->reg < 0; i++)
			if (!memcmp(&w->regs[kept[i]], &s->self, sizeof(s->self)))
				s->reg = kept[i];
		if (s->reg < 0) {
			s->after = 0;
			return true;
		}
		s->at = s->after;
	}
	if (kernel_emulates(w->insn)) {
		s->at = w->insn->address;
		s->emulated = true;
		return true;
	}
	return ++s->looked >= CTOR_LOOK_MAX || !keeps_object(w->cs, w->insn, s->reg, s->ids);
}

/*
 * A relative branch or call of the function's code landing in (from, to]:
 * code reached so would run the probe at to with other registers.
 */
struct landing {
	uint64_t from, to;
	bool seen;
};

static bool landing_seen(struct walk *w, void *arg)
{
	struct landing *l = arg;
	const cs_x86 *x = &w->insn->detail->x86;

	if (!cs_insn_group(w->cs, w->insn, X86_GRP_JUMP) &&
	    !cs_insn_group(w->cs, w->insn, X86_GRP_CALL))
		return false;
	l->seen = x->op_count == 1 && x->operands[0].type == X86_OP_IMM &&
		  (uint64_t)x->operands[0].imm > l->from && (uint64_t)x->operands[0].imm <= l->to;
	return l->seen;
}

/* push_async_context: [id, trigger] packed, stored at [0] of a buffer loaded from this. */
static bool push_seen(struct walk *w, void *arg)
{
	int64_t *buffer = arg;
	int b;

	if (w->insn->id == X86_INS_UNPCKLPD && op_count(w) == 2 && op(w, 0)->type == X86_OP_REG &&
	    op(w, 0)->reg == X86_REG_XMM0 && op(w, 1)->type == X86_OP_REG &&
	    op(w, 1)->reg == X86_REG_XMM1)
		w->xmm_pair = 1;
	if (w->xmm_pair && w->insn->id == X86_INS_MOVUPS && op_count(w) == 2 &&
	    (b = plain_mem(op(w, 0))) >= 0 && op(w, 0)->mem.disp == 0 &&
	    path_is(&w->regs[b], ROOT_RDI, 1) && op(w, 1)->type == X86_OP_REG &&
	    op(w, 1)->reg == X86_REG_XMM0) {
		*buffer = w->regs[b].off[0];
		return true;
	}
	return false;
}

/* A call to target with RDI holding the path want (want's root, depth 0, its add). */
struct call_seen {
	uint64_t target;
	struct rpath want;
	int64_t add; /* RDI's add at the call */
	bool found;
};

static bool call_seen(struct walk *w, void *arg)
{
	struct call_seen *s = arg;
	const struct rpath *rdi = &w->regs[5];

	if (w->insn->id != X86_INS_CALL || op_count(w) != 1 || op(w, 0)->type != X86_OP_IMM ||
	    (uint64_t)op(w, 0)->imm != s->target)
		return false;
	if (!path_is(rdi, s->want.root, 0) || (s->want.add >= 0 && rdi->add != s->want.add))
		return false;
	s->add = rdi->add;
	s->found = true;
	return true;
}

struct fn_code {
	uint8_t bytes[CODE_MAX];
	size_t len;
	uint64_t addr;
};

/* Reads function name's code into *f: true when found. */
static bool fn_code(Elf *elf, int fd, const char *name, struct fn_code *f)
{
	f->len = elfsym__function_bytes(elf, fd, name, f->bytes, sizeof(f->bytes), &f->addr);
	return f->len > 0;
}

static uint64_t fn_addr(Elf *elf, const char *name)
{
	GElf_Sym sym;

	return elfsym__function(elf, name, &sym) ? sym.st_value : 0;
}

/* Does offset v fit the cookie's field of at most max? */
static bool fits(int64_t v, int64_t max)
{
	return v >= 0 && v <= max;
}

#define REFUSE(n, what, fn) ((n)->unverified = (what), (n)->where = (fn), (void)0)

static void verify(Elf *elf, int fd, csh cs, struct nodecode *n)
{
	struct fn_code *f = malloc(sizeof(*f));
	struct reset_seen rs = { 0 };
	struct ctor_seen ctor = { 0 };
	struct call_seen scope = { 0 }, parser = { 0 };
	int64_t buffer = -1;

	if (!f) {
		REFUSE(n, "its code (out of memory)", NODECODE_RESET_FN);
		return;
	}
	if (!fn_code(elf, fd, NODECODE_RESET_FN, f) ||
	    !walk(cs, f->bytes, f->len, f->addr, ROOT_RDI, reset_seen, &rs) ||
	    !fits(rs.chain.off[0], 0xff) || !fits(rs.chain.off[1], 0xffff) ||
	    !fits(rs.chain.off[2], 0xffff) || !fits(rs.id, 0xff)) {
		REFUSE(n, "an async resource's id drawn from its environment's counter",
		       NODECODE_RESET_FN);
		goto out;
	}
	n->realm = (uint16_t)rs.chain.off[0];
	n->env = (uint16_t)rs.chain.off[1];
	n->fields = (uint16_t)rs.chain.off[2];
	n->async_id = (uint16_t)rs.id;
	ctor.target = fn_addr(elf, NODECODE_TCP_BASE_FN);
	ctor.ids = n->async_id;
	if (ctor.target && fn_code(elf, fd, NODECODE_TCP_FN, f))
		walk(cs, f->bytes, f->len, f->addr, ROOT_RDI, ctor_seen, &ctor);
	if (ctor.after && ctor.at != ctor.after) {
		struct landing l = { .from = ctor.after, .to = ctor.at };

		if (walk(cs, f->bytes, f->len, f->addr, ROOT_RDI, landing_seen, &l)) {
			ctor.at = ctor.after;
			ctor.emulated = false;
		}
	}
	if (!ctor.after || ctor.reg < 0 || !(n->tcp_off = elfsym__file_offset(elf, ctor.at))) {
		REFUSE(n, "a new TCP socket's TCPWrap, after its base's constructor",
		       NODECODE_TCP_FN);
		goto out;
	}
	n->tcp_at = ctor.at - f->addr;
	n->tcp_emulated = ctor.emulated;
	n->tcp_reg = (uint8_t)ctor.reg;
	if (!fn_code(elf, fd, FN_PUSH_CONTEXT, f) ||
	    !walk(cs, f->bytes, f->len, f->addr, ROOT_RDI, push_seen, &buffer)) {
		REFUSE(n, "the running context's id and trigger at async_id_fields[0] and [1]",
		       FN_PUSH_CONTEXT);
		goto out;
	}
	scope.target = fn_addr(elf, FN_PUSH_CONTEXT);
	scope.want.root = ROOT_RSI;
	scope.want.add = -1; /* any: it is what is sought */
	if (!fn_code(elf, fd, FN_CALLBACK_SCOPE, f) ||
	    !walk(cs, f->bytes, f->len, f->addr, ROOT_RSI, call_seen, &scope) ||
	    scope.add + buffer != n->fields) {
		REFUSE(n, "the environment's async_id_fields as its AsyncHooks' context buffer",
		       FN_CALLBACK_SCOPE);
		goto out;
	}
	parser.target = fn_addr(elf, FN_MAKE_CALLBACK);
	parser.want.root = ROOT_RDI;
	parser.want.add = 0;
	if (!parser.target || !fn_code(elf, fd, FN_HEADERS_DONE, f) ||
	    !walk(cs, f->bytes, f->len, f->addr, ROOT_RDI, call_seen, &parser)) {
		REFUSE(n, "the HTTP parser as its own async resource (at offset 0)",
		       FN_HEADERS_DONE);
		goto out;
	}
out:
	free(f);
}

uint64_t nodecode__tcp_cookie(const struct nodecode *n)
{
	return (uint64_t)n->tcp_reg | (uint64_t)n->async_id << 16;
}

uint64_t nodecode__cookie(const struct nodecode *n, uint16_t adjust)
{
	return (uint64_t)n->async_id | (uint64_t)n->realm << 8 | (uint64_t)n->env << 16 |
	       (uint64_t)n->fields << 32 | (uint64_t)adjust << 48;
}

int nodecode__open(const char *path, struct nodecode *n)
{
	GElf_Sym sym;
	GElf_Ehdr eh;
	int fd, err = 0;
	Elf *elf;
	csh cs;

	memset(n, 0, sizeof(*n));
	elf = elfsym__open(path, &fd);
	if (!elf)
		return -1;
	if (!elfsym__function(elf, NODECODE_RESET_FN, &sym)) {
		err = -1;
		errno = ENOEXEC;
	} else if (!elfsym__function(elf, NODECODE_PROBED_FN, &sym) ||
		   !(n->parse_off = elfsym__file_offset(elf, sym.st_value))) {
		REFUSE(n, "its HTTP parser's OnStreamRead among its symbols (a stripped build)",
		       "its symbol table");
	} else if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
		   cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		REFUSE(n, "its machine code", "the program (not x86-64)");
	} else {
		long adjust = 0;

		cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
		verify(elf, fd, cs, n);
		cs_close(&cs);
		if (elfsym__thunk(elf, NODECODE_PROBED_FN, &sym, &adjust) && adjust > 0 &&
		    adjust <= 0xffff && (n->thunk_off = elfsym__file_offset(elf, sym.st_value)))
			n->thunk_adjust = (uint16_t)adjust;
	}
	elfsym__close(elf, fd);
	return err;
}
