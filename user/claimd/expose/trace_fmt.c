// SPDX-License-Identifier: GPL-2.0
/* Records as JSON; see trace_fmt.h. */
#include <stdio.h>

#include "counts.h"
#include "model/names.h"
#include "outcome.h"
#include "kernel/record.h"
#include "expose/trace_fmt.h"
#include "verdict_names.h"

const char *trace__method_name(unsigned int method)
{
	static const char *const names[HTTP_M__COUNT] = {
		[HTTP_M_NONE] = "-",	      [HTTP_M_GET] = "GET",
		[HTTP_M_HEAD] = "HEAD",	      [HTTP_M_POST] = "POST",
		[HTTP_M_PUT] = "PUT",	      [HTTP_M_DELETE] = "DELETE",
		[HTTP_M_PATCH] = "PATCH",     [HTTP_M_OPTIONS] = "OPTIONS",
		[HTTP_M_CONNECT] = "CONNECT", [HTTP_M_TRACE] = "TRACE",
		[HTTP_M_OTHER] = "OTHER",
	};

	return method < HTTP_M__COUNT ? names[method] : "?";
}

/* The x-error-claim a response carried: a verdict's name, or "none". */
_Static_assert((int)HTTP_CLAIM_CLAIMED == (int)CLAIM_CLAIMED &&
		       (int)HTTP_CLAIM_UNCLAIMED == (int)CLAIM_UNCLAIMED,
	       "a header's claim is the verdict it names");

const char *trace__proto_name(unsigned int proto)
{
	static const char *const names[CLAIMD_PROTO__COUNT] = {
		[CLAIMD_PROTO_HTTP] = "http",	[CLAIMD_PROTO_OTHER] = "?",
		[CLAIMD_PROTO_REDIS] = "redis", [CLAIMD_PROTO_POSTGRES] = "postgres",
		[CLAIMD_PROTO_MYSQL] = "mysql",
	};

	return proto < CLAIMD_PROTO__COUNT ? names[proto] : "?";
}

const char *trace__claim_name(unsigned int claim)
{
	if (claim == HTTP_CLAIM_CLAIMED || claim == HTTP_CLAIM_UNCLAIMED)
		return verdict__name(claim);
	return verdict__name(CLAIM_NONE);
}

static void add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

