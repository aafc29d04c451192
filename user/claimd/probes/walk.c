// SPDX-License-Identifier: GPL-2.0
/*
 * The one walk that finds files for the uprobe runtimes (runtime.h), and
 * the one check of a file's identity (device and inode): see probes.h.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hashtab.h"
#include "log.h"
#include "kernel/observer_api.h"
#include "probes/probes.h"
#include "probes/runtime.h"

/*
 * What the walk keeps of a file (struct file_id -> uintptr_t): two bits a
 * runtime in the low half (looked at, probed), and in the high half what a
 * process running it is (the probing runtimes' words).
 */
#define RUNTIMES_MAX	16
#define FILE_WORD_SHIFT 32
_Static_assert(sizeof(uintptr_t) * 8 >= FILE_WORD_SHIFT + 32, "a file's word fits its entry");

/* Where the dynamic linker finds libraries on Debian, besides what processes map. */
static const char *const known_dirs[] = {
	"/usr/lib/x86_64-linux-gnu",
	"/lib/x86_64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu",
	"/usr/lib64",
	"/usr/lib",
	"/usr/local/lib",
};

/* The descriptors PROBE_RUNTIME put in the section; weak: a build with none. */
extern const struct probe_runtime *const __start_claimd_runtimes[] __attribute__((weak));
extern const struct probe_runtime *const __stop_claimd_runtimes[] __attribute__((weak));

struct file_id {
	dev_t dev;
	ino_t ino;
};

struct probes {
	struct observer *obs;
	struct hashtab *seen; /* struct file_id -> (uintptr_t) looked-at and probed bits, word */
	unsigned int programs_full; /* programs not kept: the map was full */
	int n;
	struct {
		const struct probe_runtime *rt;
		void *state;
		bool off; /* turned off (--no-<name>): it looks (looks_when_off), never probes */
	} run[RUNTIMES_MAX];
};

static bool named(const char *name, const char *const *list)
{
	for (; list && *list; list++)
		if (!strcmp(name, *list))
			return true;
	return false;
}

struct probes *probes__new(struct observer *obs, const char *const *off)
{
	const struct probe_runtime *const *rt;
	struct probes *p = calloc(1, sizeof(*p));
	void *state;
	int err;

	if (!p)
		return NULL;
	p->obs = obs;
	p->seen = hashtab__new();
	if (!p->seen)
		goto fail;
	for (rt = __start_claimd_runtimes; rt < __stop_claimd_runtimes; rt++) {
		bool is_off = named((*rt)->name, off);

		if (is_off && !(*rt)->looks_when_off)
			continue;
		if (p->n == RUNTIMES_MAX) {
			pr_warn("%s: more than %d uprobe runtimes; not probed", (*rt)->name,
				RUNTIMES_MAX);
			continue;
		}
		state = calloc(1, (*rt)->state_size ?: 1);
		if (!state)
			goto fail;
		err = (*rt)->open ? (*rt)->open(state, obs) : 0;
		if (err) {
			free(state);
			errno = -err;
			goto fail;
		}
		p->run[p->n].rt = *rt;
		p->run[p->n].off = is_off;
		p->run[p->n++].state = state;
	}
	return p;
fail:
	probes__free(p);
	return NULL;
}

