// SPDX-License-Identifier: GPL-2.0
/*
 * OpenSSL's plaintext, as a uprobe runtime (runtime.h): in, every libssl.so*
 * a followed process maps or the dynamic linker knows; out, the probes of
 * bpf/tls.c at SSL_read/SSL_write and their _ex forms, entry and return,
 * attached to the file (pid -1: every process that maps it, now or later).
 * Status: tls_files, the files probed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <json-c/json.h>

#include "log.h"
#include "kernel/observer_api.h"
#include "probes/runtime.h"

#define TLS_FILES_MAX 32
#define TLS_PROBES    8

struct tls {
	struct observer *obs;
	int files;
};

static void *tls_open(struct observer *obs)
{
	struct tls *t = calloc(1, sizeof(*t));

	if (t)
		t->obs = obs;
	return t;
}

static void tls_close(void *state)
{
	free(state);
}

/* 0, or -errno (-ENOENT: the file has none of the functions). */
static int attach(struct tls *t, const char *path)
{
	static const struct {
		const char *prog, *func;
		bool ret;
	} probes[TLS_PROBES] = {
		{ "tls_read", "SSL_read", false },
		{ "tls_read_ret", "SSL_read", true },
		{ "tls_write", "SSL_write", false },
		{ "tls_write_ret", "SSL_write", true },
		{ "tls_read_ex", "SSL_read_ex", false },
		{ "tls_read_ex_ret", "SSL_read_ex", true },
		{ "tls_write_ex", "SSL_write_ex", false },
		{ "tls_write_ex_ret", "SSL_write_ex", true },
	};
	struct bpf_object *obj = observer__object(t->obs);
	struct bpf_link *links[TLS_PROBES];
	int i, attached = 0, err = -ENOENT;

	if (t->files >= TLS_FILES_MAX)
		return -ENOSPC;
	for (i = 0; i < TLS_PROBES; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = probes[i].func,
			    .retprobe = probes[i].ret);
		struct bpf_program *prog = bpf_object__find_program_by_name(obj, probes[i].prog);

		if (!prog) {
			err = -ENOENT;
			continue;
		}
		links[attached] = bpf_program__attach_uprobe_opts(prog, -1, path, 0, &opts);
		if (!links[attached])
			err = -errno;
		else
			attached++;
	}
	if (!attached)
		return err;
	return observer__keep_links(t->obs, links, attached);
}

static bool tls_probe(void *state, const struct probe_file *f)
{
	struct tls *t = state;
	int err = attach(t, f->path);

	if (err) {
		pr_warn("cannot probe TLS in %s: %s", f->path, strerror(-err));
		return false;
	}
	pr_info("TLS: probing SSL_read/SSL_write in %s", f->path);
	t->files++;
	return true;
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
	.open = tls_open,
	.close = tls_close,
	.probe = tls_probe,
	.status = tls_status,
};
PROBE_RUNTIME(tls_runtime);
