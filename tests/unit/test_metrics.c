// SPDX-License-Identifier: GPL-2.0
/*
 * The graph (user/common/graph.c) and the Prometheus exposition built from it
 * (user/claimd/expose/metrics.c, user/claimd/expose/metrics_text.c), from hand-made edges, services and
 * status: nodes for callees only called, failing and origin services,
 * unclaimed edges and chains; the writer's escaping, names and numbers;
 * every family with HELP and TYPE before its samples, counters ending in
 * _total, the exact samples; and promtool's own linter on the text.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph.h"
#include "harness.h"
#include "expose/metrics.h"
#include "verdict_names.h"
#include "expose/metrics_text.h"
#include "test_progs.h"

#define WALL ((time_t)1700000000)

/* A chain A -> B -> C where C fails on its own and A, B pass it up; X -> C
 * is fail-open; C calls an address off the host. */
static const char edges_text[] =
	"[{\"caller\":\"A\",\"callee\":\"B\",\"calls\":90,\"callee_failures\":30,"
	"\"both_failed\":27,\"retries\":3,\"ratio\":0.9,\"class\":\"fail-close\"},"
	"{\"caller\":\"B\",\"callee\":\"C\",\"calls\":90,\"callee_failures\":30,"
	"\"both_failed\":30,\"retries\":0,\"ratio\":1.0,\"class\":\"fail-close\"},"
	"{\"caller\":\"X\",\"callee\":\"C\",\"calls\":50,\"callee_failures\":25,"
	"\"both_failed\":0,\"retries\":0,\"ratio\":0,\"class\":\"fail-open\"},"
	"{\"caller\":\"C\",\"callee\":\"192.0.2.1:80\",\"calls\":5,\"callee_failures\":0,"
	"\"both_failed\":0,\"retries\":0,\"ratio\":null,\"class\":\"unknown\"}]";
static const char services_text[] =
	"[{\"service\":\"A\",\"requests\":90,\"failures\":27,\"claimed\":0,\"unclaimed\":27,"
	"\"unknown\":0},"
	"{\"service\":\"B\",\"requests\":90,\"failures\":30,\"claimed\":0,\"unclaimed\":30,"
	"\"unknown\":0},"
	"{\"service\":\"C\",\"requests\":140,\"failures\":55,\"claimed\":55,\"unclaimed\":0,"
	"\"unknown\":0},"
	"{\"service\":\"X\",\"requests\":50,\"failures\":0,\"claimed\":0,\"unclaimed\":0,"
	"\"unknown\":0}]";

static struct json_object *make_graph(void)
{
	struct json_object *e = json_tokener_parse(edges_text);
	struct json_object *s = json_tokener_parse(services_text), *g;

	g = graph__build(e, s, WALL);
	json_object_put(e);
	json_object_put(s);
	return g;
}

static struct json_object *find(struct json_object *arr, const char *k1, const char *v1,
				const char *k2, const char *v2)
{
	size_t i;

	for (i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);

		if (!strcmp(j_str(o, k1), v1) && (!k2 || !strcmp(j_str(o, k2), v2)))
			return o;
	}
	return NULL;
}

