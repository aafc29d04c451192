// SPDX-License-Identifier: GPL-2.0
/* The control socket server; see control.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "expose/control.h"
#include "evloop.h"
#include "host/handover.h"
#include "linebuf.h"
#include "log.h"

#define OUTQ_MAX (16u << 20) /* bytes queued for one slow client */

struct client {
	struct ep_src src; /* first: the epoll tag */
	struct control *ctl;
	struct client *next;
	struct linebuf in;
	char *out;
	size_t out_len, out_off, out_cap;
	unsigned long dropped, dropped_told;
	bool tracing, roots, closing, want_out;
};

struct control {
	struct ep_src src;
	int epfd;
	char path[108];
	control_handler handler;
	void *ctx;
	struct client *clients;
	unsigned long published, dropped;
};

static void client_free(struct client *cl)
{
	struct client **pp;

	for (pp = &cl->ctl->clients; *pp; pp = &(*pp)->next) {
		if (*pp == cl) {
			*pp = cl->next;
			break;
		}
	}
	ep_del(cl->ctl->epfd, &cl->src);
	close(cl->src.fd);
	linebuf__release(&cl->in);
	free(cl->out);
	free(cl);
}

/* Writes what is queued; returns -1 if the client is gone. */
static int client_flush(struct client *cl)
{
	while (cl->out_off < cl->out_len) {
		ssize_t n = write(cl->src.fd, cl->out + cl->out_off, cl->out_len - cl->out_off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return -1;
		}
		cl->out_off += n;
	}
	if (cl->out_off == cl->out_len)
		cl->out_off = cl->out_len = 0;
	if (cl->want_out != !!cl->out_len) {
		cl->want_out = !!cl->out_len;
		ep_mod(cl->ctl->epfd, &cl->src, EPOLLIN | (cl->want_out ? EPOLLOUT : 0));
	}
	return 0;
}

/* Queues a line (adds the newline). Returns false if it had to be dropped. */
static bool client_queue(struct client *cl, const char *line, size_t len)
{
	size_t need = cl->out_len + len + 1;

	if (cl->out_off && need > cl->out_cap) {
		memmove(cl->out, cl->out + cl->out_off, cl->out_len - cl->out_off);
		cl->out_len -= cl->out_off;
		cl->out_off = 0;
		need = cl->out_len + len + 1;
	}
	if (need > OUTQ_MAX)
		return false;
	if (need > cl->out_cap) {
		size_t cap = cl->out_cap ? cl->out_cap : 65536;
		char *p;

		while (cap < need)
			cap *= 2;
		p = realloc(cl->out, cap);
		if (!p)
			return false;
		cl->out = p;
		cl->out_cap = cap;
	}
	memcpy(cl->out + cl->out_len, line, len);
	cl->out[cl->out_len + len] = '\n';
	cl->out_len += len + 1;
	return true;
}

static void client_send_json(struct client *cl, struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);

	client_queue(cl, s, strlen(s));
}

static void client_error(struct client *cl, const char *msg)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "error", json_object_new_string(msg));
	client_send_json(cl, o);
	json_object_put(o);
	cl->closing = true;
}

static void client_request(struct client *cl, const char *line, size_t len)
{
	struct ctl_request req;
	struct json_object *reply;
	char err[128];

	if (cl->tracing)
		return; /* a tracing client has said all it will */
	if (ctl_request__parse(line, len, &req, err, sizeof(err))) {
		client_error(cl, err);
		return;
	}
	if (req.cmd == CTL_TRACE) {
		cl->tracing = true;
		cl->roots = req.roots;
		return;
	}
	reply = cl->ctl->handler(cl->ctl->ctx, &req);
	if (!reply) {
		client_error(cl, "request failed");
		return;
	}
	client_send_json(cl, reply);
	json_object_put(reply);
	cl->closing = true;
}

static void client_event(struct ep_src *src, uint32_t events)
{
	struct client *cl = (struct client *)src;
	char *line;
	size_t len;

	if (events & EPOLLIN) {
		ssize_t n = linebuf__fill(&cl->in, cl->src.fd);

		if (n == 0 || (n < 0 && n != -EAGAIN && n != -EINTR)) {
			if (n == -E2BIG)
				client_error(cl, "request line too long");
			else {
				client_free(cl);
				return;
			}
		}
		while ((line = linebuf__next(&cl->in, &len)))
			client_request(cl, line, len);
	}
	if ((events & (EPOLLHUP | EPOLLERR)) && !(events & EPOLLIN)) {
		client_free(cl);
		return;
	}
	if (client_flush(cl) < 0 || (cl->closing && !cl->out_len)) {
		client_free(cl);
		return;
	}
}

