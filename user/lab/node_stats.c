// SPDX-License-Identifier: GPL-2.0
/*
 * A lab node's counters as JSON, the form the driver reads back after
 * stopping the node: requests received, answers by status, the claims it
 * wrote on failed answers, and per downstream the attempts and retries it
 * sent, the failures it got (by x-error-claim), budget denials and why the
 * claim-aware policy stopped retrying.
 */
#include <stdio.h>

#include "lab.h"

static struct json_object *u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static struct json_object *claims_json(const uint64_t c[3])
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "none", u64(stat_get(&c[0])));
	json_object_object_add(o, "claimed", u64(stat_get(&c[1])));
	json_object_object_add(o, "unclaimed", u64(stat_get(&c[2])));
	return o;
}

static struct json_object *down_json(const struct downstream *d)
{
	struct json_object *o = json_object_new_object(), *g = json_object_new_object();
	char addr[96];
	int i;

	snprintf(addr, sizeof(addr), "%s:%d", d->addr, d->port);
	json_object_object_add(o, "addr", json_object_new_string(addr));
	json_object_object_add(o, "port", json_object_new_int(d->port));
	json_object_object_add(o, "open", json_object_new_boolean(d->open));
	json_object_object_add(o, "calls", u64(stat_get(&d->st.calls)));
	json_object_object_add(o, "retries", u64(stat_get(&d->st.retries)));
	json_object_object_add(o, "failures", u64(stat_get(&d->st.failures)));
	json_object_object_add(o, "transport_failures", u64(stat_get(&d->st.transport)));
	json_object_object_add(o, "budget_denied", u64(stat_get(&d->st.budget_denied)));
	json_object_object_add(o, "failed_with_claim", claims_json(d->st.got));
	for (i = 1; i < 8; i++) {
		uint64_t v = stat_get(&d->st.gave_up[i]);

		if (v)
			json_object_object_add(g, claim_decision_name(i), u64(v));
	}
	json_object_object_add(o, "stopped_retrying", g);
	return o;
}

struct json_object *node_stats_json(const struct node *n)
{
	struct json_object *o = json_object_new_object(), *st = json_object_new_object();
	struct json_object *downs = json_object_new_array();
	char policy[32], key[8];
	int i;

	json_object_object_add(o, "name", json_object_new_string(n->name));
	json_object_object_add(o, "port", json_object_new_int(n->port));
	json_object_object_add(
		o, "policy",
		json_object_new_string(policy_format(&n->policy, policy, sizeof(policy))));
	json_object_object_add(o, "claimd_connected",
			       json_object_new_boolean(claim_connected(n->claim)));
	json_object_object_add(o, "requests", u64(stat_get(&n->st.requests)));
	json_object_object_add(o, "own_failures", u64(stat_get(&n->st.own_failures)));
	json_object_object_add(o, "in_flight_max", u64(stat_get(&n->st.in_flight_max)));
	for (i = 0; i < LAB_STATUS_MAX; i++) {
		uint64_t v = stat_get(&n->st.status[i]);

		if (!v)
			continue;
		snprintf(key, sizeof(key), "%d", i);
		json_object_object_add(st, key, u64(v));
	}
	json_object_object_add(o, "responses", st);
	json_object_object_add(o, "claims_written", claims_json(n->st.claims_written));
	for (i = 0; i < n->n_down; i++)
		json_object_array_add(downs, down_json(&n->down[i]));
	json_object_object_add(o, "downstreams", downs);
	return o;
}

int node_stats_write(const struct node *n, const char *path)
{
	struct json_object *o = node_stats_json(n);
	int err;

	err = lab_write_atomic(path, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return err;
}
