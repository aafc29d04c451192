// SPDX-License-Identifier: GPL-2.0
/* The metrics and map HTTP server; see metrics_http.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "log.h"
#include "addr.h"
#include "expose/metrics_http.h"
#include "expose/webmap.h"

#define CONN_LIMIT   64
#define CONN_TIMEOUT 10 /* seconds */
#define RENDER_WAIT  2	/* seconds a request waits for a fresh snapshot */

struct metrics_http {
	struct MHD_Daemon *mhd;
	pthread_mutex_t lock;
	pthread_cond_t rendered;
	char *metrics, *graph; /* the snapshot, under lock */
	size_t metrics_len, graph_len;
	bool stale[2];	/* [graph?]: what it shows has changed since */
	bool wanted[2]; /* [graph?]: a request waits for it */
	int wake_fd;	/* eventfd: a request wants a fresh one */
	char url[96];
};

int metrics_http__parse_addr(const char *addr, struct sockaddr_storage *ss, socklen_t *len,
			     char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *res = NULL;
	char host[256], port[8];
	__u16 p;
	int rc;

	if (addr__split(addr, host, sizeof(host), &p)) {
		if (errno == ENAMETOOLONG)
			snprintf(err, errlen, "host name too long");
		else
			snprintf(err, errlen, "'%s' is not HOST:PORT ([V6]:PORT for IPv6)", addr);
		return -1;
	}
	snprintf(port, sizeof(port), "%u", p);
	/* No host would bind every interface: that must be asked for by name. */
	if (!*host) {
		snprintf(err, errlen,
			 "'%s' names no host: give 127.0.0.1:%s for this host only, or 0.0.0.0:%s "
			 "or [::]:%s for every interface",
			 addr, port, port, port);
		return -1;
	}
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "%s: %s", addr, gai_strerror(rc));
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/*
 * A copy of one string of the snapshot, or NULL when there is none yet. A
 * stale snapshot is rendered again first: the main loop is woken, and the
 * request waits for it (at most RENDER_WAIT s, then takes what there is).
 */
static char *snapshot_copy(struct metrics_http *h, bool graph, size_t *len)
{
	char *copy = NULL;
	const char *s;
	size_t n;
	struct timespec until;

	pthread_mutex_lock(&h->lock);
	if (h->stale[graph]) {
		uint64_t one = 1;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += RENDER_WAIT;
		h->wanted[graph] = true;
		if (write(h->wake_fd, &one, sizeof(one)) == sizeof(one))
			while (h->stale[graph] &&
			       !pthread_cond_timedwait(&h->rendered, &h->lock, &until))
				;
	}
	s = graph ? h->graph : h->metrics;
	n = graph ? h->graph_len : h->metrics_len;
	if (s) {
		copy = malloc(n + 1);
		if (copy) {
			memcpy(copy, s, n + 1);
			*len = n;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return copy;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	/* The map page fetches nothing but /graph.json from here. */
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'none'; script-src 'unsafe-inline'; "
				"style-src 'unsafe-inline'; connect-src 'self'; img-src data:");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
				  const char *text)
{
	char *body = strdup(text);

	return body ? reply(conn, status, body, strlen(body), "text/plain; charset=utf-8") : MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	struct metrics_http *h = cls;
	char *body, *page;
	size_t len = 0;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)state;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (!strcmp(url, "/metrics")) {
		body = snapshot_copy(h, false, &len);
		return body ? reply(conn, MHD_HTTP_OK, body, len,
				    "text/plain; version=0.0.4; charset=utf-8")
			    : reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no snapshot yet\n");
	}
	if (!strcmp(url, "/graph.json")) {
		body = snapshot_copy(h, true, &len);
		return body ? reply(conn, MHD_HTTP_OK, body, len, "application/json")
			    : reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no snapshot yet\n");
	}
	if (!strcmp(url, "/") || !strcmp(url, "/map")) {
		body = snapshot_copy(h, true, &len);
		page = webmap__page(body ? body : "null", &len);
		free(body);
		return page ? reply(conn, MHD_HTTP_OK, page, len, "text/html; charset=utf-8")
			    : MHD_NO;
	}
	return reply_text(conn, MHD_HTTP_NOT_FOUND,
			  "not found: try /metrics, /graph.json or /map\n");
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = 0;
	pr_debug("metrics http: %s", msg);
}

