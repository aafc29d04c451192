// SPDX-License-Identifier: GPL-2.0
/* Finding files for uprobes and probing each once; see uprobes.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "probes/go/goprobes.h"
#include "hashtab.h"
#include "log.h"
#include "kernel/observer_api.h"
#include "probes/uprobes.h"

#define CONTEXT_SYMBOL "claim_context_enter"

/* Where the dynamic linker finds libraries on Debian, besides what processes map. */
static const char *const known_dirs[] = {
	"/usr/lib/x86_64-linux-gnu",
	"/lib/x86_64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu",
	"/usr/lib64",
	"/usr/lib",
	"/usr/local/lib",
};

struct file_id {
	dev_t dev;
	ino_t ino;
};

struct uprobes {
	struct observer *obs;
	bool tls, context;
	int tls_files, context_files;
	struct hashtab *seen; /* struct file_id -> (void *)1: looked at already */
	struct goprobes *go;  /* Go executables of followed processes, or NULL */
};

struct uprobes *uprobes__new(struct observer *obs, bool tls, bool context, bool go)
{
	struct uprobes *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->obs = obs;
	u->tls = tls;
	u->context = context;
	u->seen = hashtab__new();
	u->go = go ? goprobes__new(obs) : NULL;
	if (!u->seen || (go && !u->go)) {
		hashtab__free(u->seen);
		goprobes__free(u->go);
		free(u);
		return NULL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		pr_warn("libelf is unusable: programs linked with libclaim.a are not probed");
	return u;
}

void uprobes__free(struct uprobes *u)
{
	if (!u)
		return;
	hashtab__free(u->seen);
	goprobes__free(u->go);
	free(u);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* libssl.so.3, libssl.so.1.1, libssl.so: OpenSSL; libssl3.so is NSS's. */
static bool is_libssl(const char *path)
{
	return !strncmp(base_name(path), "libssl.so", 9);
}

static bool is_libclaim(const char *path)
{
	return !strncmp(base_name(path), "libclaim.so", 11);
}

bool uprobes__elf_has_symbol(const char *path, const char *name)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *elf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && !found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; data && i < n && !found; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			found = s && !strcmp(s, name);
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

/* Looks at the file once; 'exe' says it is a followed process's executable. */
static int consider(struct uprobes *u, const char *path, bool exe)
{
	struct file_id id;
	struct stat st;
	int err;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	memset(&id, 0, sizeof(id));
	id.dev = st.st_dev;
	id.ino = st.st_ino;
	if (hashtab__get(u->seen, &id, sizeof(id)))
		return 0;
	if (u->tls && is_libssl(path)) {
		hashtab__put(u->seen, &id, sizeof(id), (void *)1, NULL);
		err = observer__attach_tls(u->obs, path);
		if (err) {
			pr_warn("cannot probe TLS in %s: %s", path, strerror(-err));
			return 0;
		}
		pr_info("TLS: probing SSL_read/SSL_write in %s", path);
		u->tls_files++;
		return 1;
	}
	if (u->context && (exe || is_libclaim(path))) {
		hashtab__put(u->seen, &id, sizeof(id), (void *)1, NULL);
		if (!uprobes__elf_has_symbol(path, CONTEXT_SYMBOL))
			return 0;
		err = observer__attach_context(u->obs, path);
		if (err) {
			pr_warn("cannot probe claim_context_* in %s: %s", path, strerror(-err));
			return 0;
		}
		pr_info("explicit context: probing claim_context_enter/leave in %s", path);
		u->context_files++;
		return 1;
	}
	return 0;
}

static int scan_dir(struct uprobes *u, const char *dir)
{
	char path[512];
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!is_libssl(de->d_name) && !is_libclaim(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n += consider(u, path, false);
	}
	closedir(d);
	return n;
}

/* Libraries a process maps, seen through its root (files in containers too). */
static int scan_maps(struct uprobes *u, const char *pid)
{
	char path[64], line[1024], full[1200];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%.20s/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');

		if (!file || (!strstr(file, "libssl") && !strstr(file, "libclaim")))
			continue;
		file[strcspn(file, "\n")] = 0;
		snprintf(full, sizeof(full), "/proc/%.20s/root%s", pid, file);
		n += consider(u, full, false);
	}
	fclose(f);
	return n;
}

/* Does claimd follow the process (does it own a socket claimd follows)? */
static bool followed(const struct uprobes *u, __u32 tgid)
{
	__u32 traced = 0;

	return !bpf_map_lookup_elem(observer__traced_fd(u->obs), &tgid, &traced) && traced;
}

/*
 * A process claimd follows may be a Go program, or linked with libclaim.a:
 * look at its program.
 */
static int scan_exe(struct uprobes *u, const char *pid)
{
	char path[64];
	int n = 0;

	if (u->go)
		n += goprobes__process(u->go, strtoul(pid, NULL, 10));
	if (u->context) {
		snprintf(path, sizeof(path), "/proc/%.20s/exe", pid);
		n += consider(u, path, true);
	}
	return n;
}

int uprobes__scan(struct uprobes *u)
{
	struct dirent *de;
	size_t i;
	int n = 0;
	DIR *d;

	for (i = 0; i < sizeof(known_dirs) / sizeof(known_dirs[0]); i++)
		n += scan_dir(u, known_dirs[i]);
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		/* Probes matter only where the programs follow sockets; a process
		 * that gets its first one is looked at on the next scan. */
		if (!isdigit((unsigned char)de->d_name[0]) ||
		    !followed(u, strtoul(de->d_name, NULL, 10)))
			continue;
		n += scan_maps(u, de->d_name);
		n += scan_exe(u, de->d_name);
	}
	closedir(d);
	return n;
}

int uprobes__scan_pid(struct uprobes *u, unsigned int pid)
{
	char p[16];

	snprintf(p, sizeof(p), "%u", pid);
	return scan_maps(u, p) + (followed(u, pid) ? scan_exe(u, p) : 0);
}

int uprobes__tls_files(const struct uprobes *u)
{
	return u->tls_files;
}

int uprobes__context_files(const struct uprobes *u)
{
	return u->context_files;
}

int uprobes__go_files(const struct uprobes *u)
{
	return u->go ? goprobes__files(u->go) : 0;
}

int uprobes__go_refused(const struct uprobes *u)
{
	return u->go ? goprobes__refused(u->go) : 0;
}