static void listener_event(struct ep_src *src, uint32_t events)
{
	struct control *ctl = (struct control *)src;
	struct client *cl;
	int fd;

	(void)events;
	fd = accept4(ctl->src.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	cl = calloc(1, sizeof(*cl));
	if (!cl) {
		close(fd);
		return;
	}
	cl->src.fd = fd;
	cl->src.on_event = client_event;
	cl->ctl = ctl;
	linebuf__init(&cl->in, CTL_MAX_LINE);
	if (ep_add(ctl->epfd, &cl->src, EPOLLIN)) {
		close(fd);
		free(cl);
		return;
	}
	cl->next = ctl->clients;
	ctl->clients = cl;
}

static int mkdir_parent(const char *path)
{
	char *dup = strdup(path), *dir;
	int ret = 0;

	if (!dup)
		return -ENOMEM;
	dir = dirname(dup);
	if (mkdir(dir, 0755) && errno != EEXIST)
		ret = -errno;
	free(dup);
	return ret;
}

/* Does something accept connections at this address? *pid: who listens (0 if unknown). */
static bool socket_in_use(const struct sockaddr_un *sa, pid_t *pid)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct ucred cred = { 0 };
	socklen_t len = sizeof(cred);
	bool used;

	*pid = 0;
	if (fd < 0)
		return false;
	used = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
	if (used && !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		*pid = cred.pid;
	close(fd);
	return used;
}

/* In use by a live process: true. By one that is leaving (handover.h): waits,
 * bounded, for it to let go. */
static bool socket_kept(const struct sockaddr_un *sa)
{
	long long waited = 0;
	bool told = false;
	pid_t pid;

	while (socket_in_use(sa, &pid)) {
		if (!pid || !handover__pid_leaving(pid) || waited >= HANDOVER_WAIT_MS)
			return true;
		if (!told)
			pr_warn("control socket %s belongs to claimd pid %d, which is exiting: "
				"waiting up to %d s for it",
				sa->sun_path, (int)pid, HANDOVER_WAIT_MS / 1000);
		told = true;
		usleep(50 * 1000);
		waited += 50;
	}
	return false;
}

struct control *control__open(const struct control_opts *opts, int epfd, control_handler h,
			      void *ctx)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct control *ctl;
	mode_t mode, old_mask;
	int fd, err;

	if (strlen(opts->path) >= sizeof(sa.sun_path)) {
		pr_err("control socket path too long: %s", opts->path);
		return NULL;
	}
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return NULL;
	snprintf(ctl->path, sizeof(ctl->path), "%s", opts->path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", opts->path);
	ctl->epfd = epfd;
	ctl->handler = h;
	ctl->ctx = ctx;
	err = mkdir_parent(opts->path);
	if (err) {
		pr_err("cannot create the directory of %s: %s", opts->path, strerror(-err));
		goto fail;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail_errno;
	ctl->src.fd = fd;
	ctl->src.on_event = listener_event;
	/* A socket there that answers belongs to a running claimd: not ours to take. */
	if (socket_kept(&sa)) {
		pr_err("control socket %s is in use by another claimd; give this one its own "
		       "--control (and --pin-dir)",
		       opts->path);
		errno = EADDRINUSE;
		goto fail;
	}
	unlink(opts->path); /* a stale socket: only one claimd runs (see the lock) */
	/*
	 * Created with its mode, not chmod'ed after: nothing follows the path
	 * once it exists (it could be swapped for a symlink in a shared
	 * directory), and the group is set on the node itself (lchown).
	 */
	mode = opts->mode ? opts->mode : 0600;
	old_mask = umask(0777 & ~mode);
	err = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_mask);
	if (err || listen(fd, 64))
		goto fail_errno;
	if (opts->group != (gid_t)-1 && lchown(opts->path, -1, opts->group))
		goto fail_errno;
	if (ep_add(epfd, &ctl->src, EPOLLIN))
		goto fail_errno;
	return ctl;
fail_errno:
	err = errno;
	pr_err("control socket %s: %s", opts->path, strerror(err));
	errno = err;
fail:
	err = errno;
	if (ctl->src.fd > 0)
		close(ctl->src.fd);
	free(ctl);
	errno = err;
	return NULL;
}

void control__close(struct control *ctl)
{
	if (!ctl)
		return;
	while (ctl->clients) {
		client_flush(ctl->clients);
		client_free(ctl->clients);
	}
	ep_del(ctl->epfd, &ctl->src);
	close(ctl->src.fd);
	unlink(ctl->path);
	free(ctl);
}

bool control__tracing(const struct control *ctl, bool roots)
{
	const struct client *cl;

	for (cl = ctl->clients; cl; cl = cl->next)
		if (cl->tracing && (!roots || cl->roots))
			return true;
	return false;
}

void control__publish(struct control *ctl, const char *line, size_t len, bool root)
{
	struct client *cl, *next;

	for (cl = ctl->clients; cl; cl = next) {
		next = cl->next;
		if (!cl->tracing || (root && !cl->roots))
			continue;
		if (cl->dropped > cl->dropped_told && !cl->out_len) {
			char note[96];
			int n = snprintf(note, sizeof(note),
					 "{\"type\":\"notice\",\"dropped\":%lu}", cl->dropped);

			if (client_queue(cl, note, n))
				cl->dropped_told = cl->dropped;
		}
		if (!client_queue(cl, line, len)) {
			cl->dropped++;
			ctl->dropped++;
			continue;
		}
		ctl->published++;
		if (client_flush(cl) < 0)
			client_free(cl);
	}
}

unsigned long control__published(const struct control *ctl)
{
	return ctl->published;
}

unsigned long control__dropped(const struct control *ctl)
{
	return ctl->dropped;
}

int control__tracers(const struct control *ctl)
{
	const struct client *cl;
	int n = 0;

	for (cl = ctl->clients; cl; cl = cl->next)
		n += cl->tracing;
	return n;
}
