// SPDX-License-Identifier: GPL-2.0
/*
 * OpenSSL's plaintext, as a uprobe runtime (probes/runtime.h): in, every
 * libssl.so* a followed process maps or the dynamic linker knows, and the
 * executable of a followed process that exports SSL_write (OpenSSL linked
 * in whole and exported: Node.js's); out, the
 * probes of bpf/tls.c at SSL_read/SSL_write and their _ex forms, and at
 * SSL_do_handshake, entry and return, attached to the file (every process
 * that maps it, now or later).
 * Status: tls_files, the files probed.
 */

#include <json-c/json.h>

#include "probes/elfsym.h"
#include "probes/runtime.h"

#define TLS_FILES_MAX 32

struct tls {
	int files;
};

static const struct probe_fn tls_fns[] = {
	{ .prog = "tls_read", .func = "SSL_read" },
	{ .prog = "tls_call_ret", .func = "SSL_read", .ret = true },
	{ .prog = "tls_write", .func = "SSL_write" },
	{ .prog = "tls_call_ret", .func = "SSL_write", .ret = true },
	{ .prog = "tls_read_ex", .func = "SSL_read_ex" },
	{ .prog = "tls_call_ret", .func = "SSL_read_ex", .ret = true },
	{ .prog = "tls_write_ex", .func = "SSL_write_ex" },
	{ .prog = "tls_call_ret", .func = "SSL_write_ex", .ret = true },
	/* No plaintext: the handshake ties its SSL to its socket (bpf/tls.c). */
	{ .prog = "tls_handshake", .func = "SSL_do_handshake" },
	{ .prog = "tls_handshake_ret", .func = "SSL_do_handshake", .ret = true },
};

static const struct probe_set tls_set = {
	.fns = tls_fns,
	.n = sizeof(tls_fns) / sizeof(tls_fns[0]),
	.all = false, /* a libssl with only one of the forms is probed at what it has */
	.max = TLS_FILES_MAX,
	.name = "TLS",
	.says = "TLS: probing SSL_read/SSL_write",
};

/* Does the executable at path export OpenSSL's SSL_write (OpenSSL linked in whole, Node.js's)? */
static bool exports_openssl(const char *path)
{
	GElf_Sym sym;
	int fd = -1;
	Elf *elf = elfsym__open(path, &fd);
	bool has = elf && elfsym__function(elf, "SSL_write", &sym);

	elfsym__close(elf, fd);
	return has;
}

static bool tls_probe(void *state, struct observer *obs, const struct probe_file *f, __u32 *word)
{
	struct tls *t = state;

	(void)word; /* the runtime's own word, as it is */
	if (f->exe && !exports_openssl(f->path))
		return false;
	return probes__attach_set(obs, f, &tls_set, &t->files);
}

static void tls_status(const void *state, struct json_object *o)
{
	const struct tls *t = state;

	json_object_object_add(o, "tls_files", json_object_new_int(t ? t->files : 0));
}

static const char *const tls_libs[] = { "libssl.so", NULL };

static const struct probe_runtime tls_runtime = {
	.name = "tls",
	.libs = tls_libs,
	.exe = true, /* an executable with OpenSSL linked in, exported (Node.js) */
	.state_size = sizeof(struct tls),
	.probe = tls_probe,
	.status = tls_status,
};
PROBE_RUNTIME(tls_runtime);