void test_graph_build(void)
{
	struct json_object *g = make_graph(), *nodes, *edges, *n, *e, *chains, *c;
	char err[128];

	if (!ASSERT_OK_PTR(g, "graph"))
		return;
	ASSERT_OK(graph__check(g, err, sizeof(err)), "its own shape");
	ASSERT_EQ(j_int(g, "version"), GRAPH_VERSION, "version");
	ASSERT_EQ(j_int(g, "generated_unix"), WALL, "time");
	nodes = j_get(g, "nodes");
	edges = j_get(g, "edges");
	ASSERT_EQ(json_object_array_length(nodes), 5, "4 services and a callee");
	ASSERT_STREQ(j_str(json_object_array_get_idx(nodes, 0), "service"), "192.0.2.1:80",
		     "sorted by name");
	n = find(nodes, "service", "192.0.2.1:80", NULL, NULL);
	ASSERT_FALSE(j_bool(n, "seen"), "only called");
	ASSERT_EQ(j_int(n, "requests"), 0, "no requests");
	n = find(nodes, "service", "C", NULL, NULL);
	ASSERT_TRUE(j_bool(n, "failing") && j_bool(n, "origin"), "C claims its failures");
	n = find(nodes, "service", "A", NULL, NULL);
	ASSERT_TRUE(j_bool(n, "failing") && !j_bool(n, "origin"), "A passes them up");
	ASSERT_EQ(j_int(n, "unclaimed"), 27, "counts kept");
	n = find(nodes, "service", "X", NULL, NULL);
	ASSERT_FALSE(j_bool(n, "failing"), "X does not fail");

	ASSERT_EQ(json_object_array_length(edges), 4, "edges");
	e = find(edges, "caller", "A", "callee", "B");
	ASSERT_TRUE(j_bool(e, "unclaimed"), "A -> B on the chain");
	ASSERT_EQ(j_int(e, "retries"), 3, "edge fields kept");
	ASSERT_TRUE(j_bool(find(edges, "caller", "B", "callee", "C"), "unclaimed"), "B -> C");
	ASSERT_FALSE(j_bool(find(edges, "caller", "X", "callee", "C"), "unclaimed"),
		     "fail-open: X survived");
	ASSERT_FALSE(j_bool(find(edges, "caller", "C", "callee", "192.0.2.1:80"), "unclaimed"),
		     "no failures");

	chains = j_get(g, "chains");
	ASSERT_EQ(json_object_array_length(chains), 1, "one chain");
	c = json_object_array_get_idx(chains, 0);
	ASSERT_STREQ(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN),
		     "[\"A\",\"B\",\"C\"]", "top first, down to the origin");
	json_object_put(g);

	g = json_tokener_parse("{\"version\":2,\"nodes\":[],\"edges\":[]}");
	ASSERT_NEQ(graph__check(g, err, sizeof(err)), 0, "another version");
	json_object_put(g);
	g = json_tokener_parse("{\"version\":1,\"nodes\":[{}],\"edges\":[]}");
	ASSERT_NEQ(graph__check(g, err, sizeof(err)), 0, "a node without a name");
	json_object_put(g);
}

void test_graph_chain_cycle(void)
{
	/* A failure that loops: P -> Q -> P, both passing it up. The walk stops. */
	struct json_object *e = json_tokener_parse(
		"[{\"caller\":\"P\",\"callee\":\"Q\",\"calls\":1,\"callee_failures\":1,"
		"\"both_failed\":1},{\"caller\":\"Q\",\"callee\":\"P\",\"calls\":1,"
		"\"callee_failures\":1,\"both_failed\":1},{\"caller\":\"T\",\"callee\":\"P\","
		"\"calls\":1,\"callee_failures\":1,\"both_failed\":1}]");
	struct json_object *s = json_tokener_parse(
		"[{\"service\":\"P\",\"unclaimed\":1},{\"service\":\"Q\",\"unclaimed\":1},"
		"{\"service\":\"T\",\"unclaimed\":1}]");
	struct json_object *g = graph__build(e, s, WALL), *chains = j_get(g, "chains");

	ASSERT_EQ(json_object_array_length(chains), 1, "one chain from T");
	ASSERT_STREQ(json_object_to_json_string_ext(json_object_array_get_idx(chains, 0),
						    JSON_C_TO_STRING_PLAIN),
		     "[\"T\",\"P\",\"Q\"]", "T > P > Q, not round again");
	json_object_put(g);
	json_object_put(e);
	json_object_put(s);
}

