/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Go probes' ABI (bpf/goprobe.c, user/claimd/goexec.c, goprobes.c).
 * claimd finds a Go executable's functions and the offsets of the struct
 * fields the probes read, writes the offsets into slot i of the go_exes
 * map and attaches the probes with i as their BPF cookie: one program for
 * every executable, each reading with its own layout.
 */
#ifndef CLAIMD_GOPROBE_H
#define CLAIMD_GOPROBE_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define CLAIMD_GO_EXES_MAX 64	 /* Go executables probed at once */
#define CLAIMD_GOROUTINES  16384 /* goroutines with a request or an ancestor's */

/* Offsets (bytes) of the fields the probes read, per executable. */
struct go_offsets {
	__u32 req_method;      /* net/http.Request.Method (string) */
	__u32 req_url;	       /* net/http.Request.URL (*url.URL) */
	__u32 url_host;	       /* net/url.URL.Host (string) */
	__u32 url_path;	       /* net/url.URL.Path (string) */
	__u32 resp_conn;       /* net/http.response.conn (*conn) */
	__u32 conn_rwc;	       /* net/http.conn.rwc (net.Conn: itab, data) */
	__u32 netconn_fd;      /* net.conn.fd (*netFD); *net.TCPConn points at a net.conn */
	__u32 netfd_pfd;       /* net.netFD.pfd (internal/poll.FD) */
	__u32 pfd_sysfd;       /* internal/poll.FD.Sysfd (int) */
	__u32 response_status; /* net/http.Response.StatusCode (int) */
};

/* A goroutine of a process: g's address, from R14 (register ABI). */
struct go_key {
	__u32 tgid;
	__u32 pad;
	__u64 g;
};

#endif /* CLAIMD_GOPROBE_H */
