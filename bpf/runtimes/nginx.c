// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A runtime of observer.bpf.c (bpf/runtimes/). nginx (CLAIMD_PROC_NGINX),
 * one probe per call: its requests are framed from their syscalls' bytes
 * as any process's are, held by their connections from the first (keyed,
 * bpf/keyed.c), and a call is tied to its request where nginx begins
 * writing it upstream.
 *
 * nginx's upstream module (ngx_http_upstream.c) writes a request to its
 * upstream connection through ngx_chain_writer(ctx, in), ctx being the
 * upstream's writer (ngx_chain_writer_ctx_t), whose connection is the
 * upstream connection; that connection's data is the request
 * (ngx_http_request_t, since ngx_http_upstream_connect), whose connection
 * is the downstream one. nginx_chain_writer reads that chain, checks the
 * request's signature ("HTTP"), and notes on the upstream socket whose
 * request its next head is (handoffs, handoff.bpf.h): the request its
 * downstream connection holds now. The syscall path takes the note when
 * the head is written (egress_log_noted), for a new connection (written
 * once connected) and for a kept-alive one alike, and for a request tried
 * again on another server (proxy_next_upstream): its second call is noted
 * by the same request.
 *
 * claimd attaches it only to an nginx whose code shows these offsets
 * (user/claimd/probes/nginx/ngxcode.c); the signature checks the one
 * claimd cannot read there (the connection's data), at every hit.
 */

#define NGX_HTTP_SIGNATURE     0x50545448 /* "HTTP", ngx_http_request_t.signature */
#define NGX_WRITER_CONNECTION  16	  /* ngx_chain_writer_ctx_t.connection */
#define NGX_CONNECTION_DATA    0	  /* ngx_connection_t.data */
#define NGX_CONNECTION_FD      24	  /* ngx_connection_t.fd */
#define NGX_REQUEST_CONNECTION 8	  /* ngx_http_request_t.connection */

/* The socket of ngx_connection_t c, or -1. */
static __always_inline __s32 ngx_conn_fd(__u64 c)
{
	__s32 fd = -1;

	if (!c || bpf_probe_read_user(&fd, sizeof(fd), (const void *)(c + NGX_CONNECTION_FD)))
		return -1;
	return fd;
}

/* ngx_chain_writer(void *data, ngx_chain_t *in): data the upstream's writer. */
SEC("uprobe")
int nginx_chain_writer(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct claimd_conn_key out = { .tgid = tgid }, in = { .tgid = tgid };
	struct handoff h = {};
	__u64 up, r;
	__u32 sig = 0;

	if (!(proc_flags(tgid) & PROC_NGINX))
		return 0;
	up = user_ptr(PT_REGS_PARM1(ctx) + NGX_WRITER_CONNECTION);
	r = user_ptr(up ? up + NGX_CONNECTION_DATA : 0);
	out.fd = ngx_conn_fd(up);
	if (!r || out.fd < 0 || bpf_probe_read_user(&sig, sizeof(sig), (const void *)r) ||
	    sig != NGX_HTTP_SIGNATURE) {
		stat_inc(CLAIMD_ST_NGINX_UNREAD);
		return 0;
	}
	in.fd = ngx_conn_fd(user_ptr(r ? r + NGX_REQUEST_CONNECTION : 0));
	if (in.fd < 0 || !handoff_of(&in, 0, &h)) {
		/* Its downstream connection holds no request claimd follows. */
		stat_inc(CLAIMD_ST_NGINX_NO_REQUEST);
		bpf_map_delete_elem(&handoffs, &out);
		return 0;
	}
	bpf_map_update_elem(&handoffs, &out, &h, BPF_ANY);
	stat_inc(CLAIMD_ST_NGINX_NOTED);
	return 0;
}
