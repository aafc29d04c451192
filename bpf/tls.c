// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c. TLS through OpenSSL: uprobes on SSL_read,
 * SSL_write and their _ex forms in every libssl claimd finds. The plaintext goes through the same framers
 * as plain sockets. Which socket a call is on is learned without reading
 * OpenSSL's structures, in this order:
 *  1. a read or write syscall the call makes on the same thread (a socket
 *     BIO, or a custom BIO over the service's own socket I/O) names the fd
 *     (on_io() calls tls_note_fd());
 *  2. else the fd tied to the same SSL pointer before, if that socket is
 *     still followed and still tied to it (a closed socket forgets its SSL:
 *     OpenSSL reuses a freed SSL's address for the next connection);
 *  3. else, for a service that feeds OpenSSL through memory BIOs (it reads
 *     ciphertext itself, then calls SSL_read; SSL_write, then writes), the
 *     one TLS socket the thread moved raw bytes on since its last SSL call.
 *     Two or more such sockets: no tie.
 * SSL_do_handshake is followed for the tie alone (no plaintext).
 * A call left untied is counted; the request its thread serves becomes
 * unknown (a write's answer is lost; a read's request is unseen). A
 * connection whose first byte is a TLS record is marked TLS; its raw bytes
 * are never parsed as HTTP.
 *
 */

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
	struct tls_recent *r, fresh = { .tgid = io->key.tgid, .fd = io->key.fd };
	struct ssl_key k;

	if (!call) {
		/* Outside any SSL call: a memory-BIO service moving ciphertext. */
		r = bpf_map_lookup_elem(&tls_recent, &io->tid);
		if (!r)
			bpf_map_update_elem(&tls_recent, &io->tid, &fresh, BPF_ANY);
		else if (r->tgid != io->key.tgid)
			*r = fresh;
		else if (r->fd != io->key.fd)
			r->several = 1;
		return;
	}
	c->ssl = call->ssl;
	if (call->fd == io->key.fd)
		return;
	call->fd = io->key.fd;
	k.ssl = call->ssl;
	k.tgid = io->key.tgid;
	k.pad = 0;
	bpf_map_update_elem(&ssl_fds, &k, &io->key.fd, BPF_ANY);
}

/*
 * Ciphertext moved on outbound connection c, in a process none of whose
 * OpenSSL calls claimd's probes saw (PROC_SSL): its TLS library is one
 * claimd does not probe, and the calls it carries are not seen. The
 * request io's thread serves talked to a dependency claimd cannot read
 * (CLAIMD_IN_OPAQUE): unknown if it fails with no call seen to explain it,
 * never `claimed` for a failure it may have passed up. Moved by a thread
 * serving none (a JVM's HttpClient does its I/O on threads of its own),
 * it is a call outside requests: every request of the process open
 * meanwhile is unknown (untied-call). Go's probes see such calls
 * themselves (PROC_GO_SYSCALLS: bpf/runtimes/go.c). Counted once a
 * connection.
 */
static __always_inline void tls_unseen(struct claimd_conn *c, struct io *io, __u32 pflags)
{
	if (c->role != CLAIMD_ROLE_OUTBOUND || (pflags & (PROC_SSL | PROC_GO_SYSCALLS)))
		return;
	if (!(c->flags & CLAIMD_CONN_TLS_UNSEEN)) {
		c->flags |= CLAIMD_CONN_TLS_UNSEEN;
		stat_inc(CLAIMD_ST_TLS_UNSEEN);
	}
	if (ingress_taint(io, CLAIMD_IN_OPAQUE))
		outside_call_untied(io->key.tgid);
}

/*
 * A socket that goes forgets the SSL tied to it, unless that SSL is tied to
 * another socket by now: OpenSSL reuses a freed SSL's address, and a server
 * that closes a connection only after freeing its SSL (Apache's lingering
 * close) may have tied the address to the next connection in between.
 */
static __always_inline void tls_forget(struct claimd_conn *c, const struct claimd_conn_key *key)
{
	struct ssl_key k = { .ssl = c->ssl, .tgid = key->tgid };
	__s32 *fd;

	if (!c->ssl)
		return;
	fd = bpf_map_lookup_elem(&ssl_fds, &k);
	if (fd && *fd == key->fd)
		bpf_map_delete_elem(&ssl_fds, &k);
}

/*
 * An SSL call with no socket syscall of its own: the socket cached for its
 * SSL pointer if that socket still says so, else the one TLS socket its
 * thread moved bytes on since its last SSL call. -1: no tie.
 */
static __always_inline __s32 tls_tie(struct ssl_call *call, __u32 tgid, __u32 tid)
{
	struct ssl_key k = { .ssl = call->ssl, .tgid = tgid };
	struct claimd_conn_key key = { .tgid = tgid };
	struct tls_recent *r;
	struct claimd_conn *c;
	__s32 *fd;

	fd = bpf_map_lookup_elem(&ssl_fds, &k);
	if (fd) {
		key.fd = *fd;
		c = conn_find(&key);
		if (c && c->ssl == call->ssl)
			return key.fd;
	}
	r = bpf_map_lookup_elem(&tls_recent, &tid);
	if (!r || r->tgid != tgid || r->several)
		return -1;
	key.fd = r->fd;
	c = conn_find(&key);
	if (!c || !(c->flags & CLAIMD_CONN_TLS))
		return -1;
	c->ssl = call->ssl;
	bpf_map_update_elem(&ssl_fds, &k, &key.fd, BPF_ANY);
	stat_inc(CLAIMD_ST_TLS_TIED_BY_READ);
	return key.fd;
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
	struct ssl_call call = {
		.ssl = (__u64)ssl,
		.buf = (__u64)buf,
		.count_ptr = (__u64)count_ptr,
		.fd = -1,
		.dir = dir,
	};

	/* Tied by a syscall inside the call, else when it returns (tls_tie). */
	if (!is_traced(tgid))
		return 0;
	/* Its TLS is deciphered: before any ciphertext, which a memory BIO's service writes after. */
	proc_flag_set(tgid, PROC_SSL);
	bpf_map_update_elem(&ssl_calls, &tid, &call, BPF_ANY);
	return 0;
}

/* An SSL call of thread tid ended: the next starts with no ciphertext seen. */
static __always_inline void ssl_call_done(__u32 tid)
{
	bpf_map_delete_elem(&ssl_calls, &tid);
	bpf_map_delete_elem(&tls_recent, &tid);
}

/*
 * The call returned: n plaintext bytes (n <= 0: nothing to frame). One
 * program for the four calls that move plaintext: their entry said which
 * (its direction, and for an _ex form where the count goes).
 */
static __always_inline int ssl_exit(long n)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct ssl_call *call = bpf_map_lookup_elem(&ssl_calls, &tid);
	struct claimd_conn_key key;
	struct claimd_conn *c;
	struct scan_buf *buf;
	struct io io;
	__u64 count = 0;

	if (!call)
		return 0;
	if (call->count_ptr && n == 1) {
		/* SSL_read_ex / SSL_write_ex return 1 and write the count. */
		if (bpf_probe_read_user(&count, sizeof(count), (const void *)call->count_ptr))
			count = 0;
		n = count;
	}
	if (n <= 0)
		goto out;
	key.tgid = id >> 32;
	key.fd = call->fd >= 0 ? call->fd : tls_tie(call, key.tgid, tid);
	io.key = key;
	io.now = 0; /* read where it is needed (io_now) */
	io.sk = 0;  /* TLS: its plaintext's writes are not the socket's */
	io.tid = tid;
	io.dir = call->dir;
	io.tx_from = 0;
	if (key.fd < 0) {
		stat_inc(CLAIMD_ST_TLS_UNBOUND);
		/* A response that cannot be framed, or a request that was not seen. */
		if (call->dir == DIR_TX)
			ingress_lose_current(&io);
		else
			ingress_taint(&io, CLAIMD_IN_UNTIED);
		goto out;
	}
	c = conn_find(&key);
	if (!c || c->role < CLAIMD_ROLE_INBOUND)
		goto out;
	tls_mark(c);
	buf = bpf_task_storage_get(&tls_scratch, bpf_get_current_task_btf(), 0,
				   BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (buf)
		feed_buf(c, &io, buf, call->buf, n);
	else
		feed_unframed(c, &io, n); /* no memory for a window: body skipped, else lost */
	conn_taint_io(c, &io);
out:
	ssl_call_done(tid);
	return 0;
}

/*
 * The return of SSL_read, SSL_write, SSL_read_ex and SSL_write_ex: one
 * program at four places, verified once.
 */
SEC("uretprobe")
int BPF_KRETPROBE(tls_call_ret, int ret)
{
	return ssl_exit(ret);
}

SEC("uprobe")
int BPF_KPROBE(tls_read, void *ssl, void *buf, int num)
{
	return ssl_enter(ssl, buf, NULL, DIR_RX);
}

SEC("uprobe")
int BPF_KPROBE(tls_write, void *ssl, const void *buf, int num)
{
	return ssl_enter(ssl, (void *)buf, NULL, DIR_TX);
}

/*
 * SSL_do_handshake (SSL_accept and SSL_connect call it) moves no
 * plaintext, but it ties its SSL pointer to a socket by the same rules as
 * a read or a write. A server whose handshake read the client's first
 * request record too (a client sends it right behind its Finished)
 * decrypts it in an SSL_read that makes no syscall of its own (mod_ssl's
 * BIOs over Apache's buffered input): that SSL_read finds the tie made
 * here.
 */
SEC("uprobe")
int BPF_KPROBE(tls_handshake, void *ssl)
{
	return ssl_enter(ssl, NULL, NULL, DIR_RX);
}

SEC("uretprobe")
int BPF_KRETPROBE(tls_handshake_ret, int ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct ssl_call *call = bpf_map_lookup_elem(&ssl_calls, &tid);

	if (!call)
		return 0;
	/* No syscall of its own: a memory BIO's ciphertext, moved before. */
	if (call->fd < 0)
		tls_tie(call, id >> 32, tid);
	ssl_call_done(tid);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(tls_read_ex, void *ssl, void *buf, __u64 num, __u64 *readbytes)
{
	return ssl_enter(ssl, buf, readbytes, DIR_RX);
}

SEC("uprobe")
int BPF_KPROBE(tls_write_ex, void *ssl, const void *buf, __u64 num, __u64 *written)
{
	return ssl_enter(ssl, (void *)buf, written, DIR_TX);
}
