// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's node processes: started deepest level first (a node needs
 * its downstreams' ports), each as '/proc/self/exe node ...' with
 * CLAIMD_SERVICE=<name> in its environment and its output in <workdir>/
 * <name>.log; waited for until each has written its ready file; stopped with
 * SIGTERM (SIGKILL if one lingers) and their stats files read back. A node
 * that dies or does not get ready is named, with the end of its log.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"

#define READY_TIMEOUT_MS 15000
#define STOP_TIMEOUT_MS	 5000

static void node_file(char *buf, size_t len, const char *dir, const char *name, const char *ext)
{
	snprintf(buf, len, "%s/%s.%s", dir, name, ext);
}

void nodes_print_log(const char *dir, const struct topo_node *n)
{
	char path[LAB_PATH_MAX], buf[2048];
	ssize_t len;
	off_t size;
	int fd;

	node_file(path, sizeof(path), dir, n->name, "log");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	lseek(fd, size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0, SEEK_SET);
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return;
	buf[len] = 0;
	fprintf(stderr, "---- end of %s ----\n%s---- \n", path, buf);
}

struct argv_buf {
	const char *v[32 + LAB_MAX_DOWN];
	int n;
	bool overflow;
	char store[8192];
	size_t used;
};

static void arg(struct argv_buf *a, const char *s)
{
	if (a->n >= (int)(sizeof(a->v) / sizeof(a->v[0])) - 1) {
		a->overflow = true;
		return;
	}
	a->v[a->n++] = s;
}

/* A formatted argument kept in a's own storage. */
__attribute__((format(printf, 2, 3))) static void argf(struct argv_buf *a, const char *fmt, ...)
{
	char *p = a->store + a->used;
	size_t room = sizeof(a->store) - a->used;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(p, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room) {
		a->overflow = true;
		return;
	}
	a->used += n + 1;
	arg(a, p);
}

static void node_argv(struct argv_buf *a, const struct topo *t, int i, const struct run_opts *o,
		      const char *dir)
{
	const struct topo_node *n = &t->nodes[i];
	char policy[32];
	int c;

	arg(a, "claimlab");
	arg(a, "node");
	argf(a, "--name=%s", n->name);
	argf(a, "--ready=%s/%s.ready", dir, n->name);
	argf(a, "--stats=%s/%s.stats", dir, n->name);
	argf(a, "--policy=%s", policy_format(&n->policy, policy, sizeof(policy)));
	argf(a, "--seed=%llu", (unsigned long long)o->seed);
	argf(a, "--budget-burst=%g", o->budget_burst);
	argf(a, "--timeout=%d", o->timeout_ms);
	for (c = 0; c < n->n_children; c++) {
		const struct topo_node *ch = &t->nodes[n->children[c]];

		argf(a, "--down=127.0.0.1:%d%s", ch->port, ch->open ? ":open" : "");
	}
	if (n->fail) {
		argf(a, "--fail-rate=%g", o->fail_rate);
		argf(a, "--fail-mode=%s", o->fail_mode);
		argf(a, "--capacity=%ld", o->capacity);
	}
	if (n->no_claim_header)
		arg(a, "--no-claim-header");
	a->v[a->n] = NULL;
}

