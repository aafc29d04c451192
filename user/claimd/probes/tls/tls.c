// SPDX-License-Identifier: GPL-2.0
/*
 * OpenSSL's plaintext, as a uprobe runtime (probes/runtime.h): in, every
 * libssl.so* a followed process maps or the dynamic linker knows; out, the
 * probes of bpf/tls.c at SSL_read/SSL_write and their _ex forms, and at
 * SSL_do_handshake, entry and return, attached to the file (every process
 * that maps it, now or later).
 * Status: tls_files, the files probed.
 */

#include <json-c/json.h>

#include "probes/runtime.h"

#define TLS_FILES_MAX 32

struct tls {
	int files;
};

static const struct probe_fn tls_fns[] = {
	{ "tls_read", "SSL_read", false },
	{ "tls_read_ret", "SSL_read", true },
	{ "tls_write", "SSL_write", false },
	{ "tls_write_ret", "SSL_write", true },
	{ "tls_read_ex", "SSL_read_ex", false },
	{ "tls_read_ex_ret", "SSL_read_ex", true },
	{ "tls_write_ex", "SSL_write_ex", false },
	{ "tls_write_ex_ret", "SSL_write_ex", true },
	/* No plaintext: the handshake ties its SSL to its socket (bpf/tls.c). */
	{ "tls_handshake", "SSL_do_handshake", false },
	{ "tls_handshake_ret", "SSL_do_handshake", true },
};

static const struct probe_set tls_set = {
	.fns = tls_fns,
	.n = sizeof(tls_fns) / sizeof(tls_fns[0]),
	.all = false, /* a libssl with only one of the forms is probed at what it has */
	.max = TLS_FILES_MAX,
	.name = "TLS",
	.says = "TLS: probing SSL_read/SSL_write",
};

static bool tls_probe(void *state, struct observer *obs, const struct probe_file *f, __u32 *word)
{
	struct tls *t = state;

	(void)word; /* the runtime's own word, as it is */
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
	.state_size = sizeof(struct tls),
	.probe = tls_probe,
	.status = tls_status,
};
PROBE_RUNTIME(tls_runtime);
