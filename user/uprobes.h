/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding the OpenSSL libraries processes use, so their SSL_read/SSL_write
 * can be probed: every file named libssl*.so* that a process maps, and the
 * ones the dynamic linker knows; each file once (by device and inode), found
 * at start and again when processes start later.
 */
#ifndef CLAIMD_TLS_H
#define CLAIMD_TLS_H

struct observer;
struct tls_scan;

struct tls_scan *tls__new(struct observer *obs);
void tls__free(struct tls_scan *t);
/* Looks for libssl files not probed yet and probes them; returns how many were
 * added, or -errno. */
int tls__scan(struct tls_scan *t);

#endif