static void add_int(struct json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

static void add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

/* The request target's FNV-1a hash (never the target itself), as 8 hex digits. */
static void add_target(struct json_object *o, __u32 hash)
{
	char hex[16];

	snprintf(hex, sizeof(hex), "%08x", hash);
	add_str(o, "target_hash", hex);
}

static void add_ms(struct json_object *o, const char *k, __u64 start, __u64 end)
{
	double ms = end > start ? (double)(end - start) / 1e6 : 0.0;

	json_object_object_add(o, k, json_object_new_double(ms));
}

static struct json_object *egress_json(const struct claimd_egress *e, struct names *names,
				       unsigned int fail_status)
{
	__u32 outcome = outcome_of_call(e->status, e->flags, fail_status);
	struct json_object *o = json_object_new_object();
	char addr[64];

	addr__format(&e->callee, addr, sizeof(addr));
	add_str(o, "callee", names__callee(names, &e->callee));
	add_str(o, "addr", addr);
	add_str(o, "protocol", trace__proto_name(e->proto));
	if (e->proto >= CLAIMD_PROTO_REDIS) {
		/* A database's or a cache's call: answered, or an error reply (the status says which). */
		if (e->flags & CLAIMD_EG_DONE)
			json_object_object_add(
				o, "error_reply",
				json_object_new_boolean(e->status == CLAIMD_WIRE_STATUS_ERROR));
	} else {
		add_str(o, "method", trace__method_name(e->method));
	}
	add_int(o, "status", e->status);
	json_object_object_add(o, "failed",
			       json_object_new_boolean(outcome == CLAIMD_OUTCOME_FAILED));
	json_object_object_add(o, "transport_failure",
			       json_object_new_boolean(!!(e->flags & CLAIMD_EG_TRANSPORT)));
	if (e->flags & CLAIMD_EG_CONNECT)
		json_object_object_add(o, "connect_failed", json_object_new_boolean(1));
	if (!(e->flags & CLAIMD_EG_DONE))
		json_object_object_add(o, "pending", json_object_new_boolean(1));
	if (outcome_call_given_up(e->flags))
		json_object_object_add(o, "given_up", json_object_new_boolean(1));
	if (e->flags & CLAIMD_EG_RETRY)
		json_object_object_add(o, "retry", json_object_new_boolean(1));
	if (e->flags & CLAIMD_EG_LATE)
		json_object_object_add(o, "late", json_object_new_boolean(1));
	if (outcome == CLAIMD_OUTCOME_LOST)
		json_object_object_add(o, "lost", json_object_new_boolean(1));
	add_target(o, e->target_hash);
	add_str(o, "claim", trace__claim_name(e->claim));
	add_u64(o, "start_ns", e->start_ns);
	add_u64(o, "end_ns", e->end_ns);
	add_ms(o, "duration_ms", e->start_ns, e->end_ns);
	return o;
}

static struct json_object *ingress_flags_json(__u32 flags)
{
	struct json_object *a = json_object_new_array();

	if (flags & CLAIMD_IN_MUX)
		json_object_array_add(a, json_object_new_string("multiplexed"));
	if (flags & CLAIMD_IN_NOCTX)
		json_object_array_add(a, json_object_new_string("no-egress-log"));
	if (flags & CLAIMD_IN_CLOSED)
		json_object_array_add(a, json_object_new_string("closed-before-response"));
	if (flags & CLAIMD_IN_PEER_GONE)
		json_object_array_add(a, json_object_new_string("client-gone"));
	if (flags & CLAIMD_IN_BLIND)
		json_object_array_add(a, json_object_new_string("framing-lost"));
	if (flags & CLAIMD_IN_UNTIED)
		json_object_array_add(a, json_object_new_string("untied-call"));
	if (flags & CLAIMD_IN_LOST)
		json_object_array_add(a, json_object_new_string("response-lost"));
	if (flags & CLAIMD_IN_OPAQUE)
		json_object_array_add(a, json_object_new_string("opaque-call"));
	return a;
}

struct json_object *trace__ingress_json(const struct claimd_ingress *r, struct names *names,
					unsigned int fail_status)
{
	__u32 outcome = outcome_of_request(r->status, r->flags, fail_status);
	struct json_object *o = json_object_new_object(), *eg = json_object_new_array();
	char addr[64];
	int i;

	add_str(o, "type", "ingress");
	add_str(o, "service", names__service(names, r->tgid, r->local.port, r->comm));
	add_int(o, "pid", r->tgid);
	add_int(o, "tid", r->tid);
	addr__format(&r->local, addr, sizeof(addr));
	add_str(o, "addr", addr);
	addr__format(&r->peer, addr, sizeof(addr));
	add_str(o, "peer", addr);
	add_str(o, "method", trace__method_name(r->method));
	add_target(o, r->target_hash);
	add_int(o, "status", r->status);
	/* Failed, or its answer lost (then also "lost"): judged either way. */
	json_object_object_add(o, "failed", json_object_new_boolean(outcome_judged(outcome)));
	if (outcome == CLAIMD_OUTCOME_LOST)
		json_object_object_add(o, "lost", json_object_new_boolean(1));
	add_u64(o, "start_ns", r->start_ns);
	add_u64(o, "end_ns", r->end_ns);
	add_ms(o, "duration_ms", r->start_ns, r->end_ns);
	json_object_object_add(o, "flags", ingress_flags_json(r->flags));
	if (r->verdict != CLAIM_NONE) {
		struct json_object *cause = NULL;

		add_str(o, "verdict", verdict__name(r->verdict));
		add_str(o, "rule", verdict__rule_name(r->rule));
		if (r->cause < r->n_egress && r->cause < CLAIMD_EGRESS_MAX) {
			const struct claimd_egress *e = &r->egress[r->cause];

			cause = json_object_new_object();
			add_str(cause, "caller",
				names__service(names, r->tgid, r->local.port, r->comm));
			add_str(cause, "callee", names__callee(names, &e->callee));
			add_int(cause, "egress", r->cause);
		}
		json_object_object_add(o, "cause", cause);
	}
	for (i = 0; i < r->n_egress && i < CLAIMD_EGRESS_MAX; i++)
		json_object_array_add(eg, egress_json(&r->egress[i], names, fail_status));
	json_object_object_add(o, "egress", eg);
	add_int(o, "egress_dropped", r->egress_dropped);
	if (r->unwritten)
		add_int(o, "calls_unwritten", r->unwritten);
	return o;
}

struct json_object *trace__root_egress_json(const struct claimd_root_egress *r, struct names *names,
					    unsigned int fail_status)
{
	struct json_object *o = json_object_new_object();

	add_str(o, "type", "egress");
	add_str(o, "caller",
		r->local_port != CLAIMD_ROOT_PORT
			? names__service(names, r->tgid, r->local_port, r->comm)
			: names__process(names, r->tgid, r->comm));
	add_int(o, "pid", r->tgid);
	add_int(o, "tid", r->tid);
	json_object_object_add(o, "egress", egress_json(&r->egress, names, fail_status));
	return o;
}
