// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet's graph, read from Prometheus for 'claimctl graph, storm, top
 * --prometheus URL': every host's edges summed by name (the callee named by
 * its own host) and every host's services, through the recording rules of
 * scripts/prometheus/claimd.rules.yml, in the shape of graph.h, so that a
 * storm's radius is computed across hosts. An edge with no both_failed
 * series anywhere is a root caller's (claimd exports none for those).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "claimctl.h"
#include "graph.h"
#include "log.h"
#include "promql.h"
#include "verdict_names.h"

#define PROM_TIMEOUT_MS 5000

/* The edges' fields, each from the fleet-wide record that sums it: the
 * counts first. */
#define N_COUNTS 4
static const struct {
	const char *field, *query;
} edge_counts[] = {
	{ "calls", "claimd:edge_calls:total" },
	{ "callee_failures", "claimd:edge_callee_failures:total" },
	{ "both_failed", "claimd:edge_both_failed:total" },
	{ "retries", "claimd:edge_retries:total" },
	{ "ratio", "claimd:edge_ratio:rate5m" },
	{ "class", "claimd:edge_class:rate5m" },
};

static struct json_object *query(const char *url, const char *q)
{
	char err[256];
	struct json_object *r = promql__query(url, q, PROM_TIMEOUT_MS, err, sizeof(err));

	if (!r)
		pr_err("prometheus %s: %s: %s", url, q, err);
	return r;
}

/* The edge caller -> callee in by_pair, made if new. */
static struct json_object *edge_of(struct json_object *by_pair, const char *caller,
				   const char *callee)
{
	struct json_object *e;
	char key[512];

	snprintf(key, sizeof(key), "%s\n%s", caller, callee);
	if (json_object_object_get_ex(by_pair, key, &e))
		return e;
	e = json_object_new_object();
	json_object_object_add(e, "caller", json_object_new_string(caller));
	json_object_object_add(e, "callee", json_object_new_string(callee));
	json_object_object_add(e, "ratio", NULL);
	json_object_object_add(e, "class", json_object_new_string("unknown"));
	json_object_object_add(e, "class_source", json_object_new_string("fleet"));
	json_object_object_add(by_pair, key, e);
	return e;
}

static int add_edges(const char *url, struct json_object *by_pair)
{
	size_t q, i;

	for (q = 0; q < sizeof(edge_counts) / sizeof(edge_counts[0]); q++) {
		struct json_object *res = query(url, edge_counts[q].query);
		const char *field = edge_counts[q].field;

		if (!res)
			return -1;
		for (i = 0; i < json_object_array_length(res); i++) {
			struct json_object *s = json_object_array_get_idx(res, i), *e;
			double v = promql__value(s);

			if (!*promql__label(s, "caller") || !*promql__label(s, "callee") ||
			    isnan(v))
				continue;
			e = edge_of(by_pair, promql__label(s, "caller"),
				    promql__label(s, "callee"));
			if (!strcmp(field, "class"))
				json_object_object_add(
					e, field, json_object_new_string(verdict__class_name(v)));
			else if (!strcmp(field, "ratio"))
				json_object_object_add(e, field, json_object_new_double(v));
			else
				json_object_object_add(e, field, json_object_new_int64(llround(v)));
		}
		json_object_put(res);
	}
	return 0;
}

/* Every edge with its four counts (0 where no host had one); a root
 * caller's when no host counts both_failed for it. */
static struct json_object *edges_array(struct json_object *by_pair)
{
	struct json_object *arr = json_object_new_array();
	size_t q;

	json_object_object_foreach(by_pair, key, e) {
		bool root = !json_object_object_get_ex(e, "both_failed", NULL);

		(void)key;
		for (q = 0; q < N_COUNTS; q++)
			if (!json_object_object_get_ex(e, edge_counts[q].field, NULL))
				json_object_object_add(e, edge_counts[q].field,
						       json_object_new_int64(0));
		json_object_object_add(e, "root", json_object_new_boolean(root));
		json_object_array_add(arr, json_object_get(e));
	}
	return arr;
}

static struct json_object *service_of(struct json_object *by_name, const char *name)
{
	struct json_object *s;

	if (json_object_object_get_ex(by_name, name, &s))
		return s;
	s = json_object_new_object();
	json_object_object_add(s, "service", json_object_new_string(name));
	json_object_object_add(by_name, name, s);
	return s;
}

static void add_count(struct json_object *s, const char *field, double v)
{
	struct json_object *old;
	int64_t had = json_object_object_get_ex(s, field, &old) ? json_object_get_int64(old) : 0;

	json_object_object_add(s, field, json_object_new_int64(had + llround(v)));
}

static struct json_object *services_array(const char *url)
{
	struct json_object *req = query(url, "sum by (service) (claimd_service_requests_total)");
	struct json_object *fail =
		req ? query(url, "sum by (service, verdict) (claimd_service_failures_total)")
		    : NULL;
	struct json_object *by_name = json_object_new_object(), *arr = NULL;
	size_t i;

	if (!fail)
		goto out;
	for (i = 0; i < json_object_array_length(req); i++) {
		struct json_object *s = json_object_array_get_idx(req, i);

		if (*promql__label(s, "service") && !isnan(promql__value(s)))
			add_count(service_of(by_name, promql__label(s, "service")), "requests",
				  promql__value(s));
	}
	for (i = 0; i < json_object_array_length(fail); i++) {
		struct json_object *s = json_object_array_get_idx(fail, i), *svc;
		const char *verdict = promql__label(s, "verdict");

		if (!*promql__label(s, "service") || isnan(promql__value(s)) ||
		    (strcmp(verdict, "claimed") && strcmp(verdict, "unclaimed") &&
		     strcmp(verdict, "unknown")))
			continue;
		svc = service_of(by_name, promql__label(s, "service"));
		add_count(svc, verdict, promql__value(s));
		add_count(svc, "failures", promql__value(s));
	}
	arr = json_object_new_array();
	json_object_object_foreach(by_name, name, s) {
		(void)name;
		add_count(s, "requests", 0);
		add_count(s, "failures", 0);
		add_count(s, "claimed", 0);
		add_count(s, "unclaimed", 0);
		add_count(s, "unknown", 0);
		json_object_array_add(arr, json_object_get(s));
	}
out:
	json_object_put(req);
	json_object_put(fail);
	json_object_put(by_name);
	return arr;
}

struct json_object *ctl_fleet_graph(const char *url)
{
	struct json_object *by_pair = json_object_new_object(), *edges = NULL, *services = NULL;
	struct json_object *g = NULL;

	if (add_edges(url, by_pair))
		goto out;
	services = services_array(url);
	if (!services)
		goto out;
	edges = edges_array(by_pair);
	g = graph__build(edges, services, time(NULL));
	if (!g)
		pr_err("out of memory");
out:
	json_object_put(by_pair);
	json_object_put(edges);
	json_object_put(services);
	return g;
}
