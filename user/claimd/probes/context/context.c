// SPDX-License-Identifier: GPL-2.0
/*
 * libclaim's explicit context, as a uprobe runtime (runtime.h): in, every
 * libclaim.so* a followed process maps or the dynamic linker knows, and
 * the executables of followed processes (linked with libclaim.a); out, the
 * probes of bpf/context.c at claim_context_enter/leave, attached to each
 * file that defines them. Status: context_files, the files probed.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <json-c/json.h>

#include "log.h"
#include "probes/elfsym.h"
#include "probes/runtime.h"

#define CONTEXT_SYMBOL "claim_context_enter"
#define CTX_FILES_MAX  64

struct context {
	int files;
};

static int context_open(void *state, struct observer *obs)
{
	(void)state, (void)obs;
	if (elf_version(EV_CURRENT) == EV_NONE)
		pr_warn("libelf is unusable: programs linked with libclaim.a are not probed");
	return 0;
}

/* Does the ELF file at path define the function 'name'? */
static bool elf_has_symbol(const char *path, const char *name)
{
	GElf_Sym sym;
	bool found;
	Elf *elf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	found = elfsym__function(elf, name, &sym);
	elf_end(elf);
	close(fd);
	return found;
}

static const struct probe_fn context_fns[] = {
	{ .prog = "ctx_enter", .func = "claim_context_enter" },
	{ .prog = "ctx_leave", .func = "claim_context_leave" },
};

static const struct probe_set context_set = {
	.fns = context_fns,
	.n = sizeof(context_fns) / sizeof(context_fns[0]),
	.all = true, /* both or neither: a context entered and never left is worse than none */
	.max = CTX_FILES_MAX,
	.name = "claim_context_*",
	.says = "explicit context: probing claim_context_enter/leave",
};

static bool context_probe(void *state, struct observer *obs, const struct probe_file *f,
			  __u32 *word)
{
	struct context *c = state;

	(void)word; /* the runtime's own word, as it is */
	return elf_has_symbol(f->path, CONTEXT_SYMBOL) &&
	       probes__attach_set(obs, f, &context_set, &c->files);
}

static void context_status(const void *state, struct json_object *o)
{
	const struct context *c = state;

	json_object_object_add(o, "context_files", json_object_new_int(c ? c->files : 0));
}

static const char *const context_libs[] = { "libclaim.so", NULL };

static const struct probe_runtime context_runtime = {
	.name = "context",
	.libs = context_libs,
	.exe = true,
	.state_size = sizeof(struct context),
	.open = context_open,
	.probe = context_probe,
	.status = context_status,
};
PROBE_RUNTIME(context_runtime);
