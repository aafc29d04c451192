// SPDX-License-Identifier: GPL-2.0
/*
 * --fail-status, end to end: claimd started with --fail-status 400, a
 * service fsB answering 404 to every request, called by fsF (which passes
 * a failed call up as 502, judging failures from 400 up as claimd does),
 * 20 requests. The kernel judges each 404 (it applies fail_status_min);
 * what is checked here is that every reader of claimd agrees with it:
 * 'claimctl trace --json' (20 of fsB's ingresses "failed" with a verdict,
 * claimed; fsF's 20 failed, unclaimed, their call to fsB failed),
 * 'claimctl services --json' (failures and verdicts) and /metrics
 * (claimd_service_failures_total by verdict, the edge's callee failures).
 * Before the rule lived in one place, the trace said "failed": false for
 * every 404 (a hard-coded 500). Then, the trace stopped, 20 more requests:
 * counted all the same, read from the counters that changed, and no record
 * leaves the kernel for them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "services.h"
#include "sockets.h"
#include "test_progs.h"
#include "truth.h"

#define REQUESTS 20
#define BACKEND	 "fsB"
#define FRONT	 "fsF"

struct fs_seen {
	int lines, failed, judged, right;
};

/* One service's ingresses: failed, judged (a verdict), and judged as want. */
static struct fs_seen trace_count(struct json_object *all, pid_t pid, int status, const char *want)
{
	struct fs_seen s = { 0 };
	size_t i;

	for (i = 0; i < json_object_array_length(all); i++) {
		struct json_object *o = json_object_array_get_idx(all, i), *eg;
		const char *v;

		if (!trace_is_ingress_of(o, &pid) || j_int(o, "status") != status)
			continue;
		s.lines++;
		s.failed += j_bool(o, "failed");
		v = j_str(o, "verdict");
		s.judged += *v && strcmp(v, "none");
		eg = j_get(o, "egress");
		/* fsF's call must show failed too; fsB makes none. */
		if (json_object_array_length(eg) &&
		    !j_bool(json_object_array_get_idx(eg, 0), "failed"))
			continue;
		s.right += !strcmp(v, want);
	}
	return s;
}

static struct json_object *service_row(struct json_object *rows, const char *name)
{
	size_t i;

	for (i = 0; i < json_object_array_length(rows); i++)
		if (!strcmp(j_str(json_object_array_get_idx(rows, i), "service"), name))
			return json_object_array_get_idx(rows, i);
	return NULL;
}

/* Polls 'claimctl services --json' until name has n requests; its row's
 * failures and count of verdict, or -1s. */
static void services_wait(const struct claimd_h *h, const char *name, const char *verdict,
			  long long *failures, long long *count)
{
	const char *args[] = { "services", NULL };
	long long end = now_ms() + 10000;

	*failures = *count = -1;
	while (now_ms() < end) {
		struct json_object *rows = claimctl_json(h, args);
		struct json_object *row = service_row(rows, name);

		if (row && j_int(row, "requests") >= REQUESTS) {
			*failures = j_int(row, "failures");
			*count = j_int(row, verdict);
			json_object_put(rows);
			return;
		}
		json_object_put(rows);
		sleep_ms(200);
	}
}

/* The value of the series named exactly s on /metrics, polled (refreshed
 * once a second) until it is want; the last value seen, -1 when absent. */
static double metric_wait(int port, const char *s, double want)
{
	static char text[1 << 20];
	char url[96];
	const char *argv[] = { "curl", "-s", "--max-time", "5", url, NULL };
	long long end = now_ms() + 8000;
	double v = -1;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
	do {
		const char *p = text;
		size_t n = strlen(s);

		v = -1;
		if (proc_run(argv, text, sizeof(text), 10000) == 0)
			for (; (p = strstr(p, s)); p += n)
				if ((p == text || p[-1] == '\n') && p[n] == ' ')
					v = atof(p + n + 1);
		if (v == want)
			break;
		sleep_ms(250);
	} while (now_ms() < end);
	return v;
}