static pid_t spawn_node(const struct topo *t, int i, const struct run_opts *o, const char *dir)
{
	const struct topo_node *n = &t->nodes[i];
	struct argv_buf a = { .n = 0 };
	char log[LAB_PATH_MAX], ready[LAB_PATH_MAX];
	char service[LAB_NAME_MAX + 40];
	pid_t parent = getpid(), pid;
	int fd;

	node_argv(&a, t, i, o, dir);
	if (a.overflow) {
		errno = E2BIG;
		return -1;
	}
	node_file(log, sizeof(log), dir, n->name, "log");
	node_file(ready, sizeof(ready), dir, n->name, "ready");
	snprintf(service, sizeof(service), "%s%s", o->service_prefix ? o->service_prefix : "",
		 n->name);
	unlink(ready);
	pid = fork();
	if (pid != 0)
		return pid;
	/* The child: dies with the driver, whatever kills it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	setenv("CLAIMD_SERVICE", service, 1);
	signal(SIGPIPE, SIG_DFL);
	execv("/proc/self/exe", (char *const *)a.v);
	pr_err("exec /proc/self/exe: %s", strerror(errno));
	_exit(127);
}

/* Waits for the ready files of the cnt nodes idx[] (a level); fills their ports. */
static int wait_ready(struct topo *t, const int *idx, int cnt, const char *dir)
{
	uint64_t end = lab_now_ns() + READY_TIMEOUT_MS * 1000000ull;
	int left = cnt, k, status;

	while (left) {
		for (k = 0; k < cnt; k++) {
			struct topo_node *n = &t->nodes[idx[k]];
			char path[LAB_PATH_MAX], buf[32];
			FILE *f;

			if (n->port)
				continue;
			if (waitpid(n->pid, &status, WNOHANG) == n->pid) {
				pr_err("node %s exited (%s %d) before it was ready", n->name,
				       WIFSIGNALED(status) ? "signal" : "status",
				       WIFSIGNALED(status) ? WTERMSIG(status)
							   : WEXITSTATUS(status));
				n->pid = 0;
				nodes_print_log(dir, n);
				return -1;
			}
			node_file(path, sizeof(path), dir, n->name, "ready");
			f = fopen(path, "re");
			if (!f)
				continue;
			if (fgets(buf, sizeof(buf), f))
				n->port = atoi(buf);
			fclose(f);
			left -= n->port > 0;
		}
		if (!left)
			break;
		if (lab_interrupted)
			return -1;
		if (lab_now_ns() > end) {
			for (k = 0; k < cnt; k++) {
				if (t->nodes[idx[k]].port)
					continue;
				pr_err("node %s did not say its port within %d s",
				       t->nodes[idx[k]].name, READY_TIMEOUT_MS / 1000);
				nodes_print_log(dir, &t->nodes[idx[k]]);
			}
			return -1;
		}
		lab_sleep_ms(5);
	}
	return 0;
}

int nodes_start(struct topo *t, const struct run_opts *o, const char *dir)
{
	int *idx = calloc(t->n, sizeof(*idx)), d, i, cnt, err = 0;

	if (!idx)
		return -ENOMEM;
	for (d = t->max_depth; d >= 0 && !err; d--) {
		cnt = 0;
		for (i = 0; i < t->n; i++) {
			if (t->nodes[i].depth != d)
				continue;
			t->nodes[i].pid = spawn_node(t, i, o, dir);
			if (t->nodes[i].pid < 0) {
				pr_err("cannot start node %s: %s", t->nodes[i].name,
				       strerror(errno));
				t->nodes[i].pid = 0;
				err = -1;
				break;
			}
			idx[cnt++] = i;
		}
		if (!err)
			err = wait_ready(t, idx, cnt, dir);
	}
	free(idx);
	return err;
}

static struct json_object *read_stats(const char *dir, const struct topo_node *n)
{
	char path[LAB_PATH_MAX];

	node_file(path, sizeof(path), dir, n->name, "stats");
	return json_object_from_file(path);
}

int nodes_stop(struct topo *t, const char *dir, bool want_stats)
{
	uint64_t end = lab_now_ns() + STOP_TIMEOUT_MS * 1000000ull;
	int i, left = 0, err = 0, status;

	for (i = 0; i < t->n; i++) {
		if (t->nodes[i].pid > 0) {
			kill(t->nodes[i].pid, SIGTERM);
			left++;
		}
	}
	while (left) {
		for (i = 0; i < t->n; i++) {
			struct topo_node *n = &t->nodes[i];

			if (n->pid <= 0 || waitpid(n->pid, &status, WNOHANG) != n->pid)
				continue;
			n->pid = 0;
			left--;
			if (want_stats && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
				pr_err("node %s did not exit cleanly", n->name);
				nodes_print_log(dir, n);
				err = -1;
			}
		}
		if (!left || lab_now_ns() > end)
			break;
		lab_sleep_ms(5);
	}
	for (i = 0; i < t->n; i++) {
		struct topo_node *n = &t->nodes[i];

		if (n->pid > 0) {
			pr_err("node %s did not stop within %d s: killed", n->name,
			       STOP_TIMEOUT_MS / 1000);
			kill(n->pid, SIGKILL);
			waitpid(n->pid, NULL, 0);
			n->pid = 0;
			err = -1;
		}
		if (!want_stats)
			continue;
		n->stats = read_stats(dir, n);
		if (!n->stats) {
			pr_err("node %s wrote no stats", n->name);
			err = -1;
		}
	}
	return err;
}

void nodes_remove_files(const struct topo *t, const char *dir)
{
	static const char *const ext[] = { "ready", "stats", "log" };
	char path[LAB_PATH_MAX];
	int i;
	size_t e;

	for (i = 0; i < t->n; i++) {
		for (e = 0; e < sizeof(ext) / sizeof(ext[0]); e++) {
			node_file(path, sizeof(path), dir, t->nodes[i].name, ext[e]);
			unlink(path);
		}
	}
}
