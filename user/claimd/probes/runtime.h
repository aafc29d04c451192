/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a uprobe runtime gives the discovery walk (probes.h): one descriptor,
 * registered with PROBE_RUNTIME in the runtime's own folder (probes/<name>/,
 * its programs in bpf/<name>.c). In: the files the walk finds that the
 * runtime asks for (libraries by base name, followed processes'
 * executables), each once. Out: the runtime's uprobes, handed to the
 * observer (observer__keep_links), and its counts in claimd's status.
 * A new runtime needs no edit to claimd.c, the loader or the walk.
 */
#ifndef CLAIMD_PROBES_RUNTIME_H
#define CLAIMD_PROBES_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct json_object;
struct observer;

/* A file the walk found. */
struct probe_file {
	/* /proc/self/fd/N: the file held open while the runtime looks at it and attaches its
	 * probes, found through /proc/PID/root or /proc/PID/exe (the process may end meanwhile) */
	const char *path;
	__u32 tgid; /* the process it was found in; 0 for a library directory */
	bool exe;   /* the executable of a followed process */
	bool off;   /* the runtime is turned off (--no-<name>, looks_when_off): probe nothing */
};

struct probe_runtime {
	const char *name;
	/* Libraries it probes, by the start of their base name (NULL-ended), or NULL. */
	const char *const *libs;
	/* It looks at the executables of followed processes. */
	bool exe;
	/* Turned off (--no-<name>), it still looks at its files (probe_file.off),
	 * to say what a process running one is without probing it (*word). */
	bool looks_when_off;
	/* What a process running a program it probed is, in its word (CLAIMD_PROC_GO):
	 * given by the programs from the process's first socket on. */
	__u32 word;
	/* Its state for one claimd: the walk gives it this many bytes, zeroed. */
	size_t state_size;
	/* Optional: readies the state; 0, or -errno when the runtime cannot run. */
	int (*open)(void *state, struct observer *obs);
	/* Optional: frees what open took. */
	void (*close)(void *state);
	/* Looks at a file it asked for, once per file (by device and inode):
	 * true when it probed it, or knows what a process running it is without
	 * probes. *word, word to begin with: what a process running this file
	 * is, if the runtime follows it otherwise (CLAIMD_PROC_GO_SYSCALLS for
	 * a Go program framed by its syscalls, CLAIMD_PROC_MUX for one it
	 * refused). */
	bool (*probe)(void *state, struct observer *obs, const struct probe_file *f, __u32 *word);
	/* Optional: a followed process runs or maps a file it probed (word:
	 * what probe said of the file), on every walk. */
	void (*follow)(void *state, struct observer *obs, __u32 tgid, __u32 word);
	/* Optional: once a second, for probes its programs asked for since. */
	void (*tick)(void *state, struct observer *obs);
	/* Its counts into claimd's status; state NULL when it does not run
	 * (the same keys, each 0). */
	void (*status)(const void *state, struct json_object *o);
};

#define PROBE_FNS_MAX 16 /* probes__attach_fns at once */

/*
 * A uprobe at a function's entry or return, its program found by name; or,
 * func NULL, at file offset off (found in the file's code already: libbpf
 * would read its symbol table again per probe), with cookie.
 */
struct probe_fn {
	const char *prog;
	const char *func;
	bool ret;
	uint64_t off;
	uint64_t cookie;
};

/*
 * Attaches the n programs at their places in the file at path (pid -1:
 * every process that maps it, now or later) and hands the links to the
 * observer. all: each or none; else as many as the file has functions for.
 * 0, or -errno (-ENOENT: not one attached; -E2BIG: more than PROBE_FNS_MAX).
 */
int probes__attach_fns(struct observer *obs, const char *path, const struct probe_fn *fns, int n,
		       bool all);

/*
 * A library runtime's probes, attached file by file up to a bound: its
 * functions (all: each or none), at most max files, and what its log lines
 * call it (name: "cannot probe <name> in <file>"; says: "<says> in <file>").
 */
struct probe_set {
	const struct probe_fn *fns;
	int n;
	bool all;
	int max;
	const char *name;
	const char *says;
};

/*
 * Attaches set's probes to the file f (probes__attach_fns), said in the log
 * either way; *files counts the files probed. True when it probed f.
 */
bool probes__attach_set(struct observer *obs, const struct probe_file *f,
			const struct probe_set *set, int *files);

/* The counts of a runtime that reads a program's code before probing it. */
struct probes_verified {
	int files;   /* probed */
	int refused; /* their code did not show what the probes read */
};

/* Its counts into claimd's status as <name>_files and <name>_refused (v NULL: 0 each). */
void probes__verified_status(const struct probes_verified *v, const char *name,
			     struct json_object *o);

/*
 * How f is said in the log: the file's own name (f->path is the file held
 * open, /proc/self/fd/N), into buf; f->path when it has none.
 */
const char *probes__file_name(const struct probe_file *f, char *buf, size_t len);

/* A follow for a runtime whose word says all: the process marked with it, followed. */
void probes__follow_word(void *state, struct observer *obs, __u32 tgid, __u32 word);

/* Registers rt with the walk: the linker gathers every descriptor into one
 * section, which the walk reads between its __start_ and __stop_ symbols. */
#define PROBE_RUNTIME(rt)                                           \
	static const struct probe_runtime *const probe_runtime_##rt \
		__attribute__((section("claimd_runtimes"), used, aligned(sizeof(void *)))) = &rt

#endif
