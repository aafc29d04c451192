// SPDX-License-Identifier: GPL-2.0
/* claimd's Prometheus metrics from its graph and status; see metrics.h. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/counters.h"
#include "expose/metrics.h"
#include "expose/metrics_text.h"
#include "verdict_names.h"

#define EDGE_FIELD(f) offsetof(struct metrics_edge, f)

struct edge_family {
	const char *name;
	size_t field; /* a double in struct metrics_edge */
	const char *help;
	bool roots; /* root callers' edges too (they have no both_failed) */
};

static const struct edge_family edge_counters[] = {
	{ "claimd_edge_calls_total", EDGE_FIELD(calls),
	  "Calls from caller to callee (retries included) since claimd started.", true },
	{ "claimd_edge_callee_failures_total", EDGE_FIELD(callee_failures),
	  "Requests of the caller in which its call to the callee failed (and no retry of it "
	  "succeeded), and its failed calls outside requests; for a root caller (a process that "
	  "serves nothing), its failed calls.",
	  true },
	{ "claimd_edge_tied_failures_total", EDGE_FIELD(tied_failures),
	  "Of those, requests whose calls claimd followed whole (they teach the class): "
	  "the ratio's denominator (not for root callers).",
	  false },
	{ "claimd_edge_both_failed_total", EDGE_FIELD(both_failed),
	  "Requests in which the callee failed and the caller's own response failed too (not "
	  "for root callers: they serve no request).",
	  false },
	{ "claimd_edge_retries_total", EDGE_FIELD(retries),
	  "Calls that repeated the caller's failed call right before them (root callers: the "
	  "same target within 30 s of the failure).",
	  true },
	{ "claimd_edge_ratio", EDGE_FIELD(ratio),
	  "both_failed / tied_failures of the edge's recent window, or of the long-term "
	  "memory when that gives the class; absent with no callee failures, and for root "
	  "callers.",
	  false },
};

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static double num(struct json_object *o, const char *key)
{
	return json_object_get_double(get(o, key));
}

/* An edge's labels: caller, callee, and the callee's endpoint when it has no name here. */
static void edge_labels(const struct metrics_edge *e, const char *labels[7])
{
	labels[0] = "caller";
	labels[1] = e->caller;
	labels[2] = "callee";
	labels[3] = e->callee;
	labels[4] = e->callee_address ? "callee_address" : NULL;
	labels[5] = e->callee_address;
	labels[6] = NULL;
}

static void edge_family(struct metrics_text *w, const struct metrics_model *m,
			const struct edge_family *f, enum prom_type type)
{
	size_t i;

	metrics_text__family(w, f->name, type, f->help);
	for (i = 0; i < m->n_edges; i++) {
		const struct metrics_edge *e = &m->edges[i];
		const char *labels[7];
		double value = *(const double *)((const char *)e + f->field);

		/* A root edge has no both_failed, ratio or class: a fleet rule must
		 * not read a ratio of 0 (fail-open) into it. */
		if (!f->roots && e->root)
			continue;
		if (isnan(value))
			continue; /* a ratio with no callee failures yet */
		edge_labels(e, labels);
		metrics_text__sample(w, f->name, labels, value);
	}
}

static void render_edges(struct metrics_text *w, const struct metrics_model *m)
{
	size_t i, n = sizeof(edge_counters) / sizeof(edge_counters[0]);

	for (i = 0; i < n; i++)
		edge_family(w, m, &edge_counters[i],
			    edge_counters[i].field == EDGE_FIELD(ratio) ? PROM_GAUGE
									: PROM_COUNTER);
	metrics_text__family(
		w, "claimd_edge_class", PROM_GAUGE,
		"The edge's class: 0 unknown, 1 fail-close (ratio >= 0.8), 2 fail-open "
		"(ratio <= 0.2); unknown with fewer than --min-failures callee failures. Absent "
		"for root callers (never classified).");
	for (i = 0; i < m->n_edges; i++) {
		const struct metrics_edge *e = &m->edges[i];
		const char *labels[7];

		edge_labels(e, labels);
		if (!e->root)
			metrics_text__sample(w, "claimd_edge_class", labels, e->cls);
	}
}

static void render_addresses(struct metrics_text *w, const struct metrics_model *m)
{
	size_t i;

	metrics_text__family(
		w, "claimd_service_info", PROM_GAUGE,
		"A service listening on this host and an address callers on other hosts reach it "
		"at (1): the recording rules name edges whose callee_address it is.");
	for (i = 0; i < m->n_addresses; i++) {
		const char *labels[] = { "service", m->addresses[i].service, "address",
					 m->addresses[i].address, NULL };

		metrics_text__sample(w, "claimd_service_info", labels, 1);
	}
}

