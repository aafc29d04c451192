// SPDX-License-Identifier: GPL-2.0
/* Seeding the connection table from /proc; see seed.h. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cgroupfs.h"
#include "hashtab.h"
#include "host/procstat.h"
#include "model/names.h"
#include "kernel/procnet.h"
#include "kernel/seed.h"

struct seed_ctx {
	const struct observer_config *cfg;
	struct names *names;
	struct seed_counts *counts;
	struct observer *obs;
	int conns_fd;
	int outside_fd;
	int mark_fd;
	int listeners_fd;
	int listen_ports_fd;
	/* --port: the processes found serving a port it lists (a listener, a connection taken) */
	struct hashtab *serving;
	/* --port: the processes found calling ports it does not list, asked after the walk */
	struct hashtab *callers;
};

/* tgid into the set (NULL: none made, no memory): its calls to ports not listed then unseeded. */
static void tgid_note(struct hashtab *set, __u32 tgid)
{
	if (set)
		hashtab__put(set, &tgid, sizeof(tgid), (void *)1, NULL);
}

/*
 * Is is() true of pid, or of one of its parents up to depth up, nearest
 * first? As the programs walk a process's real parents (bpf/proc.bpf.h),
 * read from /proc: false once one is gone.
 */
static bool pid_or_ancestor(pid_t pid, int depth, bool (*is)(pid_t pid, const void *arg),
			    const void *arg)
{
	struct procstat st;
	int up;

	for (up = 0; up <= depth && pid > 1; up++) {
		if (is(pid, arg))
			return true;
		if (procstat__read(pid, &st))
			return false;
		pid = st.ppid;
	}
	return false;
}

/*
 * Is process tgid under the cgroup v2 directory dir (--cgroup), as the
 * programs ask of a process that makes a socket? Its cgroup's directory is
 * dir or below it.
 */
static bool under_cgroup(__u32 tgid, const char *dir)
{
	char want[PATH_MAX], have[PATH_MAX], pid[16];
	size_t n;

	snprintf(pid, sizeof(pid), "%u", tgid);
	if (!realpath(dir, want) || cgroupfs_dir_of(pid, have, sizeof(have)))
		return false;
	n = strlen(want);
	return !strncmp(have, want, n) && (have[n] == 0 || have[n] == '/');
}

/*
 * Is pid one --pid lists? Asked of a process and its parents, as the
 * programs ask of a process that makes a socket (bpf/sockio.c).
 */
static bool pid_in_config(pid_t pid, const void *arg)
{
	const struct observer_config *cfg = arg;
	int i;

	for (i = 0; i < cfg->n_pids; i++)
		if (cfg->pids[i] == (__u32)pid)
			return true;
	return false;
}

/* Do the filters but --port leave out the process that holds s? */
static bool process_filtered_out(const struct observer_config *cfg, const struct procnet_sock *s)
{
	if (cfg->netns && s->netns != cfg->netns_ino)
		return true;
	if (cfg->cgroup && !under_cgroup(s->tgid, cfg->cgroup))
		return true;
	return cfg->n_pids &&
	       !pid_or_ancestor((pid_t)s->tgid, CLAIMD_FILTER_ANCESTORS, pid_in_config, cfg);
}

/* Does --port list s's service port (its peer's, for a call), or is there none? */
static bool port_listed(const struct observer_config *cfg, const struct procnet_sock *s)
{
	__u16 port = s->role == CLAIMD_ROLE_OUTBOUND ? s->remote.port : s->local.port;
	int i;

	for (i = 0; i < cfg->n_ports; i++)
		if (cfg->ports[i] == port)
			return true;
	return !cfg->n_ports;
}

/* The mark of a process traced[] names, on its leader (proc.bpf.h): untraced ones have none. */
static void proc_mark(int mark_fd, __u32 tgid)
{
	int pfd = syscall(SYS_pidfd_open, tgid, 0);
	__u8 one = 1;

	if (pfd < 0)
		return; /* gone: nothing to follow */
	bpf_map_update_elem(mark_fd, &pfd, &one, BPF_ANY);
	close(pfd);
}

/*
 * Its word: traced (its program unread, when claimd reads programs: the
 * walk after the seeding reads it), and one more listener if this is one
 * (headers/observer.h).
 */
