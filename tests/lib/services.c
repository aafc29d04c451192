// SPDX-License-Identifier: GPL-2.0
/* Test services and a plain GET; see services.h. */
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

int svc_start(struct svc *s, const struct svc_spec *spec, const char *dir)
{
	char script[H_PATH], ready[H_PATH], log[H_PATH], env[64], down[32], mod[16], rem[16];
	char prop[16], buf[32], delay[16], fstatus[16], dfrom[16];
	const char *argv[28] = { "python3", script, "--ready-file", ready };
	const char *envv[] = { env, NULL };
	int n = 4;

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", spec->name);
	peer_script("chain_service.py", script, sizeof(script));
	snprintf(ready, sizeof(ready), "%s/ready.%s", dir, spec->name);
	snprintf(log, sizeof(log), "%s/svc.%s.log", dir, spec->name);
	snprintf(env, sizeof(env), "CLAIMD_SERVICE=%s", spec->name);
	unlink(ready);
	if (spec->downstream) {
		snprintf(down, sizeof(down), "127.0.0.1:%d", spec->downstream);
		argv[n++] = "--downstream";
		argv[n++] = down;
	}
	if (spec->fail_mod) {
		snprintf(mod, sizeof(mod), "%d", spec->fail_mod);
		snprintf(rem, sizeof(rem), "%d", spec->fail_rem);
		argv[n++] = "--fail-mod";
		argv[n++] = mod;
		argv[n++] = "--fail-rem";
		argv[n++] = rem;
	}
	if (spec->fail_after)
		argv[n++] = "--fail-after";
	if (spec->fail_status) {
		snprintf(fstatus, sizeof(fstatus), "%d", spec->fail_status);
		argv[n++] = "--fail-status";
		argv[n++] = fstatus;
	}
	if (spec->down_fail_from) {
		snprintf(dfrom, sizeof(dfrom), "%d", spec->down_fail_from);
		argv[n++] = "--down-fail-from";
		argv[n++] = dfrom;
	}
	if (spec->set_propagate) {
		snprintf(prop, sizeof(prop), "%.2f", spec->propagate);
		argv[n++] = "--propagate";
		argv[n++] = prop;
	}
	if (spec->keepalive)
		argv[n++] = "--keepalive";
	if (spec->fastopen)
		argv[n++] = "--fastopen";
	if (spec->handoff)
		argv[n++] = "--handoff";
	if (spec->spawn)
		argv[n++] = "--spawn";
	if (spec->bind) {
		argv[n++] = "--bind";
		argv[n++] = spec->bind;
	}
	if (spec->delay_ms) {
		snprintf(delay, sizeof(delay), "%d", spec->delay_ms);
		argv[n++] = "--delay-ms";
		argv[n++] = delay;
	}
	argv[n] = NULL;
	s->pid = spec->ns ? netns_spawn(spec->ns, argv, envv, log) : proc_spawn(argv, envv, log);
	if (s->pid <= 0 || wait_file(ready, 10000) || read_file(ready, buf, sizeof(buf)) <= 0) {
		printf("service %s did not start (log %s)\n", spec->name, log);
		return -1;
	}
	s->port = atoi(buf);
	return 0;
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
	s->pid = 0;
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