void probes__free(struct probes *p)
{
	if (!p)
		return;
	while (p->n--) {
		if (p->run[p->n].rt->close)
			p->run[p->n].rt->close(p->run[p->n].state);
		free(p->run[p->n].state);
	}
	hashtab__free(p->seen);
	free(p);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* Does the runtime ask for this file? Libraries by the start of their base
 * name (libssl.so.3, libssl.so.1.1, libssl.so: OpenSSL; libssl3.so is NSS's). */
static bool wants(const struct probe_runtime *rt, const char *path, bool exe)
{
	const char *base = base_name(path);
	const char *const *l;

	if (exe)
		return rt->exe;
	for (l = rt->libs; l && *l; l++)
		if (!strncmp(base, *l, strlen(*l)))
			return true;
	return false;
}

static bool anyone_wants(const struct probes *p, const char *path)
{
	int i;

	for (i = 0; i < p->n; i++)
		if (wants(p->run[i].rt, path, false))
			return true;
	return false;
}

/*
 * The program of process tgid (st; 0: a process not followed) is read:
 * what a process running it is (word) goes into the programs map, for the
 * programs to give any process that runs it from its first socket on, and
 * into tgid's word, no longer unread.
 */
static void program_read(struct probes *p, const struct stat *st, __u32 tgid, __u32 word)
{
	struct claimd_program_id id = {
		.dev = (__u64)major(st->st_dev) << 20 | minor(st->st_dev),
		.ino = st->st_ino,
	};

	if (bpf_map_update_elem(observer__programs_fd(p->obs), &id, &word, BPF_ANY) &&
	    !p->programs_full++)
		pr_warn("more than %d programs read: the processes of the next ones are each "
			"unread until claimd reads them",
			CLAIMD_PROGRAMS_MAX);
	if (tgid)
		observer__proc_word(p->obs, tgid, word, CLAIMD_PROC_UNREAD);
}

/*
 * The file a runtime is to look at, held open (*fd) while it does, as
 * /proc/self/fd/N in held: a process whose /proc/PID/exe or root the path
 * goes through may end while its program is read (tens of milliseconds
 * for node), and the probes are attached by path after that.
 * Returns false when the file is gone (the process ended before claimd
 * looked): nobody looked, so it is looked at again the next time it is seen.
 */
static bool hold(const char *path, const struct stat *st, int *fd, char *held, size_t len)
{
	struct stat now;

	if (*fd >= 0)
		return true;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, &now) || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return false;
	}
	snprintf(held, len, "/proc/self/fd/%d", *fd);
	return true;
}

/*
 * Offers the file to each runtime that asks for it, once per file; a
 * process (tgid) found to map or run a file a runtime probed is told to it.
 * A followed process's program (exe) is read when it returns.
 */
static int consider(struct probes *p, const char *path, __u32 tgid, bool exe)
{
	char held[32];
	struct probe_file f = { .path = held, .tgid = tgid, .exe = exe };
	struct file_id id;
	struct stat st;
	uintptr_t bits, was;
	__u32 word = 0;
	int i, n = 0, fd = -1;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	memset(&id, 0, sizeof(id));
	id.dev = st.st_dev;
	id.ino = st.st_ino;
	bits = was = (uintptr_t)hashtab__get(p->seen, &id, sizeof(id));
	for (i = 0; i < p->n; i++) {
		const struct probe_runtime *rt = p->run[i].rt;
		uintptr_t looked = (uintptr_t)1 << (2 * i), probed = looked << 1;

		if (!wants(rt, path, exe))
			continue;
		if (!(bits & looked)) {
			__u32 its = rt->word;

			/* The first look holds it: nothing has changed yet if it cannot. */
			if (!hold(path, &st, &fd, held, sizeof(held)))
				return n;
			bits |= looked;
			f.off = p->run[i].off;
			if (rt->probe(p->run[i].state, p->obs, &f, &its)) {
				bits |= probed | (uintptr_t)its << FILE_WORD_SHIFT;
				n++;
			}
		}
		if (!(bits & probed))
			continue;
		word = bits >> FILE_WORD_SHIFT;
		if (tgid && rt->follow)
			rt->follow(p->run[i].state, p->obs, tgid, word);
	}
	if (fd >= 0)
		close(fd);
	if (bits != was)
		hashtab__put(p->seen, &id, sizeof(id), (void *)bits, NULL);
	if (exe)
		program_read(p, &st, tgid, word);
	return n;
}

static int scan_dir(struct probes *p, const char *dir)
{
	char path[512];
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!anyone_wants(p, de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n += consider(p, path, 0, false);
	}
	closedir(d);
	return n;
}

/* Libraries a process maps, seen through its root (files in containers too). */
static int scan_maps(struct probes *p, const char *pid)
{
	char path[64], line[1024], full[1200];
	__u32 tgid = strtoul(pid, NULL, 10);
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%.20s/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');

		if (!file)
			continue;
		file[strcspn(file, "\n")] = 0;
		if (!anyone_wants(p, file))
			continue;
		snprintf(full, sizeof(full), "/proc/%.20s/root%s", pid, file);
		n += consider(p, full, tgid, false);
	}
	fclose(f);
	return n;
}

/* Does claimd follow the process (does it own a socket claimd follows)? */
static bool followed(const struct probes *p, __u32 tgid)
{
	__u32 traced = 0;

	return !bpf_map_lookup_elem(observer__traced_fd(p->obs), &tgid, &traced) && traced;
}