static void proc_word(struct seed_ctx *ctx, __u32 tgid, int listener)
{
	__u32 set = CLAIMD_PROC_TRACED;

	if (!(observer__proc_word(ctx->obs, tgid, 0, 0) & CLAIMD_PROC_TRACED) &&
	    observer__reads_programs(ctx->obs))
		set |= CLAIMD_PROC_UNREAD;
	observer__proc_word(ctx->obs, tgid, set, 0);
	if (listener)
		observer__proc_word_add(ctx->obs, tgid, CLAIMD_PROC_LISTENER_ONE);
	proc_mark(ctx->mark_fd, tgid);
}

/*
 * A process found listening on port is a service (struct claimd_outside):
 * its calls outside requests go on that port's edges, unless the programs
 * gave it a port already (a listener opened or a request begun since
 * attaching). Read, then written whole: a call outside requests counted
 * between the two would be lost, in the microseconds of a seeding, so the
 * port is written only where none is.
 */
static void proc_service_port(struct seed_ctx *ctx, __u32 tgid, __u16 port)
{
	struct claimd_outside o;

	if (bpf_map_lookup_elem(ctx->outside_fd, &tgid, &o) || o.port)
		return;
	o.port = port;
	bpf_map_update_elem(ctx->outside_fd, &tgid, &o, BPF_ANY);
}

/*
 * A listener: kept by inode number, as the programs keep the ones they see
 * open, and its port counted, so that the connections it takes from now
 * on are born under watch. 0, or -1 when the kernel saw it first.
 */
static int seed_listener(struct seed_ctx *ctx, const struct procnet_sock *s)
{
	struct claimd_listener l = { .tgid = s->tgid, .netns = (__u32)s->netns, .local = s->local };
	struct claimd_listen_port lp = { .netns = (__u32)s->netns, .port = s->local.port };
	__u32 n = 0;

	/* NOEXIST: what the kernel saw since attaching is newer than /proc. */
	if (bpf_map_update_elem(ctx->listeners_fd, &s->ino, &l, BPF_NOEXIST))
		return -1;
	/* The programs add to the count too; claimd adds before they could see this one end. */
	if (bpf_map_lookup_elem(ctx->listen_ports_fd, &lp, &n))
		n = 0;
	n++;
	bpf_map_update_elem(ctx->listen_ports_fd, &lp, &n, BPF_ANY);
	return 0;
}

/*
 * A connection: an entry under its process and fd, its socket known by
 * inode number until the programs see its bytes (on_io), marked in the
 * filter by its ports. 0, or -1 when it could not be.
 */
static int seed_conn(struct seed_ctx *ctx, const struct procnet_sock *s)
{
	struct claimd_conn_key key = { .tgid = s->tgid, .fd = s->fd };
	__u32 slot = claimd_sock_slot(s->local.port, s->remote.port);
	int out = s->role == CLAIMD_ROLE_OUTBOUND;
	struct claimd_conn c;

	/* Followed already, in its slot: the programs saw it first. */
	if (observer__conn_in_slot(ctx->obs, &key))
		return -1;
	memset(&c, 0, sizeof(c));
	c.role = s->role;
	c.flags = CLAIMD_CONN_SEEDED;
	c.local = s->local;
	c.remote = s->remote;
	/* Joined mid-stream: junk resyncs at the next buffer instead of losing the stream. */
	http_framer_init(&c.rx, out ? HTTP_KIND_RESPONSE : HTTP_KIND_REQUEST, 1);
	http_framer_init(&c.tx, out ? HTTP_KIND_REQUEST : HTTP_KIND_RESPONSE, 1);
	c.ino = s->ino;
	/* Marked first, as the programs mark theirs: never an entry its mark does not count. */
	if (observer__sock_mark(ctx->obs, slot, 1))
		return -1;
	/* NOEXIST: what the kernel saw since attaching is newer than /proc. */
	if (bpf_map_update_elem(ctx->conns_fd, &key, &c, BPF_NOEXIST)) {
		observer__sock_mark(ctx->obs, slot, -1);
		return -1;
	}
	return 0;
}

/* The socket s, past the filters, into the tables. */
static void seed_kept(struct seed_ctx *ctx, const struct procnet_sock *s)
{
	int listener = s->role == CLAIMD_ROLE_LISTENER;

	if (listener ? seed_listener(ctx, s) : seed_conn(ctx, s))
		return; /* the programs saw it first */
	proc_word(ctx, s->tgid, listener);
	switch (s->role) {
	case CLAIMD_ROLE_LISTENER:
		ctx->counts->listeners++;
		proc_service_port(ctx, s->tgid, s->local.port);
		names__listen(ctx->names, s->tgid, &s->local, NULL, 0);
		break;
	case CLAIMD_ROLE_INBOUND:
		ctx->counts->inbound++;
		break;
	default:
		ctx->counts->outbound++;
	}
}

