/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding the files to put uprobes in: OpenSSL (every libssl.so* a process
 * maps, or the dynamic linker knows) for TLS, libclaim's context
 * functions (libclaim.so*, or the executable of a followed process linked
 * with libclaim.a), and the executables of followed Go processes
 * (goprobes.h). Each file is looked at once (by device and inode), at
 * start and again later for processes started since.
 */
#ifndef CLAIMD_UPROBES_H
#define CLAIMD_UPROBES_H

#include <stdbool.h>

struct observer;
struct uprobes;

struct uprobes *uprobes__new(struct observer *obs, bool tls, bool context, bool go);
void uprobes__free(struct uprobes *u);
/* Looks for files not probed yet and probes them; returns how many were added. */
int uprobes__scan(struct uprobes *u);
/* The same for one process (claimd asks when it starts listening, before it
 * serves anything). */
int uprobes__scan_pid(struct uprobes *u, unsigned int pid);
/* Files probed so far. */
int uprobes__tls_files(const struct uprobes *u);
int uprobes__context_files(const struct uprobes *u);
/* Go executables probed, and found but left to the syscall path. */
int uprobes__go_files(const struct uprobes *u);
int uprobes__go_refused(const struct uprobes *u);

/* Does the ELF file at path define the function 'name'? (Used for libclaim.) */
bool uprobes__elf_has_symbol(const char *path, const char *name);

#endif
