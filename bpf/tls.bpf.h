/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types of the OpenSSL probes' state (tls.c has the probes, observer.bpf.c
 * the maps that hold these).
 */
#ifndef CLAIMD_TLS_BPF_H
#define CLAIMD_TLS_BPF_H

/* An SSL call in progress on a thread. */
struct ssl_call {
	__u64 ssl;	 /* the SSL pointer */
	__u64 buf;	 /* user buffer */
	__u64 count_ptr; /* _ex forms: where the byte count will be written; 0: SSL_read, SSL_write */
	__s32 fd;	 /* the socket, once known; -1 before */
	__u32 dir;	 /* DIR_RX (SSL_read) or DIR_TX (SSL_write) */
};

struct ssl_key {
	__u64 ssl;
	__u32 tgid;
	__u32 pad;
};

/* The TLS sockets a thread moved raw bytes on since its last SSL call. */
struct tls_recent {
	__u32 tgid;
	__s32 fd;
	__u32 several; /* more than one socket: no tie */
	__u32 pad;
};

#endif /* CLAIMD_TLS_BPF_H */