static void render_services(struct metrics_text *w, const struct metrics_model *m)
{
	size_t i;

	metrics_text__family(w, "claimd_service_requests_total", PROM_COUNTER,
			     "Inbound requests the service finished.");
	for (i = 0; i < m->n_services; i++) {
		const char *labels[] = { "service", m->services[i].name, NULL };

		metrics_text__sample(w, "claimd_service_requests_total", labels,
				     m->services[i].requests);
	}
	metrics_text__family(
		w, "claimd_service_failures_total", PROM_COUNTER,
		"Failed inbound requests by verdict: claimed (the error started here), "
		"unclaimed (passed up from a failed dependency), unknown (no confident "
		"verdict).");
	for (i = 0; i < m->n_services; i++) {
		const struct metrics_service *s = &m->services[i];
		const struct {
			enum claim_verdict v;
			double n;
		} by[] = { { CLAIM_CLAIMED, s->claimed },
			   { CLAIM_UNCLAIMED, s->unclaimed },
			   { CLAIM_UNKNOWN, s->unknown } };
		size_t k;

		for (k = 0; k < sizeof(by) / sizeof(by[0]); k++) {
			const char *labels[] = { "service", s->name, "verdict",
						 verdict__name(by[k].v), NULL };

			metrics_text__sample(w, "claimd_service_failures_total", labels, by[k].n);
		}
	}
}

static void one(struct metrics_text *w, const char *name, enum prom_type type, const char *help,
		double v)
{
	metrics_text__family(w, name, type, help);
	metrics_text__sample(w, name, NULL, v);
}

static void render_records(struct metrics_text *w, struct json_object *r)
{
	static const char *const types[] = { "ingress", "egress", "listen", "exit" };
	size_t i;

	metrics_text__family(
		w, "claimd_records_total", PROM_COUNTER,
		"Records claimd read from the kernel, by type: ingress (a finished inbound "
		"request), egress (a call outside any request), listen, exit.");
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		const char *labels[] = { "type", types[i], NULL };

		metrics_text__sample(w, "claimd_records_total", labels, num(r, types[i]));
	}
	one(w, "claimd_records_malformed_total", PROM_COUNTER,
	    "Records from the kernel that claimd dropped as malformed.", num(r, "invalid"));
}

static void render_kernel(struct metrics_text *w, struct json_object *k)
{
	char name[128], help[160];

	if (!json_object_is_type(k, json_type_object))
		return;
	json_object_object_foreach(k, key, v) {
		snprintf(name, sizeof(name), "claimd_kernel_%s_total", key);
		snprintf(help, sizeof(help), "Kernel counter %s.", key);
		one(w, name, PROM_COUNTER,
		    counters__kernel_help(key) ? counters__kernel_help(key) : help,
		    json_object_get_double(v));
	}
}

/* One family per field of a map's fill (metrics_maps.h); some maps have no such field. */
static const struct {
	const char *name, *field, *help;
	enum prom_type type;
	bool always;
} map_families[] = {
	{ "claimd_map_entries", "entries",
	  "Entries in claimd's BPF maps (counted every few seconds).", PROM_GAUGE, true },
	{ "claimd_map_max_entries", "max_entries", "Capacity of claimd's BPF maps.", PROM_GAUGE,
	  true },
	{ "claimd_map_evictions_total", "evicted",
	  "Entries of a full LRU map evicted to make room, oldest first (conns, threads).",
	  PROM_COUNTER, false },
	{ "claimd_map_refused", "refused",
	  "Entries claimd could not write into a full map, at its last update (edge_class: see "
	  "--classes).",
	  PROM_GAUGE, false },
	{ "claimd_map_refusals_total", "refused_total",
	  "Entries newly refused by a full map since claimd started.", PROM_COUNTER, false },
};

static void render_maps(struct metrics_text *w, struct json_object *maps)
{
	size_t i;

	if (!json_object_is_type(maps, json_type_object))
		return;
	for (i = 0; i < sizeof(map_families) / sizeof(map_families[0]); i++) {
		metrics_text__family(w, map_families[i].name, map_families[i].type,
				     map_families[i].help);
		json_object_object_foreach(maps, name, m) {
			const char *labels[] = { "map", name, NULL };

			if (map_families[i].always || get(m, map_families[i].field))
				metrics_text__sample(w, map_families[i].name, labels,
						     num(m, map_families[i].field));
		}
	}
}

