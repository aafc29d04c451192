// SPDX-License-Identifier: GPL-2.0
/*
 * claimlab node: one lab service. Parses its options, listens on 127.0.0.1,
 * says its port in the ready file, and accepts connections, one thread per
 * connection (node_serve.c serves them). SIGUSR1 writes the counters to the
 * stats file; SIGTERM or SIGINT writes them and exits 0. The driver names
 * the process for claimd through CLAIMD_SERVICE in its environment; libclaim
 * finds claimd's verdicts through CLAIMD_VERDICTS.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lab.h"

enum {
	OPT_NAME = 0x100,
	OPT_PORT,
	OPT_READY,
	OPT_STATS,
	OPT_DOWN,
	OPT_POLICY,
	OPT_FAIL_RATE,
	OPT_FAIL_MODE,
	OPT_CAPACITY,
	OPT_SEED,
	OPT_NO_HEADER,
	OPT_BURST,
	OPT_TIMEOUT,
};

static const struct argp_option node_options[] = {
	{ "name", OPT_NAME, "NAME", 0, "Name in logs and stats (claimd reads CLAIMD_SERVICE)", 0 },
	{ "port", OPT_PORT, "PORT", 0, "Port on 127.0.0.1 (default 0: the kernel chooses)", 0 },
	{ "ready", OPT_READY, "FILE", 0, "Write the port here once listening", 0 },
	{ "stats", OPT_STATS, "FILE", 0, "Write the counters here (JSON) on SIGTERM or SIGUSR1",
	  0 },
	{ "down", OPT_DOWN, "HOST:PORT[:open]", 0,
	  "A downstream called for every request, in order (repeatable); ':open' marks it "
	  "fail-open",
	  1 },
	{ "policy", OPT_POLICY, "POLICY", 0,
	  "none, retry:R, budget:B, claim:R or claim+budget:B (default none)", 1 },
	{ "budget-burst", OPT_BURST, "TOKENS", 0, "Most tokens a retry budget holds (default 20)",
	  1 },
	{ "timeout", OPT_TIMEOUT, "MS", 0, "Downstream receive timeout (default 10000)", 1 },
	{ "fail-rate", OPT_FAIL_RATE, "R", 0, "Internal fault on this share of requests", 2 },
	{ "fail-mode", OPT_FAIL_MODE, "MODE", 0,
	  "internal (fault at --fail-rate) or overload (503 beyond --capacity in flight)", 2 },
	{ "capacity", OPT_CAPACITY, "N", 0, "Requests in flight an overloaded node serves", 2 },
	{ "seed", OPT_SEED, "N", 0, "Seed of the fault PRNG (with the name)", 2 },
	{ "no-claim-header", OPT_NO_HEADER, NULL, 0,
	  "Never write x-error-claim (a service without libclaim)", 2 },
	{},
};

static int parse_down(const char *arg, struct downstream *d)
{
	char buf[96], *mode;
	__u16 port;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return -1;
	mode = strrchr(buf, ':');
	d->open = mode && !strcmp(mode, ":open");
	if (mode && (d->open || !strcmp(mode, ":close")))
		*mode = 0;
	if (addr__split(buf, d->addr, sizeof(d->addr), &port) || !port)
		return -1;
	d->port = port;
	return 0;
}

static error_t parse_node_opt(int key, char *arg, struct argp_state *state)
{
	struct node *n = state->input;
	long v;

	switch (key) {
	case OPT_NAME:
		if (strlen(arg) >= sizeof(n->name))
			argp_error(state, "--name too long: %s", arg);
		snprintf(n->name, sizeof(n->name), "%s", arg);
		break;
	case OPT_PORT:
		if (arg_long(arg, 0, 65535, &v))
			argp_error(state, "invalid --port: %s", arg);
		n->port = v;
		break;
	case OPT_READY:
		n->ready_file = arg;
		break;
	case OPT_STATS:
		n->stats_file = arg;
		break;
	case OPT_DOWN:
		if (n->n_down >= LAB_MAX_DOWN || parse_down(arg, &n->down[n->n_down]))
			argp_error(state, "invalid or too many --down: %s", arg);
		n->n_down++;
		break;
	case OPT_POLICY:
		if (policy_parse(arg, &n->policy))
			argp_error(state, "invalid --policy: %s", arg);
		break;
	case OPT_BURST:
		if (arg_double(arg, 1, 1e9, &n->budget_burst))
			argp_error(state, "invalid --budget-burst: %s", arg);
		break;
	case OPT_TIMEOUT:
		if (arg_long(arg, 1, 3600000, &v))
			argp_error(state, "invalid --timeout: %s", arg);
		n->timeout_ms = v;
		break;
	case OPT_FAIL_RATE:
		if (arg_double(arg, 0, 1, &n->fail_rate))
			argp_error(state, "--fail-rate must be 0 to 1: %s", arg);
		break;
	case OPT_FAIL_MODE:
		if (!strcmp(arg, "internal"))
			n->fail_mode = FAIL_INTERNAL;
		else if (!strcmp(arg, "overload"))
			n->fail_mode = FAIL_OVERLOAD;
		else
			argp_error(state, "--fail-mode is internal or overload: %s", arg);
		break;
	case OPT_CAPACITY:
		if (arg_long(arg, 1, 1000000, &n->capacity))
			argp_error(state, "invalid --capacity: %s", arg);
		break;
	case OPT_SEED:
		if (arg_long(arg, 0, LONG_MAX, &v))
			argp_error(state, "invalid --seed: %s", arg);
		n->seed = v;
		break;
	case OPT_NO_HEADER:
		n->no_claim_header = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument: %s", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int start_conn_thread(struct node *n, int fd, pthread_attr_t *attr)
{
	struct conn_arg *a = malloc(sizeof(*a));
	pthread_t th;
	int err;

	if (!a)
		return -ENOMEM;
	a->node = n;
	a->fd = fd;
	err = pthread_create(&th, attr, node_serve_conn, a);
	if (err) {
		free(a);
		return -err;
	}
	return 0;
}

static int write_stats(const struct node *n)
{
	int err;

	if (!n->stats_file)
		return 0;
	err = node_stats_write(n, n->stats_file);
	if (err)
		pr_err("cannot write %s: %s", n->stats_file, strerror(-err));
	return err;
}

/* Accepts until SIGTERM/SIGINT; SIGUSR1 writes the stats on the way. */
static int serve(struct node *n, int lfd, int sfd)
{
	struct pollfd pfd[2] = { { .fd = lfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
	pthread_attr_t attr;
	int err = 0;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			err = write_stats(n);
			if (si.ssi_signo != SIGUSR1)
				break;
		}
		if (pfd[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (fd < 0)
				continue;
			err = start_conn_thread(n, fd, &attr);
			if (err) {
				pr_err("cannot start a connection thread: %s", strerror(-err));
				close(fd);
				err = 0;
			}
		}
	}
	pthread_attr_destroy(&attr);
	return err;
}

static int setup_downstreams(struct node *n)
{
	int i;

	for (i = 0; i < n->n_down; i++) {
		if (!policy_uses_budget(&n->policy))
			continue;
		n->down[i].budget = claim_budget_new(n->policy.ratio, n->budget_burst);
		if (!n->down[i].budget)
			return -ENOMEM;
	}
	return 0;
}

int cmd_node(int argc, char **argv)
{
	static const struct argp argp = {
		.options = node_options,
		.parser = parse_node_opt,
		.doc = "claimlab node -- one lab service: GET /r/<id>, calling its downstreams "
		       "with a retry policy, failing when told to.",
	};
	static struct node n = {
		.name = "node",
		.budget_burst = 20,
		.timeout_ms = 10000,
		.capacity = 1000000,
		.seed = LAB_DEFAULT_SEED,
	};
	char buf[32];
	sigset_t mask;
	int lfd = -1, sfd = -1, err = 1;

	if (argp_parse(&argp, argc, argv, 0, NULL, &n))
		return 2;
	log_set_prefix(n.name);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);
	/* Blocked before any thread starts: only the signalfd sees them. */
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		pr_err("signalfd: %s", strerror(errno));
		goto cleanup;
	}
	n.seed ^= lab_hash(n.name);
	if (setup_downstreams(&n)) {
		pr_err("out of memory");
		goto cleanup;
	}
	n.claim = claim_open(NULL);
	if (!n.claim) {
		pr_err("claim_open: out of memory");
		goto cleanup;
	}
	lfd = lab_listen(&n.port);
	if (lfd < 0) {
		pr_err("cannot listen on 127.0.0.1:%d: %s", n.port, strerror(errno));
		goto cleanup;
	}
	snprintf(buf, sizeof(buf), "%d\n", n.port);
	if (n.ready_file) {
		int werr = lab_write_atomic(n.ready_file, buf);

		if (werr) {
			pr_err("cannot write %s: %s", n.ready_file, strerror(-werr));
			goto cleanup;
		}
	}
	pr_info("listening on 127.0.0.1:%d, %d downstream(s), claimd %s", n.port, n.n_down,
		claim_connected(n.claim) ? "connected" : "not connected: verdicts unknown");
	err = serve(&n, lfd, sfd) ? 1 : 0;
cleanup:
	if (lfd >= 0)
		close(lfd);
	if (sfd >= 0)
		close(sfd);
	/* Connection threads may still run: claim and budgets go with the process. */
	return err;
}