void test_metrics_writer(void)
{
	const char *labels[] = { "svc", "a\"b\\c\nd", "bad-label", "x", NULL };
	struct metrics_text w;
	char num[40], *text;
	size_t len = 0;

	metrics_text__init(&w);
	metrics_text__family(&w, "my_metric_total", PROM_COUNTER, "Help with \\ and\nnewline.");
	metrics_text__sample(&w, "my_metric_total", labels, 30);
	metrics_text__family(&w, "9bad name", PROM_GAUGE, "x");
	metrics_text__sample(&w, "9bad name", NULL, 0.9);
	text = metrics_text__finish(&w, &len);
	if (!ASSERT_OK_PTR(text, "text"))
		return;
	printf("%s", text);
	ASSERT_EQ(len, strlen(text), "length");
	ASSERT_OK_PTR(strstr(text, "# HELP my_metric_total Help with \\\\ and\\nnewline.\n"
				   "# TYPE my_metric_total counter\n"),
		      "HELP escaped, then TYPE");
	ASSERT_OK_PTR(strstr(text, "my_metric_total{svc=\"a\\\"b\\\\c\\nd\",bad_label=\"x\"} 30\n"),
		      "label value escaped, label name made valid, integer as such");
	ASSERT_OK_PTR(strstr(text, "# TYPE _bad_name gauge\n_bad_name 0.9\n"),
		      "metric name made valid, shortest number");
	free(text);

	metrics_text__format_value(NAN, num, sizeof(num));
	ASSERT_STREQ(num, "NaN", "NaN");
	metrics_text__format_value(-INFINITY, num, sizeof(num));
	ASSERT_STREQ(num, "-Inf", "-Inf");
	metrics_text__format_value(1e-7, num, sizeof(num));
	ASSERT_STREQ(num, "1e-07", "small");
	metrics_text__format_value(0.1 + 0.2, num, sizeof(num));
	ASSERT_FLOAT_NEAR(strtod(num, NULL), 0.1 + 0.2, 0, "reads back exactly");
	metrics_text__format_value(18446744073709551615.0, num, sizeof(num));
	ASSERT_STREQ(num, "1.8446744073709552e+19", "large: 17 digits to read back");
}

static const char status_text[] =
	"{\"uptime_s\":12.5,\"kernel\":{\"records\":400,\"ringbuf_drops\":2,\"new_thing\":7},"
	"\"records\":{\"ingress\":370,\"egress\":10,\"listen\":4,\"exit\":1,\"invalid\":3},"
	"\"maps\":{\"conns\":{\"entries\":12,\"max_entries\":32768}},\"trace_dropped\":5,"
	"\"trace_clients\":1,\"memory\":{\"loaded_edges\":2,\"persisted_unix\":1699999940,"
	"\"persist_errors\":0}}";

/* Every sample's family has HELP then TYPE first; counters end in _total. */
static void check_families(const char *text)
{
	char *copy = strdup(text), *line, *save = NULL, family[128] = "", type[16] = "";
	int samples = 0, helps = 0;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128];

		if (sscanf(line, "# HELP %127s", name) == 1) {
			snprintf(family, sizeof(family), "%s", name);
			type[0] = 0;
			helps++;
			continue;
		}
		if (sscanf(line, "# TYPE %127s %15s", name, type) == 2) {
			ASSERT_STREQ(name, family, "TYPE right after HELP");
			if (!strcmp(type, "counter"))
				ASSERT_OK_PTR(strstr(name, "_total"), name);
			continue;
		}
		samples++;
		sscanf(line, "%127[^{ ]", name);
		if (!ASSERT_STREQ(name, family, "sample under its family") || !type[0])
			break;
	}
	ASSERT_GT(helps, 20, "families");
	ASSERT_GT(samples, 30, "samples");
	free(copy);
}

static void has(const char *text, const char *line)
{
	char want[256];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(text, want))
		ASSERT_OK_PTR(NULL, line);
}

/* The same edges and services, typed as claimd's snapshot gives them (snapshot.h). */
static struct metrics_model typed_model(struct json_object *edges, struct json_object *services)
{
	static struct metrics_edge me[8];
	static struct metrics_service ms[8];
	/* C listens where other hosts reach it (and on loopback, not exported). */
	static const struct metrics_address ma[] = { { "C", "10.0.3.7:8080" },
						     { "C", "[2001:db8::7]:8080" } };
	struct metrics_model m = { me, 0, ms, 0, ma, 2 };
	size_t i;

	for (i = 0; i < json_object_array_length(edges) && i < 8; i++) {
		struct json_object *e = json_object_array_get_idx(edges, i), *r = j_get(e, "ratio");

		me[i] = (struct metrics_edge){
			.caller = j_str(e, "caller"),
			.callee = j_str(e, "callee"),
			/* an address: no name here (snapshot.c) */
			.callee_address =
				strchr(j_str(e, "callee"), ':') ? j_str(e, "callee") : NULL,
			.calls = j_int(e, "calls"),
			.callee_failures = j_int(e, "callee_failures"),
			.both_failed = j_int(e, "both_failed"),
			.retries = j_int(e, "retries"),
			.ratio = r ? json_object_get_double(r) : NAN,
			.cls = verdict__class_of(j_str(e, "class")),
		};
		m.n_edges++;
	}
	for (i = 0; i < json_object_array_length(services) && i < 8; i++) {
		struct json_object *o = json_object_array_get_idx(services, i);

		ms[i] = (struct metrics_service){
			.name = j_str(o, "service"),
			.requests = j_int(o, "requests"),
			.claimed = j_int(o, "claimed"),
			.unclaimed = j_int(o, "unclaimed"),
			.unknown = j_int(o, "unknown"),
		};
		m.n_services++;
	}
	return m;
}