/* A process claimd follows may be a Go program, or linked with libclaim.a:
 * its program is offered too. */
static int scan_exe(struct probes *p, const char *pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%.20s/exe", pid);
	return consider(p, path, strtoul(pid, NULL, 10), true);
}

int probes__scan(struct probes *p)
{
	struct dirent *de;
	size_t i;
	int n = 0;
	DIR *d;

	for (i = 0; i < sizeof(known_dirs) / sizeof(known_dirs[0]); i++)
		n += scan_dir(p, known_dirs[i]);
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		/* Probes matter only where the programs follow sockets; a process
		 * that gets its first one is looked at on the next scan. */
		if (!isdigit((unsigned char)de->d_name[0]) ||
		    !followed(p, strtoul(de->d_name, NULL, 10)))
			continue;
		n += scan_maps(p, de->d_name);
		n += scan_exe(p, de->d_name);
	}
	closedir(d);
	return n;
}

int probes__scan_pid(struct probes *p, unsigned int pid)
{
	char s[16];

	snprintf(s, sizeof(s), "%u", pid);
	return scan_maps(p, s) + (followed(p, pid) ? scan_exe(p, s) : 0);
}

void probes__read_program(struct probes *p, unsigned int pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	consider(p, path, 0, true);
}

int probes__attach_fns(struct observer *obs, const char *path, const struct probe_fn *fns, int n,
		       bool all)
{
	struct bpf_object *obj = observer__object(obs);
	struct bpf_link *links[PROBE_FNS_MAX];
	int i, attached = 0, err = -ENOENT;

	if (n > PROBE_FNS_MAX)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = fns[i].func, .retprobe = fns[i].ret,
			    .bpf_cookie = fns[i].cookie);
		struct bpf_program *prog = bpf_object__find_program_by_name(obj, fns[i].prog);

		links[attached] = prog ? bpf_program__attach_uprobe_opts(prog, -1, path,
									 (size_t)fns[i].off, &opts)
				       : NULL;
		if (links[attached]) {
			attached++;
			continue;
		}
		err = prog ? -errno : -ENOENT;
		if (all)
			break;
	}
	if (attached && (!all || attached == n))
		return observer__keep_links(obs, links, attached);
	while (attached--)
		bpf_link__destroy(links[attached]);
	return err;
}

bool probes__attach_set(struct observer *obs, const struct probe_file *f,
			const struct probe_set *set, int *files)
{
	int err = *files >= set->max ? -ENOSPC
				     : probes__attach_fns(obs, f->path, set->fns, set->n, set->all);
	char file[256];

	if (err) {
		pr_warn("cannot probe %s in %s: %s", set->name,
			probes__file_name(f, file, sizeof(file)), strerror(-err));
		return false;
	}
	pr_info("%s in %s", set->says, probes__file_name(f, file, sizeof(file)));
	(*files)++;
	return true;
}

void probes__tick(struct probes *p)
{
	int i;

	for (i = 0; p && i < p->n; i++)
		if (p->run[i].rt->tick)
			p->run[i].rt->tick(p->run[i].state, p->obs);
}

void probes__status(const struct probes *p, struct json_object *o)
{
	const struct probe_runtime *const *rt;
	int i;

	for (rt = __start_claimd_runtimes; rt < __stop_claimd_runtimes; rt++) {
		const void *state = NULL;

		for (i = 0; p && i < p->n; i++)
			if (p->run[i].rt == *rt)
				state = p->run[i].state;
		(*rt)->status(state, o);
	}
}

void probes__verified_status(const struct probes_verified *v, const char *name,
			     struct json_object *o)
{
	char key[64];

	snprintf(key, sizeof(key), "%s_files", name);
	json_object_object_add(o, key, json_object_new_int(v ? v->files : 0));
	snprintf(key, sizeof(key), "%s_refused", name);
	json_object_object_add(o, key, json_object_new_int(v ? v->refused : 0));
}

void probes__follow_word(void *state, struct observer *obs, __u32 tgid, __u32 word)
{
	(void)state;
	observer__proc_word(obs, tgid, word | CLAIMD_PROC_TRACED, 0);
}

const char *probes__file_name(const struct probe_file *f, char *buf, size_t len)
{
	ssize_t n = len ? readlink(f->path, buf, len - 1) : -1;

	if (n <= 0)
		return f->path;
	buf[n] = 0;
	return buf;
}
