/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * TLS through OpenSSL: uprobes on SSL_read, SSL_write and their _ex forms
 * in every libssl claimd finds. The plaintext goes through the same framers
 * as plain sockets. Which socket a call is on is learned without reading
 * OpenSSL's structures: the read or write syscall the call makes on the same
 * thread names the file descriptor (on_io() calls tls_note_fd()), and the
 * SSL pointer keeps that fd for the calls served from OpenSSL's own buffer.
 * A connection whose first byte is a TLS record is marked TLS; its raw bytes
 * are never parsed as HTTP.
 */
#ifndef CLAIMD_TLS_BPF_H
#define CLAIMD_TLS_BPF_H

#include "stream.bpf.h"

/* An SSL call in progress on a thread. */
struct ssl_call {
	__u64 ssl;	 /* the SSL pointer */
	__u64 buf;	 /* user buffer */
	__u64 count_ptr; /* _ex forms: where the byte count will be written */
	__s32 fd;	 /* the socket, once known; -1 before */
	__u32 dir;	 /* DIR_RX (SSL_read) or DIR_TX (SSL_write) */
};

struct ssl_key {
	__u64 ssl;
	__u32 tgid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct ssl_call);
} ssl_calls SEC(".maps");

/* SSL pointer -> socket, learned from the syscalls of earlier calls. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ssl_key);
	__type(value, __s32);
} ssl_fds SEC(".maps");

static __always_inline void tls_mark(struct claimd_conn *c)
{
	if (c->flags & CLAIMD_CONN_TLS)
		return;
	c->flags |= CLAIMD_CONN_TLS;
	/* The plaintext starts afresh. */
	http_framer_init(&c->rx, c->rx.kind, 0);
	http_framer_init(&c->tx, c->tx.kind, 0);
	stat_inc(CLAIMD_ST_TLS_CONNS);
}

/*
 * A raw read or write on a TLS connection: if an SSL call is in progress on
 * this thread, this is its socket. The syscall always wins over the cache:
 * OpenSSL reuses a freed SSL's address for the next connection.
 */
static __always_inline void tls_note_fd(struct claimd_conn *c, struct io *io)
{
	struct ssl_call *call = bpf_map_lookup_elem(&ssl_calls, &io->tid);
	struct ssl_key k;

	if (!call || call->fd == io->key.fd)
		return;
	call->fd = io->key.fd;
	k.ssl = call->ssl;
	k.tgid = io->key.tgid;
	k.pad = 0;
	bpf_map_update_elem(&ssl_fds, &k, &io->key.fd, BPF_ANY);
}

/*
 * Does this buffer start with a TLS record header (type 20-23, version 3.x)?
 * Asked only before any HTTP was framed on the connection; no HTTP message
 * starts with such bytes.
 */
static __always_inline int tls_record(__u64 ubuf, long len)
{
	__u8 h[3] = {};

	if (len < 3 || bpf_probe_read_user(h, sizeof(h), (const void *)ubuf))
		return 0;
	return h[0] >= 20 && h[0] <= 23 && h[1] == 3 && h[2] <= 4;
}

static __always_inline int ssl_enter(void *ssl, void *buf, void *count_ptr, __u32 dir)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct ssl_key k = { .ssl = (__u64)ssl, .tgid = tgid };
	struct ssl_call call = {
		.ssl = (__u64)ssl,
		.buf = (__u64)buf,
		.count_ptr = (__u64)count_ptr,
		.fd = -1,
		.dir = dir,
	};
	__s32 *fd;

	if (!is_traced(tgid))
		return 0;
	fd = bpf_map_lookup_elem(&ssl_fds, &k);
	if (fd)
		call.fd = *fd;
	bpf_map_update_elem(&ssl_calls, &tid, &call, BPF_ANY);
	return 0;
}

/* The call returned: n plaintext bytes (n <= 0: nothing to frame). */
static __always_inline int ssl_exit(long n, int ex)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct ssl_call *call = bpf_map_lookup_elem(&ssl_calls, &tid);
	struct claimd_conn_key key;
	struct claimd_conn *c;
	struct io io;
	__u64 count = 0;

	if (!call)
		return 0;
	if (ex && n == 1) {
		/* SSL_read_ex / SSL_write_ex return 1 and write the count. */
		if (bpf_probe_read_user(&count, sizeof(count), (const void *)call->count_ptr))
			count = 0;
		n = count;
	}
	if (n <= 0 || call->fd < 0) {
		if (n > 0)
			stat_inc(CLAIMD_ST_TLS_UNBOUND);
		goto out;
	}
	key.tgid = id >> 32;
	key.fd = call->fd;
	c = bpf_map_lookup_elem(&conns, &key);
	if (!c || c->role < CLAIMD_ROLE_INBOUND)
		goto out;
	tls_mark(c);
	io.key = key;
	io.now = bpf_ktime_get_ns();
	io.tid = tid;
	io.dir = call->dir;
	feed_buf(c, &io, call->buf, n);
out:
	bpf_map_delete_elem(&ssl_calls, &tid);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(tls_read, void *ssl, void *buf, int num)
{
	return ssl_enter(ssl, buf, NULL, DIR_RX);
}

SEC("uretprobe")
int BPF_KRETPROBE(tls_read_ret, int ret)
{
	return ssl_exit(ret, 0);
}

SEC("uprobe")
int BPF_KPROBE(tls_write, void *ssl, const void *buf, int num)
{
	return ssl_enter(ssl, (void *)buf, NULL, DIR_TX);
}

SEC("uretprobe")
int BPF_KRETPROBE(tls_write_ret, int ret)
{
	return ssl_exit(ret, 0);
}

SEC("uprobe")
int BPF_KPROBE(tls_read_ex, void *ssl, void *buf, __u64 num, __u64 *readbytes)
{
	return ssl_enter(ssl, buf, readbytes, DIR_RX);
}

SEC("uretprobe")
int BPF_KRETPROBE(tls_read_ex_ret, int ret)
{
	return ssl_exit(ret, 1);
}

SEC("uprobe")
int BPF_KPROBE(tls_write_ex, void *ssl, const void *buf, __u64 num, __u64 *written)
{
	return ssl_enter(ssl, (void *)buf, written, DIR_TX);
}

SEC("uretprobe")
int BPF_KRETPROBE(tls_write_ex_ret, int ret)
{
	return ssl_exit(ret, 1);
}

#endif /* CLAIMD_TLS_BPF_H */