static void render_memory(struct metrics_text *w, struct json_object *m, time_t wall)
{
	double persisted = num(m, "persisted_unix");

	one(w, "claimd_memory_edges_loaded", PROM_GAUGE,
	    "Edges read from the memory file at start.", num(m, "loaded_edges"));
	one(w, "claimd_memory_persist_errors_total", PROM_COUNTER,
	    "Failed writes of the memory to the state directory.", num(m, "persist_errors"));
	if (persisted <= 0)
		return; /* not written yet: no age to tell */
	one(w, "claimd_memory_last_persist_timestamp_seconds", PROM_GAUGE,
	    "When the memory last reached the disk (Unix time).", persisted);
	one(w, "claimd_memory_persist_age_seconds", PROM_GAUGE,
	    "Seconds since the memory last reached the disk.", (double)wall - persisted);
}

/* Failed requests whose verdict is unknown, by reason ('claimctl status'
 * "unknown_verdicts": the names of counters.h). */
static void render_unknown(struct metrics_text *w, struct json_object *u)
{
	if (!json_object_is_type(u, json_type_object))
		return;
	metrics_text__family(
		w, "claimd_unknown_verdicts_total", PROM_COUNTER,
		"Failed requests whose verdict is unknown, by reason: multiplexed (a thread "
		"served another request meanwhile), no-egress-log, framing-lost (bytes "
		"claimd could not frame), untied-call (a call it could not follow), "
		"unfinished-call (a call it did not wait for still ran at its answer), opaque-call "
		"(a dependency claimd cannot read), unread-program (its process's program not read "
		"yet), other.");
	{
		json_object_object_foreach(u, reason, v) {
			const char *labels[] = { "reason", reason, NULL };

			metrics_text__sample(w, "claimd_unknown_verdicts_total", labels,
					     json_object_get_double(v));
		}
	}
}

/* --fleet-classes: is Prometheus answering, and are the fleet's classes in use. */
static void render_fleet(struct metrics_text *w, struct json_object *f)
{
	struct json_object *state = get(f, "state");

	if (!state)
		return; /* no --fleet-classes */
	one(w, "claimd_fleet_up", PROM_GAUGE,
	    "1 while the fleet's classes are read from Prometheus (--fleet-classes), 0 while it "
	    "is slow or unreachable and only this host's classes are used.",
	    !strcmp(json_object_get_string(state), "ok"));
	one(w, "claimd_fleet_queries_total", PROM_COUNTER,
	    "Rounds of queries for the fleet's classes.", num(f, "queries"));
	one(w, "claimd_fleet_errors_total", PROM_COUNTER,
	    "Rounds that failed (Prometheus slow, unreachable or erring): local classes only.",
	    num(f, "errors"));
	one(w, "claimd_fleet_edges", PROM_GAUGE, "Edges the fleet's classes were last read for.",
	    num(f, "edges"));
}

static void render_status(struct metrics_text *w, struct json_object *st, time_t wall)
{
	one(w, "claimd_uptime_seconds", PROM_GAUGE, "Seconds since claimd started.",
	    num(st, "uptime_s"));
	render_records(w, get(st, "records"));
	render_unknown(w, get(st, "unknown_verdicts"));
	one(w, "claimd_root_calls_total", PROM_COUNTER,
	    "Calls made outside any request by processes that serve nothing, counted on root "
	    "edges.",
	    num(st, "root_calls"));
	one(w, "claimd_calls_outside_requests_total", PROM_COUNTER,
	    "Calls a listening process made outside any request it served (background work): "
	    "no edge.",
	    num(st, "calls_outside_requests"));
	one(w, "claimd_late_calls_total", PROM_COUNTER,
	    "Calls that finished after the request they belonged to had been answered.",
	    num(st, "late_calls"));
	render_kernel(w, get(st, "kernel"));
	render_maps(w, get(st, "maps"));
	one(w, "claimd_trace_dropped_total", PROM_COUNTER,
	    "Trace lines dropped for claimctl clients too slow to read them.",
	    num(st, "trace_dropped"));
	one(w, "claimd_trace_clients", PROM_GAUGE, "claimctl clients streaming a trace.",
	    num(st, "trace_clients"));
	render_memory(w, get(st, "memory"), wall);
	render_fleet(w, get(st, "fleet"));
}

char *metrics__render(const struct metrics_model *m, struct json_object *status, time_t wall,
		      size_t *len)
{
	struct metrics_text w;

	metrics_text__init(&w);
	render_edges(&w, m);
	render_services(&w, m);
	render_addresses(&w, m);
	if (status)
		render_status(&w, status, wall);
	return metrics_text__finish(&w, len);
}
