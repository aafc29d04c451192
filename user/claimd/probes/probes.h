/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding the files to put uprobes in, for every runtime registered
 * (runtime.h: OpenSSL's libssl, libclaim's context functions, Go
 * executables, ...). In: the processes claimd follows (the observer's
 * traced map), their maps and executables, and the library directories
 * of the dynamic linker. Out: each file, known by device and inode,
 * offered once to each runtime that asks for it; the runtimes' counts in
 * claimd's status. At start, and again later for processes started since.
 */
#ifndef CLAIMD_PROBES_H
#define CLAIMD_PROBES_H

struct json_object;
struct observer;
struct probes;

/* The runtimes named in off (NULL-ended, or NULL) stay out. NULL on error. */
struct probes *probes__new(struct observer *obs, const char *const *off);
void probes__free(struct probes *p);
/* Looks for files not probed yet and probes them; returns how many were added. */
int probes__scan(struct probes *p);
/* The same for one process (claimd asks when it starts listening, before it
 * serves anything). */
int probes__scan_pid(struct probes *p, unsigned int pid);
/*
 * The program process pid began (an exec), read for the programs map, the
 * process not followed: what any process of it will be at its first socket.
 */
void probes__read_program(struct probes *p, unsigned int pid);
/* Each runtime's tick (runtime.h), once a second. */
void probes__tick(struct probes *p);
/* Every runtime's counts into o (p NULL: no probes, every count 0). */
void probes__status(const struct probes *p, struct json_object *o);

#endif