void test_metrics_render(void)
{
	struct json_object *edges = json_tokener_parse(edges_text);
	struct json_object *services = json_tokener_parse(services_text);
	struct json_object *st = json_tokener_parse(status_text);
	struct metrics_model m = typed_model(edges, services);
	char dir[H_DIR] = "", file[H_PATH], out[8192];
	char *text = metrics__render(&m, st, WALL, NULL);
	const char *argv[] = { "sh", "-c", "promtool check metrics < \"$0\"", file, NULL };

	if (!ASSERT_OK_PTR(text, "render"))
		goto out;
	check_families(text);
	has(text, "claimd_edge_calls_total{caller=\"A\",callee=\"B\"} 90");
	has(text, "claimd_edge_callee_failures_total{caller=\"X\",callee=\"C\"} 25");
	has(text, "claimd_edge_both_failed_total{caller=\"A\",callee=\"B\"} 27");
	has(text, "claimd_edge_retries_total{caller=\"A\",callee=\"B\"} 3");
	has(text, "claimd_edge_ratio{caller=\"A\",callee=\"B\"} 0.9");
	ASSERT_FALSE(strstr(text, "claimd_edge_ratio{caller=\"C\""), "no ratio without failures");
	has(text, "claimd_edge_class{caller=\"A\",callee=\"B\"} 1");
	has(text, "claimd_edge_class{caller=\"X\",callee=\"C\"} 2");
	has(text, "claimd_edge_class{caller=\"C\",callee=\"192.0.2.1:80\","
		  "callee_address=\"192.0.2.1:80\"} 0");
	has(text, "claimd_edge_calls_total{caller=\"C\",callee=\"192.0.2.1:80\","
		  "callee_address=\"192.0.2.1:80\"} 5");
	has(text, "claimd_service_info{service=\"C\",address=\"10.0.3.7:8080\"} 1");
	has(text, "claimd_service_info{service=\"C\",address=\"[2001:db8::7]:8080\"} 1");
	has(text, "claimd_service_requests_total{service=\"C\"} 140");
	ASSERT_FALSE(strstr(text, "service=\"192.0.2.1:80\""), "callee-only: no service series");
	has(text, "claimd_service_failures_total{service=\"C\",verdict=\"claimed\"} 55");
	has(text, "claimd_service_failures_total{service=\"A\",verdict=\"unclaimed\"} 27");
	has(text, "claimd_service_failures_total{service=\"A\",verdict=\"unknown\"} 0");
	has(text, "claimd_records_total{type=\"ingress\"} 370");
	has(text, "claimd_records_malformed_total 3");
	has(text, "claimd_kernel_ringbuf_drops_total 2");
	has(text, "claimd_kernel_new_thing_total 7");
	has(text, "claimd_map_entries{map=\"conns\"} 12");
	has(text, "claimd_map_max_entries{map=\"conns\"} 32768");
	has(text, "claimd_memory_persist_age_seconds 60");
	has(text, "claimd_trace_dropped_total 5");
	ASSERT_EQ(verdict__class_of("fail-open"), CLAIM_CLASS_FAIL_OPEN, "class value");

	if (access("/usr/bin/promtool", X_OK)) {
		test__skip("promtool is not installed (Debian package prometheus)");
		goto out;
	}
	if (!ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "tmpdir"))
		goto out;
	snprintf(file, sizeof(file), "%s/metrics.txt", dir);
	write_file(file, text);
	ASSERT_EQ(proc_run(argv, out, sizeof(out), 20000), 0, "promtool check metrics");
	printf("promtool: %s\n", out[0] ? out : "no complaints");
out:
	free(text);
	json_object_put(edges);
	json_object_put(services);
	json_object_put(st);
	tmpdir_remove(dir);
}
