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
#include <linux/types.h>

struct json_object;
struct observer;

/* A file the walk found. */
struct probe_file {
	const char *path; /* as claimd can open it: through /proc/PID/root, or /proc/PID/exe */
	__u32 tgid;	  /* the process it was found in; 0 for a library directory */
	bool exe;	  /* the executable of a followed process */
};

struct probe_runtime {
	const char *name;
	/* Libraries it probes, by the start of their base name (NULL-ended), or NULL. */
	const char *const *libs;
	/* It looks at the executables of followed processes. */
	bool exe;
	/* Its state for one claimd, or NULL (errno set) when it cannot run. */
	void *(*open)(struct observer *obs);
	void (*close)(void *state);
	/* Looks at a file it asked for, once per file (by device and inode):
	 * true when it probed it. */
	bool (*probe)(void *state, const struct probe_file *f);
	/* A followed process runs or maps a file it probed, on every walk;
	 * NULL when that asks for nothing more. */
	void (*follow)(void *state, __u32 tgid);
	/* Its counts into claimd's status; state NULL when it does not run
	 * (the same keys, each 0). */
	void (*status)(const void *state, struct json_object *o);
};

/* Registers rt with the walk: the linker gathers every descriptor into one
 * section, which the walk reads between its __start_ and __stop_ symbols. */
#define PROBE_RUNTIME(rt)                                           \
	static const struct probe_runtime *const probe_runtime_##rt \
		__attribute__((section("claimd_runtimes"), used, aligned(sizeof(void *)))) = &rt

#endif
