// SPDX-License-Identifier: GPL-2.0
/*
 * pool_proxy's client side: the socket in the clear, or TLS terminated by
 * OpenSSL fed through memory BIOs, the way event-driven servers and
 * proxies drive it. The proxy itself moves the ciphertext: read(2) from
 * the socket into the read BIO before SSL_read, and after every SSL call
 * what the write BIO holds out with write(2). No SSL_* call here makes a
 * system call, so an observer must tie each to its socket some other way.
 */
#include <errno.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "pool_proxy.h"

static SSL_CTX *ctx;

int tls_init(const char *cert, const char *key)
{
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		ERR_print_errors_fp(stderr);
		return -1;
	}
	return 0;
}

int client_open(struct client *c, int fd, bool tls)
{
	BIO *rbio, *wbio;
	SSL *ssl;

	c->fd = fd;
	c->ssl = NULL;
	if (!tls)
		return 0;
	ssl = SSL_new(ctx);
	rbio = BIO_new(BIO_s_mem());
	wbio = BIO_new(BIO_s_mem());
	if (!ssl || !rbio || !wbio) {
		SSL_free(ssl);
		BIO_free(rbio);
		BIO_free(wbio);
		return -1;
	}
	SSL_set_bio(ssl, rbio, wbio); /* the SSL owns both now */
	SSL_set_accept_state(ssl);
	c->ssl = ssl;
	return 0;
}

void client_close(struct client *c)
{
	SSL_free(c->ssl);
	c->ssl = NULL;
	close(c->fd);
	c->fd = -1;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

/* The ciphertext OpenSSL produced, out on the socket. */
static int flush(struct client *c)
{
	BIO *wbio = SSL_get_wbio(c->ssl);
	char buf[16384];
	int n;

	while ((n = BIO_read(wbio, buf, sizeof(buf))) > 0)
		if (write_all(c->fd, buf, n))
			return -1;
	return 0;
}

static ssize_t tls_read(struct client *c, void *buf, size_t len)
{
	char cipher[16384];

	for (;;) {
		int n = SSL_read(c->ssl, buf, len), err = SSL_get_error(c->ssl, n);
		ssize_t got;

		/* The handshake's answers and session tickets go out first. */
		if (flush(c))
			return -1;
		if (n > 0)
			return n;
		if (err == SSL_ERROR_ZERO_RETURN)
			return 0;
		if (err != SSL_ERROR_WANT_READ)
			return -1;
		got = read(c->fd, cipher, sizeof(cipher));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got;
		if (BIO_write(SSL_get_rbio(c->ssl), cipher, got) != got)
			return -1;
	}
}

ssize_t client_read(struct client *c, void *buf, size_t len)
{
	ssize_t n;

	if (c->ssl)
		return tls_read(c, buf, len);
	do
		n = read(c->fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

int client_write(struct client *c, const void *buf, size_t len)
{
	if (!c->ssl)
		return write_all(c->fd, buf, len);
	/* A memory BIO takes everything: one SSL_write, then the socket. */
	if (SSL_write(c->ssl, buf, len) != (int)len)
		return -1;
	return flush(c);
}