static void seed_one(const struct procnet_sock *s, void *arg)
{
	struct seed_ctx *ctx = arg;
	bool call = s->role == CLAIMD_ROLE_OUTBOUND;

	if (process_filtered_out(ctx->cfg, s))
		return;
	if (!port_listed(ctx->cfg, s)) {
		/* A call to a port not listed: its caller may serve one listed, found later in the walk. */
		if (call)
			tgid_note(ctx->callers, s->tgid);
		return;
	}
	if (!call)
		tgid_note(ctx->serving, s->tgid);
	seed_kept(ctx, s);
}

/*
 * Does process pid serve a port --port lists: a listener or a connection
 * taken found in the walk, or a service the programs know (a listener
 * opened, a request begun since attaching: struct claimd_outside)?
 */
static bool pid_serves(pid_t pid, const void *arg)
{
	const struct seed_ctx *ctx = arg;
	__u32 tgid = (__u32)pid;
	struct claimd_outside o;

	return (ctx->serving && hashtab__get(ctx->serving, &tgid, sizeof(tgid))) ||
	       (!bpf_map_lookup_elem(ctx->outside_fd, &tgid, &o) && o.port);
}

static void seed_ctx_init(struct seed_ctx *ctx, struct observer *obs,
			  const struct observer_config *cfg, struct names *names,
			  struct seed_counts *out)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->cfg = cfg;
	ctx->names = names;
	ctx->counts = out;
	ctx->obs = obs;
	ctx->conns_fd = observer__conns_fd(obs);
	ctx->outside_fd = observer__outside_calls_fd(obs);
	ctx->mark_fd = observer__proc_mark_fd(obs);
	ctx->listeners_fd = observer__listeners_fd(obs);
	ctx->listen_ports_fd = observer__listen_ports_fd(obs);
}

/*
 * A call of a process that serves a port --port lists, to a port it does
 * not list: followed from its next bytes, as the programs follow such a
 * process's connects (bpf/sockio.c, connect_wanted). Its calls to ports
 * listed were seeded, or seen born, already. Its listeners on ports
 * listed are named.
 */
static void seed_call(const struct procnet_sock *s, void *arg)
{
	struct seed_ctx *ctx = arg;

	if (s->role == CLAIMD_ROLE_OUTBOUND && !port_listed(ctx->cfg, s))
		seed_kept(ctx, s);
	/* Its listeners' names: told by their records already, unless those were lost. */
	if (s->role == CLAIMD_ROLE_LISTENER && port_listed(ctx->cfg, s))
		names__listen(ctx->names, s->tgid, &s->local, NULL, 0);
}

/*
 * A process found calling ports --port does not list: its calls are
 * seeded if it serves a port it lists, or is a command such a process
 * runs; that service's verdicts need every call made for its requests, a
 * database pool's opened before claimd as much as any.
 */
static void seed_caller(uint32_t tgid, void *arg)
{
	struct seed_ctx *ctx = arg;

	if (pid_or_ancestor((pid_t)tgid, CLAIMD_SERVING_ANCESTORS, pid_serves, ctx))
		procnet__scan_pid(tgid, seed_call, ctx);
}

int seed__calls_of(struct observer *obs, const struct observer_config *cfg, struct names *names,
		   __u32 tgid, struct seed_counts *out)
{
	struct seed_ctx ctx;
	int n;

	seed_ctx_init(&ctx, obs, cfg, names, out);
	n = procnet__scan_pid(tgid, seed_call, &ctx);
	if (n >= 0)
		out->at_listen++;
	return n < 0 ? n : 0;
}

int seed__existing(struct observer *obs, const struct observer_config *cfg, struct names *names,
		   struct seed_counts *out)
{
	struct seed_ctx ctx;
	int n;

	memset(out, 0, sizeof(*out));
	seed_ctx_init(&ctx, obs, cfg, names, out);
	if (cfg->n_ports) {
		ctx.serving = hashtab__new();
		ctx.callers = hashtab__new();
	}
	n = procnet__scan(getpid(), seed_one, &ctx);
	if (n >= 0) {
		/* After the walk: a caller's service may come later in it. */
		if (ctx.callers)
			hashtab__each_u32_key(ctx.callers, seed_caller, &ctx);
		out->processes = n;
	}
	hashtab__free(ctx.serving);
	hashtab__free(ctx.callers);
	return n < 0 ? n : 0;
}
