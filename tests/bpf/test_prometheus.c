// SPDX-License-Identifier: GPL-2.0
/*
 * claimd's metrics in a real Prometheus server, with the shipped rules:
 * - promtool accepts the rules, their unit tests and the example config;
 * - claimd (--metrics on a free port) watches three callers of a service
 *   that fails every third request, failing with it 9, 5 and 1 times in 10
 *   (as in T3); a Prometheus started by the test scrapes claimd every second
 *   and evaluates claimd.rules.yml and claimd.alerts.yml. The fleet ratio
 *   and class of each edge, from the recording rules, must be those of
 *   'claimctl edges --json', and every rule must evaluate without error.
 * The edges first exist with no failures, scraped at zero, so that the
 * 5-minute rates of both counters start from the same sample: then
 * both_failed / callee_failures over the window is exactly the ratio.
 * The verdicts on the failures are T3's, against the truth.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "prom.h"
#include "services.h"
#include "sockets.h"
#include "test_progs.h"

void test_prometheus_rules(void)
{
	char dir[H_PATH - 64], rules[H_PATH], alerts[H_PATH], tests[H_PATH], conf[H_PATH];
	char out[8192];

	if (access("/usr/bin/promtool", X_OK)) {
		ASSERT_OK(-1, "promtool (Debian package prometheus) is installed");
		return;
	}
	prom_rules_dir(dir, sizeof(dir));
	snprintf(rules, sizeof(rules), "%s/claimd.rules.yml", dir);
	snprintf(alerts, sizeof(alerts), "%s/claimd.alerts.yml", dir);
	snprintf(tests, sizeof(tests), "%s/claimd.rules.test.yml", dir);
	snprintf(conf, sizeof(conf), "%s/prometheus.yml", dir);
	{
		const char *argv[] = { "promtool", "check", "rules", rules, alerts, NULL };

		if (!ASSERT_EQ(proc_run(argv, out, sizeof(out), 30000), 0, "promtool check rules"))
			printf("%s", out);
	}
	{
		const char *argv[] = { "promtool", "test", "rules", tests, NULL };

		if (!ASSERT_EQ(proc_run(argv, out, sizeof(out), 30000), 0, "promtool test rules"))
			printf("%s", out);
	}
	{
		const char *argv[] = { "promtool", "check", "config", conf, NULL };

		if (!ASSERT_EQ(proc_run(argv, out, sizeof(out), 30000), 0, "promtool check config"))
			printf("%s", out);
	}
}

static bool has_calls(struct json_object *e, void *ctx)
{
	return j_int(e, "calls") >= *(int *)ctx;
}

static bool has_failures(struct json_object *e, void *ctx)
{
	return j_int(e, "callee_failures") >= *(int *)ctx;
}

static int class_number(const char *cls)
{
	return !strcmp(cls, "fail-close") ? 1 : !strcmp(cls, "fail-open") ? 2 : 0;
}

/* Every rule of every group evaluated, without error. */
static void check_rule_health(int port)
{
	static char out[1 << 18];
	char url[128];
	const char *argv[] = { "curl", "-s", "--max-time", "5", url, NULL };
	struct json_object *o, *groups;
	size_t i, k;
	int rules = 0, ok = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/rules", port);
	if (!ASSERT_EQ(proc_run(argv, out, sizeof(out), 10000), 0, "GET /api/v1/rules"))
		return;
	o = json_tokener_parse(out);
	groups = j_get(j_get(o, "data"), "groups");
	for (i = 0; i < json_object_array_length(groups); i++) {
		struct json_object *rs = j_get(json_object_array_get_idx(groups, i), "rules");

		for (k = 0; k < json_object_array_length(rs); k++) {
			struct json_object *r = json_object_array_get_idx(rs, k);

			rules++;
			if (!strcmp(j_str(r, "health"), "ok"))
				ok++;
			else
				printf("rule %s: health %s: %s\n", j_str(r, "name"),
				       j_str(r, "health"), j_str(r, "lastError"));
		}
	}
	printf("prometheus: %zu rule groups, %d rules, %d healthy\n",
	       json_object_array_length(groups), rules, ok);
	ASSERT_GE(json_object_array_length(groups), 4, "the shipped groups are loaded");
	ASSERT_EQ(ok, rules, "every rule evaluates");
	json_object_put(o);
}