static void check_metrics(int mport)
{
	static const struct {
		const char *series;
	} rows[] = {
		{ "claimd_service_failures_total{service=\"" BACKEND "\",verdict=\"claimed\"}" },
		{ "claimd_service_failures_total{service=\"" FRONT "\",verdict=\"unclaimed\"}" },
		{ "claimd_edge_callee_failures_total{caller=\"" FRONT "\",callee=\"" BACKEND
		  "\"}" },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double v = metric_wait(mport, rows[i].series, REQUESTS);

		printf("metrics: %s %g\n", rows[i].series, v);
		ASSERT_EQ((long long)v, REQUESTS, rows[i].series);
	}
}

/* A service's count (claimctl services: "requests", or a verdict), -1 when it has no row. */
static long long count_of(const struct claimd_h *h, const char *name, const char *what)
{
	const char *args[] = { "services", NULL };
	struct json_object *rows = claimctl_json(h, args), *row = service_row(rows, name);
	long long n = row ? j_int(row, what) : -1;

	json_object_put(rows);
	return n;
}

/*
 * Nobody tracing any more: the kernel sends no request's record, and still
 * counts every request (claimd reads its counters when asked).
 */
static void untraced(const struct claimd_h *h, const struct svc *f)
{
	const char *args[] = { "status", NULL };
	struct json_object *st0, *st1;
	long long before = count_of(h, FRONT, "requests"), after;
	long long unclaimed0 = count_of(h, FRONT, "unclaimed");
	long long claimed0 = count_of(h, BACKEND, "claimed");
	long long failures0 = count_of(h, FRONT, "failures") + count_of(h, BACKEND, "failures");
	long long unknown0 = count_of(h, FRONT, "unknown") + count_of(h, BACKEND, "unknown");
	struct truth_tally tally = { 0 };
	int i, answered = 0;

	/* trace_stop returned once claimd saw its client go: no record is made now. */
	ASSERT_EQ(claimd_trace_clients(h), 0, "untraced: no trace client left");
	st0 = claimctl_json(h, args);
	for (i = 0; i < REQUESTS; i++)
		answered += http_get(f->port, "/untraced") == 502;
	after = count_of(h, FRONT, "requests");
	st1 = claimctl_json(h, args);
	/*
	 * The truth: fsB's 404s are its own, fsF passed each up. With no record,
	 * the verdicts are read from the kernel's counts: each failure either
	 * the verdict the truth says, unknown, or else wrong.
	 */
	tally.right = (count_of(h, FRONT, "unclaimed") - unclaimed0) +
		      (count_of(h, BACKEND, "claimed") - claimed0);
	tally.unknown = count_of(h, FRONT, "unknown") + count_of(h, BACKEND, "unknown") - unknown0;
	tally.wrong = count_of(h, FRONT, "failures") + count_of(h, BACKEND, "failures") -
		      failures0 - tally.right - tally.unknown;
	truth__expect(&tally, "untraced", 2 * REQUESTS, 0);
	printf("untraced: %lld requests counted, %lld ingress records\n", after - before,
	       j_int(j_get(st1, "records"), "ingress") - j_int(j_get(st0, "records"), "ingress"));
	ASSERT_EQ(answered, REQUESTS, "untraced: client answered");
	ASSERT_EQ(after - before, REQUESTS, "untraced: every request counted");
	ASSERT_EQ(j_int(j_get(st1, "records"), "ingress"), j_int(j_get(st0, "records"), "ingress"),
		  "untraced: no ingress record");
	/* Read from the counters that changed (the dirty lists), not all of them. */
	ASSERT_GT(j_int(j_get(st1, "counter_reads"), "changed_reads"),
		  j_int(j_get(st0, "counter_reads"), "changed_reads"),
		  "untraced: counts read from what changed");
	json_object_put(st0);
	json_object_put(st1);
}

