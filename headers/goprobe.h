/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Go probes' ABI (bpf/runtimes/go.c, user/claimd/probes/go/).
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

#define CLAIMD_GO_EXES_MAX 64 /* Go executables probed at once */
/*
 * In a probe's cookie above the executable's slot (CLAIMD_GO_SLOT_MASK):
 * it sits at its function's stack check (goexec_fn.stack_check), not at
 * its first instruction.
 */
#define CLAIMD_GO_AT_STACK_CHECK (1u << 16)
#define CLAIMD_GO_SLOT_MASK	 0xffffu
#define CLAIMD_GOROUTINES	 16384 /* goroutines with a request or an ancestor's */

/* Offsets (bytes) of the fields the probes read, per executable. */
struct go_offsets {
	__u32 req_method;	 /* net/http.Request.Method (string) */
	__u32 req_url;		 /* net/http.Request.URL (*url.URL) */
	__u32 url_host;		 /* net/url.URL.Host (string) */
	__u32 url_path;		 /* net/url.URL.Path (string) */
	__u32 resp_conn;	 /* net/http.response.conn (*conn) */
	__u32 resp_wrote_header; /* net/http.response.wroteHeader (bool) */
	__u32 resp_status;	 /* net/http.response.status (int) */
	__u32 conn_rwc;		 /* net/http.conn.rwc (net.Conn: itab, data) */
	__u32 conn_remote_addr;	 /* net/http.conn.remoteAddr (string "ip:port") */
	__u32 tls_conn;		 /* crypto/tls.Conn.conn (net.Conn) */
	__u32 netconn_fd;	 /* net.conn.fd (*netFD); *net.TCPConn points at a net.conn */
	__u32 netfd_pfd;	 /* net.netFD.pfd (internal/poll.FD) */
	__u32 pfd_sysfd;	 /* internal/poll.FD.Sysfd (int) */
	__u32 response_status;	 /* net/http.Response.StatusCode (int) */
	__u32 tcpaddr_port;	 /* net.TCPAddr.Port (int) */
	__u32 pc_conn;		 /* net/http.persistConn.conn (net.Conn) */
	__u32 pc_tls_state;	 /* net/http.persistConn.tlsState (*tls.ConnectionState) */
	__u32 g_goid;		 /* runtime.g.goid (int64) */
	/* grpc-go */
	__u32 grpc_stream_method; /* internal/transport.Stream.method (string) */
	__u32 grpc_h2s_conn;	  /* internal/transport.http2Server.conn (net.Conn) */
	__u32 grpc_h2s_remote;	  /* internal/transport.http2Server.remoteAddr (net.Addr) */
	__u32 grpc_status_s;	  /* internal/status.Status.s (*spb.Status) */
	__u32 grpc_error_e;	  /* internal/status.Error.e (*spb.Status) */
	__u32 grpc_spb_code;	  /* genproto rpc/status.Status.Code (int32) */
	__u32 grpc_cc_target;	  /* grpc.ClientConn.target (string "host:port") */
};

/*
 * A gRPC request or call in the records' HTTP status field: 200 for OK,
 * 400 + code for a code that is not a failure, 600 + code for one that is
 * (claimd --grpc-fail-codes; a failure at any --fail-status up to 600).
 */
#define CLAIMD_GRPC_STATUS_OK	  200
#define CLAIMD_GRPC_STATUS_OTHER  400
#define CLAIMD_GRPC_STATUS_FAILED 600
#define CLAIMD_GRPC_CODES	  17 /* OK (0) .. UNAUTHENTICATED (16) */
/* Default failing codes: UNKNOWN, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED,
 * INTERNAL, UNAVAILABLE, DATA_LOSS. */
#define CLAIMD_GRPC_FAIL_DEFAULT \
	((1u << 2) | (1u << 4) | (1u << 8) | (1u << 13) | (1u << 14) | (1u << 15))

/* A goroutine of a process: g's address, from R14 (register ABI). */
struct go_key {
	__u32 tgid;
	__u32 pad;
	__u64 g;
};

#endif /* CLAIMD_GOPROBE_H */
