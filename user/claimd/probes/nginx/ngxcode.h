/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An nginx program read: is it nginx, and does its code show each offset
 * nginx's probe reads (bpf/runtimes/nginx.c) where claimd expects it? Each
 * is checked in a function of the program's own that reads it at its
 * start, straight from its first argument: a program built otherwise (a
 * changed layout, another compiler's code) does not show it, and is
 * refused.
 */
#ifndef CLAIMD_NGXCODE_H
#define CLAIMD_NGXCODE_H

#include <stdbool.h>

/* The function nginx's probe is attached to. */
#define NGXCODE_PROBED_FN "ngx_chain_writer"

struct ngxcode {
	char version[32];	/* "nginx/1.22.1" as its code says it, or "" */
	const char *unverified; /* the first offset its code does not show, or NULL */
	const char *where;	/* ... the function it was sought in */
};

/*
 * Reads the program at path into *n: 0; -1 with errno ENOEXEC when it is
 * no nginx (no NGXCODE_PROBED_FN among its functions), else errno.
 */
int ngxcode__open(const char *path, struct ngxcode *n);

#endif