static void run(struct claimd_h *h, int mport, const struct svc *b, const struct svc *f)
{
	struct trace_cap t = { 0 };
	struct json_object *all = NULL;
	struct fs_seen sb, sf;
	long long failures, count;
	pid_t fpid = f->pid;
	int i, answered = 0;

	if (!ASSERT_OK(trace_start(&t, h), "trace"))
		return;
	for (i = 0; i < REQUESTS; i++) {
		char path[32];

		snprintf(path, sizeof(path), "/r/%d", i);
		answered += http_get(f->port, path) == 502;
	}
	ASSERT_EQ(answered, REQUESTS, "client: 502 each (fsB's 404 passed up)");
	ASSERT_GE(trace_wait(&t, trace_is_ingress_of, &fpid, REQUESTS, 10000), REQUESTS,
		  "fsF's ingresses traced");
	all = trace_read(&t);
	sb = trace_count(all, b->pid, 404, "claimed");
	sf = trace_count(all, f->pid, 502, "unclaimed");
	printf("trace %s: %d ingresses (404), %d failed, %d with a verdict, %d claimed\n", BACKEND,
	       sb.lines, sb.failed, sb.judged, sb.right);
	printf("trace %s: %d ingresses (502), %d failed, %d with a verdict, %d unclaimed\n", FRONT,
	       sf.lines, sf.failed, sf.judged, sf.right);
	ASSERT_EQ(sb.lines, REQUESTS, "trace: fsB's 404s");
	ASSERT_EQ(sb.failed, REQUESTS, "trace: fsB's 404s failed");
	ASSERT_EQ(sb.judged, REQUESTS, "trace: fsB's 404s with a verdict");
	ASSERT_EQ(sb.right, REQUESTS, "trace: fsB's 404s claimed");
	ASSERT_EQ(sf.failed, REQUESTS, "trace: fsF's 502s failed");
	ASSERT_EQ(sf.right, REQUESTS, "trace: fsF's 502s unclaimed, their call failed");

	services_wait(h, BACKEND, "claimed", &failures, &count);
	printf("services %s: failures %lld, claimed %lld\n", BACKEND, failures, count);
	ASSERT_EQ(failures, REQUESTS, "services: fsB's failures");
	ASSERT_EQ(count, REQUESTS, "services: fsB claimed");
	services_wait(h, FRONT, "unclaimed", &failures, &count);
	printf("services %s: failures %lld, unclaimed %lld\n", FRONT, failures, count);
	ASSERT_EQ(failures, REQUESTS, "services: fsF's failures");
	ASSERT_EQ(count, REQUESTS, "services: fsF unclaimed");

	check_metrics(mport);
	json_object_put(all);
	trace_stop(&t);
	untraced(h, f);
}

void test_fail_status(void)
{
	char mport_s[32];
	const char *extra[] = { "--fail-status", "400", "--metrics", mport_s, NULL };
	struct claimd_h h = { 0 };
	struct svc b = { 0 }, f = { 0 };
	int mport;

	if (!test__need_root())
		return;
	if (!ASSERT_OK(tmpdir_make(h.dir, sizeof(h.dir)), "tmpdir"))
		return;
	mport = sock_free_port();
	snprintf(mport_s, sizeof(mport_s), "127.0.0.1:%d", mport);
	if (!ASSERT_OK(svc_start(&b,
				 &(struct svc_spec){
					 .name = BACKEND, .fail_mod = 1, .fail_status = 404 },
				 h.dir),
		       "fsB starts") ||
	    !ASSERT_OK(svc_start(&f,
				 &(struct svc_spec){ .name = FRONT,
						     .downstream = b.port,
						     .down_fail_from = 400 },
				 h.dir),
		       "fsF starts"))
		goto out;
	if (!ASSERT_OK(claimd_start(&h, extra), "claimd --fail-status 400"))
		goto out;
	run(&h, mport, &b, &f);
out:
	if (test__failed_now())
		claimd_print_log(&h);
	claimd_stop(&h);
	svc_stop(&f);
	svc_stop(&b);
	tmpdir_remove(h.dir);
}
