// SPDX-License-Identifier: GPL-2.0
/* Seeding the connection table from /proc; see seed.h. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "names.h"
#include "procnet.h"
#include "seed.h"

struct seed_ctx {
	const struct observer_config *cfg;
	struct names *names;
	struct seed_counts *counts;
	struct observer *obs;
	int conns_fd;
	int traced_fd;
	int mark_fd;
};

static int filtered_out(const struct observer_config *cfg, const struct procnet_sock *s)
{
	__u16 port = s->role == CLAIMD_ROLE_OUTBOUND ? s->remote.port : s->local.port;
	int i, ok;

	if (cfg->netns && s->netns != cfg->netns_ino)
		return 1;
	if (cfg->n_pids) {
		for (ok = 0, i = 0; i < cfg->n_pids; i++)
			ok |= cfg->pids[i] == s->tgid;
		if (!ok)
			return 1;
	}
	if (cfg->n_ports) {
		for (ok = 0, i = 0; i < cfg->n_ports; i++)
			ok |= cfg->ports[i] == port;
		if (!ok)
			return 1;
	}
	return 0;
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

static void seed_one(const struct procnet_sock *s, void *arg)
{
	struct seed_ctx *ctx = arg;
	struct claimd_conn_key key = { .tgid = s->tgid, .fd = s->fd };
	struct claimd_conn c;
	__u32 word;
	int out = s->role == CLAIMD_ROLE_OUTBOUND;

	if (filtered_out(ctx->cfg, s)) {
		ctx->counts->skipped++;
		return;
	}
	memset(&c, 0, sizeof(c));
	c.role = s->role;
	c.flags = CLAIMD_CONN_SEEDED | CLAIMD_CONN_CONNECTED;
	c.local = s->local;
	c.remote = s->remote;
	/* Joined mid-stream: junk resyncs at the next buffer instead of losing the stream. */
	http_framer_init(&c.rx, out ? HTTP_KIND_RESPONSE : HTTP_KIND_REQUEST, 1);
	http_framer_init(&c.tx, out ? HTTP_KIND_REQUEST : HTTP_KIND_RESPONSE, 1);
	c.ino = s->ino;
	/* Marked first, as the programs mark theirs: never an entry its mark does not count. */
	if (observer__sock_mark(ctx->obs, s->ino, 1)) {
		ctx->counts->skipped++;
		return;
	}
	/* NOEXIST: what the kernel saw since attaching is newer than /proc. */
	if (bpf_map_update_elem(ctx->conns_fd, &key, &c, BPF_NOEXIST)) {
		observer__sock_mark(ctx->obs, s->ino, -1);
		ctx->counts->skipped++;
		return;
	}
	/* Its word: traced, and one more listener if this is one (headers/observer.h). */
	if (bpf_map_lookup_elem(ctx->traced_fd, &key.tgid, &word))
		word = 0;
	word |= 1;
	if (s->role == CLAIMD_ROLE_LISTENER)
		word += CLAIMD_PROC_LISTENER_ONE;
	bpf_map_update_elem(ctx->traced_fd, &key.tgid, &word, BPF_ANY);
	proc_mark(ctx->mark_fd, s->tgid);
	switch (s->role) {
	case CLAIMD_ROLE_LISTENER:
		ctx->counts->listeners++;
		names__listen(ctx->names, s->tgid, &s->local, NULL, 0);
		break;
	case CLAIMD_ROLE_INBOUND:
		ctx->counts->inbound++;
		break;
	default:
		ctx->counts->outbound++;
	}
}

int seed__existing(struct observer *obs, const struct observer_config *cfg, struct names *names,
		   struct seed_counts *out)
{
	struct seed_ctx ctx = {
		.cfg = cfg,
		.names = names,
		.counts = out,
		.obs = obs,
		.conns_fd = observer__conns_fd(obs),
		.traced_fd = observer__traced_fd(obs),
		.mark_fd = observer__proc_mark_fd(obs),
	};
	int n;

	memset(out, 0, sizeof(*out));
	n = procnet__scan(getpid(), seed_one, &ctx);
	if (n < 0)
		return n;
	out->processes = n;
	return 0;
}
