// SPDX-License-Identifier: GPL-2.0
/* Test services and a plain GET; see services.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "netns.h"
#include "services.h"
#include "sockets.h"
#include "test_progs.h"
#include "truth.h"

/* chain_service.py's command line, an option at a time; the words printed are kept here. */
#define SVC_ARGS  40 /* with the NULL that ends them */
#define SVC_WORDS 12

struct svc_cmd {
	const char *argv[SVC_ARGS];
	/* A socket file's path fits, and a certificate's with its key's. */
	char words[SVC_WORDS][256];
	int n, w;
};

static void cmd_flag(struct svc_cmd *c, bool on, const char *opt)
{
	if (on && c->n < SVC_ARGS - 1)
		c->argv[c->n++] = opt;
}

/* opt with its value printed as fmt says. */
static void cmd_opt(struct svc_cmd *c, const char *opt, const char *fmt, ...)
{
	va_list ap;

	if (c->n >= SVC_ARGS - 2 || c->w >= SVC_WORDS)
		return;
	va_start(ap, fmt);
	vsnprintf(c->words[c->w], sizeof(c->words[c->w]), fmt, ap);
	va_end(ap);
	c->argv[c->n++] = opt;
	c->argv[c->n++] = c->words[c->w++];
}

/* opt with a number, where the number is set. */
static void cmd_int(struct svc_cmd *c, const char *opt, int value)
{
	if (value)
		cmd_opt(c, opt, "%d", value);
}

/* Where service name writes its port (ready), and its launcher its pid. */
static void svc_files(const char *dir, const char *name, char *ready, char *pidfile)
{
	snprintf(ready, H_PATH, "%s/ready.%s", dir, name);
	snprintf(pidfile, H_PATH, "%s/pid.%s", dir, name);
}

int svc_spawn(struct svc *s, const struct svc_spec *spec, const char *dir)
{
	char script[H_PATH], ready[H_PATH], log[H_PATH], env[64], pidfile[H_PATH];
	struct svc_cmd c = { .argv = { "python3", script, "--ready-file", ready }, .n = 4 };
	/* Launched: a shell starts it, writes its pid and waits for it, as a launcher script does. */
	struct svc_cmd l = { .argv = { "sh", "-c", "f=$1; shift; \"$@\" & echo $! > \"$f\"; wait",
				       "sh", pidfile, "python3", script, "--ready-file", ready },
			     .n = 9 };
	/* ... or, once a file is there, as a daemon: forked twice, its parent gone at once. */
	struct svc_cmd d = { .argv = { "sh", "-c",
				       "f=$1; g=$2; shift 2; while [ ! -e \"$g\" ]; do sleep 0.05; "
				       "done; (\"$@\" & echo $! > \"$f\")",
				       "sh", pidfile, spec->daemon_after, "python3", script,
				       "--ready-file", ready },
			     .n = 10 };
	struct svc_cmd *cmd = spec->daemon_after ? &d : spec->launched ? &l : &c;
	const char *envv[] = { env, NULL };

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", spec->name);
	peer_script("chain_service.py", script, sizeof(script));
	svc_files(dir, spec->name, ready, pidfile);
	snprintf(log, sizeof(log), "%s/svc.%s.log", dir, spec->name);
	snprintf(env, sizeof(env), "CLAIMD_SERVICE=%s", spec->name);
	unlink(ready);
	unlink(pidfile);
	if (spec->downstream)
		cmd_opt(cmd, "--downstream", "%s:%d", spec->down_host ?: "127.0.0.1",
			spec->downstream);
	if (spec->down_unix)
		cmd_opt(cmd, "--downstream", "unix:%s", spec->down_unix);
	if (spec->fail_mod) {
		cmd_int(cmd, "--fail-mod", spec->fail_mod);
		cmd_opt(cmd, "--fail-rem", "%d", spec->fail_rem);
	}
	cmd_flag(cmd, spec->fail_after, "--fail-after");
	cmd_int(cmd, "--fail-status", spec->fail_status);
	cmd_int(cmd, "--down-fail-from", spec->down_fail_from);
	if (spec->set_propagate)
		cmd_opt(cmd, "--propagate", "%.2f", spec->propagate);
	cmd_flag(cmd, spec->keepalive, "--keepalive");
	cmd_flag(cmd, spec->down_fresh, "--down-fresh");
	cmd_flag(cmd, spec->fastopen, "--fastopen");
	cmd_flag(cmd, spec->handoff, "--handoff");
	cmd_flag(cmd, spec->spawn, "--spawn");
	cmd_int(cmd, "--slow-ms", spec->slow_ms);
	cmd_int(cmd, "--down-timeout-ms", spec->down_timeout_ms);
	cmd_flag(cmd, spec->kv_store, "--kv-store");
	if (spec->kv)
		cmd_opt(cmd, "--kv", "127.0.0.1:%d", spec->kv);
	if (spec->kv_unix)
		cmd_opt(cmd, "--kv", "unix:%s", spec->kv_unix);
	if (spec->bind)
		cmd_opt(cmd, "--bind", "%s", spec->bind);
	cmd_int(cmd, "--port", spec->port);
	if (spec->probe_socket)
		cmd_opt(cmd, "--probe-socket", "%s", spec->probe_socket);
	cmd_int(cmd, "--delay-ms", spec->delay_ms);
	if (spec->tls)
		cmd_opt(cmd, "--tls", "%s", spec->tls);
	if (spec->down_tls)
		cmd_opt(cmd, "--downstream-tls", "%s", spec->down_tls);
	cmd->argv[cmd->n] = NULL;
	s->pid = spec->ns ? netns_spawn(spec->ns, cmd->argv, envv, log)
			  : proc_spawn(cmd->argv, envv, log);
	if (s->pid <= 0) {
		printf("service %s did not start (log %s)\n", spec->name, log);
		return -1;
	}
	return 0;
}

