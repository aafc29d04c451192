// SPDX-License-Identifier: GPL-2.0
/*
 * What a lab run measured, from the counters the nodes wrote and what the
 * client saw: per node the requests received and the load multiple
 * (received / N), the retries it sent and the claims its failed answers
 * carried; the availability the client perceived; the storm radius. Built
 * as JSON (what --json writes) and printed from that same JSON, so the two
 * never disagree. Big trees print the path to the failing node only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define PRINT_ALL_MAX 16 /* topologies up to this size print every node */

static long long j_int(struct json_object *o, const char *key)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static struct json_object *j_get(struct json_object *o, const char *key)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

static void add_int(struct json_object *o, const char *k, long long v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

static void add_dbl(struct json_object *o, const char *k, double v)
{
	json_object_object_add(o, k, json_object_new_double(v));
}

static long long failed_answers(struct json_object *responses)
{
	long long n = 0;

	json_object_object_foreach(responses, status, count) {
		if (lab_failed(atoi(status)))
			n += json_object_get_int64(count);
	}
	return n;
}

/* One node's line of the report; marks the edges to its children that retried. */
static struct json_object *node_report(const struct topo *t, int i, long n_req, bool *retried)
{
	const struct topo_node *tn = &t->nodes[i];
	struct json_object *o = json_object_new_object(), *downs = json_object_new_array();
	struct json_object *st = tn->stats, *sd = j_get(st, "downstreams");
	long long retries = 0, calls = 0, denied = 0, recv = j_int(st, "requests");
	char policy[32];
	int c;

	add_str(o, "name", tn->name);
	add_str(o, "parent", tn->parent < 0 ? "client" : t->nodes[tn->parent].name);
	add_int(o, "depth", tn->depth);
	add_str(o, "policy", policy_format(&tn->policy, policy, sizeof(policy)));
	json_object_object_add(o, "fails", json_object_new_boolean(tn->fail));
	add_int(o, "received", recv);
	add_dbl(o, "load", (double)recv / n_req);
	for (c = 0; c < tn->n_children; c++) {
		struct json_object *d = json_object_array_get_idx(sd, c);
		struct json_object *e = json_object_new_object();
		const struct topo_node *ch = &t->nodes[tn->children[c]];

		add_str(e, "to", ch->name);
		json_object_object_add(e, "open", json_object_new_boolean(ch->open));
		add_int(e, "calls", j_int(d, "calls"));
		add_int(e, "retries", j_int(d, "retries"));
		add_int(e, "failures", j_int(d, "failures"));
		add_int(e, "budget_denied", j_int(d, "budget_denied"));
		json_object_object_add(e, "failed_with_claim",
				       json_object_get(j_get(d, "failed_with_claim")));
		json_object_object_add(e, "stopped_retrying",
				       json_object_get(j_get(d, "stopped_retrying")));
		json_object_array_add(downs, e);
		retried[tn->children[c]] = j_int(d, "retries") > 0;
		retries += j_int(d, "retries");
		calls += j_int(d, "calls");
		denied += j_int(d, "budget_denied");
	}
	add_int(o, "calls_sent", calls);
	add_int(o, "retries_sent", retries);
	add_int(o, "budget_denied", denied);
	add_int(o, "failed_answers", failed_answers(j_get(st, "responses")));
	json_object_object_add(o, "responses", json_object_get(j_get(st, "responses")));
	json_object_object_add(o, "claims_written", json_object_get(j_get(st, "claims_written")));
	json_object_object_add(o, "claimd_connected",
			       json_object_get(j_get(st, "claimd_connected")));
	json_object_object_add(o, "downstreams", downs);
	return o;
}

void report_policy_label(const struct run_opts *o, char *buf, size_t len)
{
	size_t used;
	int k;

	policy_format(&o->policy, buf, len);
	for (k = 0; k < o->n_policy_at; k++) {
		used = strlen(buf);
		snprintf(buf + used, len - used, ", %s", o->policy_at[k]);
	}
}

static struct json_object *client_report(const struct load_result *lr, long n_req)
{
	struct json_object *c = json_object_new_object(), *st = json_object_new_object();
	char key[8];
	int s;

	add_int(c, "sent", lr->sent);
	add_int(c, "ok", lr->ok);
	add_int(c, "transport_failures", lr->transport);
	for (s = 0; s < LAB_STATUS_MAX; s++) {
		if (!lr->status[s])
			continue;
		snprintf(key, sizeof(key), "%d", s);
		add_int(st, key, lr->status[s]);
	}
	json_object_object_add(c, "responses", st);
	add_dbl(c, "perceived", (double)lr->ok / n_req);
	return c;
}

struct json_object *report_build(const struct topo *t, const struct run_opts *o,
				 const struct load_result *lr)
{
	struct json_object *rep = json_object_new_object(), *nodes = json_object_new_array();
	struct json_object *load = json_object_new_object(), *retries = json_object_new_object();
	bool *retried = calloc(t->n, sizeof(*retried));
	char label[512];
	int i, connected = 0;

	if (!retried) {
		json_object_put(rep);
		return NULL;
	}
	report_policy_label(o, label, sizeof(label));
	add_str(rep, "topology", t->spec);
	add_str(rep, "policy", label);
	add_str(rep, "fail", o->fail ? o->fail : "");
	add_dbl(rep, "fail_rate", o->fail_rate);
	add_str(rep, "fail_mode", o->fail_mode);
	add_int(rep, "requests", o->requests);
	add_int(rep, "concurrency", o->concurrency);
	add_int(rep, "seed", o->seed);
	add_dbl(rep, "budget_burst", o->budget_burst);
	add_dbl(rep, "elapsed_s", lr->elapsed_s);
	json_object_object_add(rep, "client", client_report(lr, o->requests));
	for (i = 0; i < t->n; i++) {
		struct json_object *nr = node_report(t, i, o->requests, retried);

		json_object_array_add(nodes, nr);
		json_object_object_add(load, t->nodes[i].name, json_object_get(j_get(nr, "load")));
		json_object_object_add(retries, t->nodes[i].name,
				       json_object_get(j_get(nr, "retries_sent")));
		connected += json_object_get_boolean(j_get(nr, "claimd_connected"));
		if (t->nodes[i].fail)
			add_dbl(rep, "fail_load", json_object_get_double(j_get(nr, "load")));
	}
	json_object_object_add(rep, "nodes", nodes);
	json_object_object_add(rep, "load", load);
	json_object_object_add(rep, "retries_sent", retries);
	add_int(rep, "storm_radius", topo_storm_radius(t, retried));
	add_int(rep, "claimd_connected_nodes", connected);
	free(retried);
	return rep;
}

static void print_node(struct json_object *nr)
{
	struct json_object *cw = j_get(nr, "claims_written");

	printf("  %-16s %-16s %9lld %8.3f %8lld %8lld   %lld/%lld/%lld\n",
	       json_object_get_string(j_get(nr, "name")),
	       json_object_get_string(j_get(nr, "policy")), j_int(nr, "received"),
	       json_object_get_double(j_get(nr, "load")), j_int(nr, "retries_sent"),
	       j_int(nr, "failed_answers"), j_int(cw, "claimed"), j_int(cw, "unclaimed"),
	       j_int(cw, "none"));
}

void report_print(const struct topo *t, struct json_object *rep)
{
	struct json_object *nodes = j_get(rep, "nodes"), *client = j_get(rep, "client");
	const char *fail = json_object_get_string(j_get(rep, "fail"));
	bool *on_path = calloc(t->n, sizeof(*on_path));
	int i, f = *fail ? topo_find(t, fail) : -1, hidden = 0;

	printf("%s, policy %s, %s fails, %lld requests over %lld connections, %.1f s\n", t->spec,
	       json_object_get_string(j_get(rep, "policy")), *fail ? fail : "nothing",
	       j_int(rep, "requests"), j_int(rep, "concurrency"),
	       json_object_get_double(j_get(rep, "elapsed_s")));
	printf("  %-16s %-16s %9s %8s %8s %8s   %s\n", "node", "policy", "received", "load",
	       "retries", "failed", "claimed/unclaimed/none");
	for (i = f; on_path && i >= 0; i = t->nodes[i].parent)
		on_path[i] = true;
	for (i = 0; i < t->n; i++) {
		if (t->n > PRINT_ALL_MAX && on_path && !on_path[i]) {
			hidden++;
			continue;
		}
		print_node(json_object_array_get_idx(nodes, i));
	}
	if (hidden)
		printf("  (%d nodes off the path to %s not shown; --json has them all)\n", hidden,
		       fail);
	printf("  client: %lld/%lld answered 2xx, perceived availability %.2f%%\n",
	       j_int(client, "ok"), j_int(rep, "requests"),
	       100 * json_object_get_double(j_get(client, "perceived")));
	if (j_int(client, "transport_failures"))
		printf("  client: %lld requests got no answer from %s (refused, reset or timed "
		       "out)\n",
		       j_int(client, "transport_failures"), t->nodes[0].name);
	printf("  storm radius %lld; claimd verdicts read by %lld/%d nodes\n",
	       j_int(rep, "storm_radius"), j_int(rep, "claimd_connected_nodes"), t->n);
	fflush(stdout);
	free(on_path);
}