void test_prometheus(void)
{
	char port_s[32], q[256], path[32];
	const char *extra[] = { "--metrics", port_s, NULL };
	const char *targets[] = { port_s, NULL };
	struct prom_h prom = { 0 };
	struct svc t = { 0 }, s[3] = { 0 };
	struct claimd_h h = { 0 };
	struct trace_cap tc = { 0 };
	struct json_object *st = NULL;
	int metrics_port, prom_port, i, id, two = 2, thirty = 30;

	if (!test__need_root())
		return;
	if (access(PROMETHEUS, X_OK)) {
		ASSERT_OK(-1, PROMETHEUS " (Debian package prometheus) is installed");
		return;
	}
	metrics_port = sock_free_port();
	snprintf(port_s, sizeof(port_s), "127.0.0.1:%d", metrics_port);
	if (!ASSERT_OK(claimd_start(&h, extra), "claimd start") ||
	    !ASSERT_OK(trace_start(&tc, &h), "trace"))
		goto out;
	st = claimctl_json(&h, (const char *const[]){ "status", NULL });
	snprintf(q, sizeof(q), "http://127.0.0.1:%d/", metrics_port);
	ASSERT_STREQ(j_str(st, "metrics"), q, "status tells the metrics address");
	ASSERT_OK_PTR(j_get(j_get(st, "maps"), "conns"), "status has the map fill");

	if (svc_t3_start(&t, s, "p", h.dir))
		goto out;
	for (i = 0; i < 3; i++) {
		/* Requests 1000 and 1001: pT does not fail them. The edge exists. */
		ASSERT_EQ(http_get(s[i].port, "/r/1000"), 200, "warm-up");
		ASSERT_EQ(http_get(s[i].port, "/r/1001"), 200, "warm-up");
	}
	for (i = 0; i < 3; i++) {
		struct json_object *e =
			claimd_wait_edge(&h, s[i].name, "pT", has_calls, &two, 10000);

		ASSERT_OK_PTR(e, "edge seen");
		json_object_put(e);
	}

	if (!ASSERT_OK(prom_start(&prom, h.dir, targets), "start prometheus"))
		goto out;
	prom_port = prom.port;
	/* Scraped with no failures yet: the rates start from zero. */
	for (i = 0; i < 3; i++) {
		snprintf(q, sizeof(q),
			 "claimd_edge_callee_failures_total{caller=\"%s\",callee=\"pT\"}",
			 s[i].name);
		if (!ASSERT_TRUE(prom_wait(prom_port, q, 0, 30000), "scraped at zero"))
			goto out;
	}
	ASSERT_EQ(prom_value(prom_port, "up{job=\"claimd\"}"), 1, "claimd is up");

	/* pT fails every third request: 30 failures in 90 calls from each caller. */
	for (i = 0; i < 3; i++)
		for (id = 0; id < 90; id++) {
			snprintf(path, sizeof(path), "/r/%d", id);
			http_get(s[i].port, path);
		}
	for (i = 0; i < 3; i++) {
		struct json_object *e =
			claimd_wait_edge(&h, s[i].name, "pT", has_failures, &thirty, 10000);
		double ratio, class;

		if (!ASSERT_OK_PTR(e, s[i].name))
			continue;
		snprintf(q, sizeof(q),
			 "claimd_edge_callee_failures_total{caller=\"%s\",callee=\"pT\"}",
			 s[i].name);
		ASSERT_TRUE(prom_wait(prom_port, q, j_int(e, "callee_failures"), 15000),
			    "the last scrape has every failure");
		snprintf(q, sizeof(q), "claimd_edge_both_failed_total{caller=\"%s\",callee=\"pT\"}",
			 s[i].name);
		ASSERT_TRUE(prom_wait(prom_port, q, j_int(e, "both_failed"), 15000),
			    "and every failure of both");
		sleep_ms(2500); /* two rule evaluations after that scrape */
		snprintf(q, sizeof(q), "claimd:edge_ratio:rate5m{caller=\"%s\",callee=\"pT\"}",
			 s[i].name);
		ratio = prom_value(prom_port, q);
		snprintf(q, sizeof(q), "claimd:edge_class:rate5m{caller=\"%s\",callee=\"pT\"}",
			 s[i].name);
		class = prom_value(prom_port, q);
		printf("%s -> pT: claimctl ratio %.4f %s; prometheus ratio %.4f class %g\n",
		       s[i].name, json_object_get_double(j_get(e, "ratio")), j_str(e, "class"),
		       ratio, class);
		ASSERT_FLOAT_NEAR(ratio, json_object_get_double(j_get(e, "ratio")), 1e-9,
				  "fleet ratio == claimd's");
		ASSERT_EQ((int)class, class_number(j_str(e, "class")), "fleet class == claimd's");
		ASSERT_EQ((int)class,
			  i == 0   ? 1
			  : i == 1 ? 0
				   : 2,
			  "fail-close, unknown, fail-open");
		json_object_put(e);
	}
	svc_t3_verdicts(&tc, 0, &t, s, "T3 (prometheus)");
	snprintf(q, sizeof(q), "claimd_service_failures_total{service=\"pT\",verdict=\"claimed\"}");
	ASSERT_EQ(prom_value(prom_port, q), 90, "pT claims its 90 failures");
	ASSERT_GT(prom_value(prom_port, "claimd_records_total{type=\"ingress\"}"), 500,
		  "records by type");
	check_rule_health(prom_port);
out:
	prom_stop(&prom, test__failed_now());
	if (test__failed_now())
		claimd_print_log(&h);
	json_object_put(st);
	for (i = 0; i < 3; i++)
		svc_stop(&s[i]);
	svc_stop(&t);
	trace_stop(&tc);
	claimd_stop(&h);
	tmpdir_remove(h.dir);
}