int svc_ready(struct svc *s, const struct svc_spec *spec, const char *dir)
{
	char ready[H_PATH], pidfile[H_PATH], buf[32];

	svc_files(dir, spec->name, ready, pidfile);
	if (wait_file(ready, 10000) || read_file(ready, buf, sizeof(buf)) <= 0) {
		printf("service %s did not start (log %s/svc.%s.log)\n", spec->name, dir,
		       spec->name);
		return -1;
	}
	s->port = atoi(buf);
	if (spec->launched || spec->daemon_after) {
		s->launcher = s->pid;
		s->pid = read_file(pidfile, buf, sizeof(buf)) > 0 ? atoi(buf) : 0;
		if (s->pid <= 0) {
			printf("service %s: no pid from its launcher (%s)\n", spec->name, pidfile);
			return -1;
		}
	}
	return 0;
}

int svc_start(struct svc *s, const struct svc_spec *spec, const char *dir)
{
	return svc_spawn(s, spec, dir) || svc_ready(s, spec, dir) ? -1 : 0;
}

const double svc_t3_propagate[3] = { 0.9, 0.5, 0.1 };

int svc_t3_start(struct svc *t, struct svc s[3], const char *prefix, const char *dir)
{
	char name[32];
	int i;

	snprintf(name, sizeof(name), "%sT", prefix);
	if (svc_start(t, &(struct svc_spec){ .name = name, .fail_mod = 3 }, dir))
		return -1;
	for (i = 0; i < 3; i++) {
		struct svc_spec spec = { .name = name,
					 .downstream = t->port,
					 .propagate = svc_t3_propagate[i],
					 .set_propagate = true };

		/* svc_start copies the name: one buffer serves all four. */
		snprintf(name, sizeof(name), "%sS%.0f", prefix, svc_t3_propagate[i] * 100);
		if (svc_start(&s[i], &spec, dir))
			return -1;
	}
	return 0;
}

void svc_t3_verdicts(const struct trace_cap *tc, size_t from, const struct svc *t,
		     const struct svc s[3], const char *what)
{
	const struct truth_svc shape = { .target = "/r/%d", .ids = 90, .mod = 3 };
	struct truth_svc truth[4] = { shape, shape, shape, shape };
	struct truth_tally tally = { 0 };
	char name[128];
	int i, failures = 0;

	truth[0].pid = t->pid;
	truth[0].service = t->name;
	truth[0].verdict = "claimed";
	truth[0].cause = "";
	for (i = 0; i < 3; i++) {
		/* T's 30 failures, the first P*10 of every 10 passed up. */
		failures += 30 + 3 * (int)(svc_t3_propagate[i] * 10 + 0.5);
		truth[i + 1].pid = s[i].pid;
		truth[i + 1].service = s[i].name;
		truth[i + 1].verdict = "unclaimed";
		truth[i + 1].cause = t->name;
		truth[i + 1].fail_open_cost = svc_t3_propagate[i] <= 0.2;
	}
	truth__tally_trace(&tally, tc, from, truth, 4, failures);
	truth__expect(&tally, what, failures, 0);
	/* Only T's 21st failure comes once S10 -> T can be fail-open. */
	snprintf(name, sizeof(name), "%s: the matrix's known cost, T's 21st failure at most", what);
	ASSERT_LE(tally.matrix_cost, 1, name);
}

void svc_stop(struct svc *s)
{
	if (s->pid > 0)
		proc_stop(s->pid, 2000);
	/* Its launcher, if still there, leaves once its wait ends. */
	if (s->launcher > 0)
		proc_stop(s->launcher, 2000);
	s->pid = 0;
	s->launcher = 0;
}

#define JAVA_START 30000 /* ms: a cold JVM on a loaded machine */