static void set_url(struct metrics_http *h, const struct sockaddr_storage *ss, unsigned int port)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, ip, sizeof(ip));
		snprintf(h->url, sizeof(h->url), "http://[%s]:%u/", ip, port);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, ip, sizeof(ip));
		snprintf(h->url, sizeof(h->url), "http://%s:%u/", ip, port);
	}
}

struct metrics_http *metrics_http__start(const char *addr, char *err, size_t errlen)
{
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	struct metrics_http *h = calloc(1, sizeof(*h));
	const union MHD_DaemonInfo *info;
	struct sockaddr_storage ss;
	sigset_t all, old;
	socklen_t sl;

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->rendered, NULL);
	h->stale[0] = h->stale[1] = true;
	h->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (h->wake_fd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if (metrics_http__parse_addr(addr, &ss, &sl, err, errlen))
		goto fail;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* MHD's thread inherits this mask: signals stay with claimd's loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	errno = 0;
	h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR, &ss,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONN_LIMIT,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONN_TIMEOUT,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!h->mhd) {
		snprintf(err, errlen, "cannot listen on %s%s%s", addr, errno ? ": " : "",
			 errno ? strerror(errno) : "");
		goto fail;
	}
	info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
	set_url(h, &ss, info ? info->port : 0);
	return h;
fail:
	if (h->wake_fd >= 0)
		close(h->wake_fd);
	pthread_cond_destroy(&h->rendered);
	pthread_mutex_destroy(&h->lock);
	free(h);
	return NULL;
}

int metrics_http__wake_fd(const struct metrics_http *h)
{
	return h->wake_fd;
}

void metrics_http__wanted(struct metrics_http *h, bool *metrics, bool *graph)
{
	uint64_t n;

	*metrics = *graph = false;
	if (read(h->wake_fd, &n, sizeof(n)) != sizeof(n))
		return;
	pthread_mutex_lock(&h->lock);
	*metrics = h->wanted[0];
	*graph = h->wanted[1];
	h->wanted[0] = h->wanted[1] = false;
	pthread_mutex_unlock(&h->lock);
}

void metrics_http__stale(struct metrics_http *h)
{
	pthread_mutex_lock(&h->lock);
	h->stale[0] = h->stale[1] = true;
	pthread_mutex_unlock(&h->lock);
}

const char *metrics_http__url(const struct metrics_http *h)
{
	return h->url;
}

/* Replaces one string of the snapshot, now fresh, and wakes who waits for it. */
static void publish(struct metrics_http *h, bool graph, char *text, size_t len)
{
	char *old;

	pthread_mutex_lock(&h->lock);
	old = graph ? h->graph : h->metrics;
	if (graph) {
		h->graph = text;
		h->graph_len = len;
	} else {
		h->metrics = text;
		h->metrics_len = len;
	}
	h->stale[graph] = false;
	pthread_cond_broadcast(&h->rendered);
	pthread_mutex_unlock(&h->lock);
	free(old);
}

void metrics_http__publish_metrics(struct metrics_http *h, char *text, size_t len)
{
	publish(h, false, text, len);
}

void metrics_http__publish_graph(struct metrics_http *h, char *json, size_t len)
{
	publish(h, true, json, len);
}

void metrics_http__stop(struct metrics_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->mhd);
	close(h->wake_fd);
	pthread_cond_destroy(&h->rendered);
	pthread_mutex_destroy(&h->lock);
	free(h->metrics);
	free(h->graph);
	free(h);
}