pid_t java_front_start(int *port, int backend, const char *ca, const char *name, const char *log)
{
	char cp[H_PATH], p[16], b[16], env[64];
	const char *argv[] = { "java", "-Xshare:auto", "-cp", cp, "ChainFront", p, b, ca, NULL };
	const char *envv[] = { env, NULL };
	pid_t pid;

	*port = sock_free_port();
	snprintf(cp, sizeof(cp), "%s/tests/java", test__build_dir());
	snprintf(p, sizeof(p), "%d", *port);
	snprintf(b, sizeof(b), "%d", backend);
	snprintf(env, sizeof(env), "CLAIMD_SERVICE=%s", name);
	pid = proc_spawn(argv, envv, log);
	if (pid <= 0)
		return -1;
	if (!sock_wait_listening(*port, JAVA_START))
		return pid;
	printf("the Java service did not start (log %s)\n", log);
	proc_stop(pid, 1000);
	return -1;
}

int http_get(int port, const char *path)
{
	char req[256], resp[4096];
	int fd = sock_connect(port), status = -1;

	if (fd < 0)
		return -1;
	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
	if (!sock_send(fd, req) && sock_recv_until(fd, resp, sizeof(resp), "\r\n\r\n", 4096) > 12 &&
	    !strncmp(resp, "HTTP/1.", 7))
		status = atoi(resp + 9);
	close(fd);
	return status;
}

int svc_drive(int port, int n)
{
	int i, failed = 0;

	for (i = 0; i < n; i++) {
		char path[32];
		int status;

		snprintf(path, sizeof(path), "/r/%d", i);
		status = http_get(port, path);
		failed += status < 200 || status >= 500;
	}
	return failed;
}

int load_client_run(const char *dir, int port, int threads, int requests, const char *tls,
		    int *status, int n)
{
	return load_client_run_with(dir, port, threads, requests, tls, NULL, status, n);
}

pid_t load_client_start(const char *dir, int port, int threads, int requests, const char *tls,
			const char *const extra[])
{
	char script[H_PATH], p[16], t[16], r[16], out[H_PATH];
	const char *argv[24] = { "python3",    script, "--port", p,   "--threads", t,
				 "--requests", r,      "--out",	 out, NULL };
	pid_t pid;
	int a = 10;

	peer_script("load_client.py", script, sizeof(script));
	snprintf(p, sizeof(p), "%d", port);
	snprintf(t, sizeof(t), "%d", threads);
	snprintf(r, sizeof(r), "%d", requests);
	snprintf(out, sizeof(out), "%s/client.json", dir);
	unlink(out);
	if (tls) {
		argv[a++] = "--tls";
		argv[a++] = tls;
	}
	for (; extra && *extra && a < 23; extra++)
		argv[a++] = *extra;
	argv[a] = NULL;
	pid = proc_spawn(argv, NULL, NULL);
	ASSERT_GT(pid, 0, "client");
	return pid;
}

int load_client_finish(pid_t pid, const char *dir, int sent, int *status, int n)
{
	static char buf[1 << 20];
	struct json_object *summary, *statuses;
	char out[H_PATH];
	int st, id;

	if (pid <= 0)
		return -1;
	snprintf(out, sizeof(out), "%s/client.json", dir);
	st = proc_wait(pid, 120000);
	if (st == -1)
		proc_stop(pid, 1000);
	if (!ASSERT_EQ(st, 0, "client finished") ||
	    !ASSERT_GT(read_file(out, buf, sizeof(buf)), 0, "client summary"))
		return -1;
	summary = json_tokener_parse(buf);
	statuses = j_get(summary, "statuses");
	for (id = 0; id < n; id++) {
		char key[16];

		snprintf(key, sizeof(key), "%d", id);
		status[id] = j_int(statuses, key);
	}
	ASSERT_EQ(j_int(summary, "sent"), sent, "client: requests sent");
	json_object_put(summary);
	return 0;
}

int load_client_run_with(const char *dir, int port, int threads, int requests, const char *tls,
			 const char *const extra[], int *status, int n)
{
	pid_t pid = load_client_start(dir, port, threads, requests, tls, extra);

	return load_client_finish(pid, dir, threads * requests, status, n);
}

int svc_backend_session_start(struct claimd_h *h, struct trace_cap *t, struct svc *back,
			      const char *name, int fail_mod)
{
	if (claimd_traced_start(h, t, NULL))
		return -1;
	return ASSERT_OK(svc_start(back,
				   &(struct svc_spec){
					   .name = name, .fail_mod = fail_mod, .keepalive = true },
				   h->dir),
			 "backend")
		       ? 0
		       : -1;
}

void svc_backend_session_stop(struct claimd_h *h, struct trace_cap *t, struct svc *back)
{
	svc_stop(back);
	claimd_traced_stop(h, t);
}
