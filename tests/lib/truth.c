// SPDX-License-Identifier: GPL-2.0
/* Verdicts against the truth a test knows; see truth.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "http_parse.h"
#include "test_progs.h"
#include "truth.h"

static bool confident(const char *v)
{
	return v && (!strcmp(v, "claimed") || !strcmp(v, "unclaimed"));
}

bool truth__check(struct truth_tally *t, const char *want, const char *got)
{
	if (!confident(got)) {
		t->unknown++;
		return true;
	}
	if (!confident(want)) {
		t->unchecked++;
		return true;
	}
	if (strcmp(want, got)) {
		t->wrong++;
		return false;
	}
	t->right++;
	return true;
}

bool truth__check_ingress(struct truth_tally *t, struct json_object *rec, const char *want)
{
	if (!j_bool(rec, "failed"))
		return true;
	return truth__check(t, want, j_str(rec, "verdict"));
}

void truth__print(const struct truth_tally *t, const char *what)
{
	printf("%s: verdicts: %d right, %d wrong, %d unknown", what, t->right, t->wrong,
	       t->unknown);
	if (t->unchecked)
		printf(", %d unchecked", t->unchecked);
	printf("\n");
	if (t->matrix_cost)
		printf("%s: %d claimed by rule 3 (fail-open edge), known cost of the matrix\n",
		       what, t->matrix_cost);
	fflush(stdout);
}

uint32_t truth__target_hash(const char *target)
{
	uint32_t h = HTTP_FNV_OFFSET;

	for (; *target; target++)
		h = (h ^ (uint8_t)*target) * HTTP_FNV_PRIME;
	return h;
}

bool truth__is_target(struct json_object *rec, const char *target)
{
	const char *hex = j_str(rec, "target_hash");

	return hex[0] && strtoul(hex, NULL, 16) == truth__target_hash(target);
}

int truth__target_id(struct json_object *rec, const char *fmt, int ids)
{
	const char *hex = j_str(rec, "target_hash");
	uint32_t h = strtoul(hex, NULL, 16);
	char target[64];
	int id;

	for (id = 0; hex[0] && id < ids; id++) {
		snprintf(target, sizeof(target), fmt, id);
		if (truth__target_hash(target) == h)
			return id;
	}
	return -1;
}

void truth__chain(struct truth_svc *out, int n, const struct truth_svc *shape, const pid_t *pids,
		  const char *const *services)
{
	int i;

	for (i = 0; i < n; i++) {
		out[i] = *shape;
		out[i].pid = pids ? pids[i] : 0;
		out[i].service = services[i];
		out[i].verdict = i < n - 1 ? "unclaimed" : "claimed";
		out[i].cause = i < n - 1 ? services[i + 1] : "";
	}
}

/* The verdict a failed ingress of s should have; NULL when the test does not know it. */
static const char *want_of(struct json_object *rec, const struct truth_svc *s)
{
	int id;

	if (!s->target)
		return s->verdict;
	id = truth__target_id(rec, s->target, s->ids);
	if (id < 0 || (s->mod && id % s->mod != s->rem))
		return NULL;
	return s->verdict;
}

/* Is rec one of s's, by its pid or its name? */
static bool of_service(struct json_object *rec, const struct truth_svc *s)
{
	return s->pid ? j_int(rec, "pid") == s->pid : !strcmp(j_str(rec, "service"), s->service);
}

/*
 * The service of rec when rec is a failed ingress of one of them, else
 * NULL: of a service's entries (one per kind of its failures), the one
 * that knows rec's truth, else its first.
 */
static const struct truth_svc *failed_of(struct json_object *rec, const struct truth_svc *svcs,
					 int n)
{
	const struct truth_svc *first = NULL;
	int i;

	if (strcmp(j_str(rec, "type"), "ingress") || !j_bool(rec, "failed"))
		return NULL;
	for (i = 0; i < n; i++) {
		if (!of_service(rec, &svcs[i]))
			continue;
		if (want_of(rec, &svcs[i]))
			return &svcs[i];
		if (!first)
			first = &svcs[i];
	}
	return first;
}

static bool cause_right(struct json_object *rec, const char *cause)
{
	struct json_object *c = j_get(rec, "cause");

	if (!cause)
		return true;
	if (!cause[0])
		return !c;
	return c && !strcmp(j_str(c, "callee"), cause);
}

/*
 * Is rec, a failed ingress of s whose truth is want, a failure passed up on
 * s's fail-open edge that rule 3 claimed (the matrix's known cost)?
 */
static bool matrix_cost(struct json_object *rec, const struct truth_svc *s, const char *want)
{
	return s->fail_open_cost && want && !strcmp(want, "unclaimed") &&
	       !strcmp(j_str(rec, "verdict"), "claimed") &&
	       !strcmp(j_str(rec, "rule"), "fail-open-edges-only") && cause_right(rec, s->cause);
}

static const char *svc_label(const struct truth_svc *s, char *buf, size_t len)
{
	if (s->service)
		return s->service;
	snprintf(buf, len, "pid %d", (int)s->pid);
	return buf;
}

void truth__tally_services(struct truth_tally *t, struct json_object *lines,
			   const struct truth_svc *svcs, int n)
{
	size_t i, len = json_object_array_length(lines);
	int *cost = calloc(n > 0 ? n : 1, sizeof(*cost));
	char label[32];

	for (i = 0; i < len; i++) {
		struct json_object *rec = json_object_array_get_idx(lines, i);
		const struct truth_svc *s;
		const char *want;
		int unchecked;
		bool ok;

		s = failed_of(rec, svcs, n);
		if (!s)
			continue;
		want = want_of(rec, s);
		if (matrix_cost(rec, s, want)) {
			t->matrix_cost++;
			if (cost)
				cost[s - svcs]++;
			printf("%s: claimed by rule 3 (fail-open edge), the truth unclaimed: known "
			       "cost of the matrix: %s\n",
			       svc_label(s, label, sizeof(label)),
			       json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
			continue;
		}
		unchecked = t->unchecked;
		if (!confident(j_str(rec, "verdict")) && !t->first_unknown[0])
			snprintf(t->first_unknown, sizeof(t->first_unknown), "%s",
				 json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
		ok = truth__check(t, want, j_str(rec, "verdict"));
		if (t->unchecked > unchecked)
			printf("a failure the test did not cause (its truth unknown): %s\n",
			       json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
		if (ok && want && !strcmp(want, j_str(rec, "verdict")) &&
		    !cause_right(rec, s->cause)) {
			t->right--;
			t->wrong++;
			ok = false;
		}
		if (!ok)
			printf("wrong verdict (the truth: %s, cause %s): %s\n", want,
			       s->cause ? (s->cause[0] ? s->cause : "none") : "any",
			       json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
	}
	for (i = 0; cost && i < (size_t)n; i++)
		if (svcs[i].fail_open_cost)
			printf("%s: %d claimed by rule 3 (fail-open edge), known cost of the "
			       "matrix\n",
			       svc_label(&svcs[i], label, sizeof(label)), cost[i]);
	fflush(stdout);
	free(cost);
}

static int failures_in(struct json_object *lines, const struct truth_svc *svcs, int n)
{
	size_t i, len = json_object_array_length(lines);
	int got = 0;

	for (i = 0; i < len; i++)
		got += failed_of(json_object_array_get_idx(lines, i), svcs, n) != NULL;
	return got;
}

/* Does lines hold a failed ingress of s for request id? */
static bool failed_id_in(struct json_object *lines, const struct truth_svc *s, int id)
{
	size_t i, len = json_object_array_length(lines);

	for (i = 0; i < len; i++) {
		struct json_object *rec = json_object_array_get_idx(lines, i);

		if (failed_of(rec, s, 1) && truth__target_id(rec, s->target, s->ids) == id)
			return true;
	}
	return false;
}

/*
 * Fewer failed ingresses came than the test caused: every ingress record
 * of the services, and, said again before the summary (test__why), the
 * ids of each service's failures that no record carries and the first of
 * their calls made outside requests.
 */
static void missing_print(struct json_object *lines, const struct truth_svc *svcs, int n, int got,
			  int failures)
{
	size_t i, len = json_object_array_length(lines);
	char ids[256], label[64];
	int k, id, at;

	test__why("only %d of %d failed ingresses in the trace", got, failures);
	for (k = 0; k < n; k++) {
		if (!svcs[k].target)
			continue;
		ids[0] = '\0';
		for (id = 0, at = 0; id < svcs[k].ids && at < (int)sizeof(ids) - 12; id++)
			if ((!svcs[k].mod || id % svcs[k].mod == svcs[k].rem) &&
			    !failed_id_in(lines, &svcs[k], id))
				at += snprintf(ids + at, sizeof(ids) - at, " %d", id);
		if (at)
			test__why("%s: no failed ingress for id%s",
				  svc_label(&svcs[k], label, sizeof(label)), ids);
	}
	/* A request unseen leaves its calls outside any: those of the services, said too. */
	for (i = 0, at = 0; i < len && at < 4; i++) {
		struct json_object *rec = json_object_array_get_idx(lines, i);

		if (strcmp(j_str(rec, "type"), "egress"))
			continue;
		for (k = 0; k < n; k++)
			if (svcs[k].pid && j_int(rec, "pid") == svcs[k].pid)
				break;
		if (k == n)
			continue;
		test__why("a call outside requests: %s",
			  json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
		at++;
	}
	printf("the services' ingresses:\n");
	for (i = 0; i < len; i++) {
		struct json_object *rec = json_object_array_get_idx(lines, i);

		if (strcmp(j_str(rec, "type"), "ingress"))
			continue;
		for (k = 0; k < n; k++) {
			if (!of_service(rec, &svcs[k]))
				continue;
			printf("  %s\n",
			       json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
			break;
		}
	}
}

void truth__own_or_passed(struct truth_svc out[2], pid_t pid, const char *target, int ids, int mod,
			  int rem, const char *cause)
{
	memset(out, 0, 2 * sizeof(*out));
	out[0].pid = out[1].pid = pid;
	out[0].target = out[1].target = target;
	out[0].ids = out[1].ids = ids;
	out[0].verdict = "claimed";
	out[0].cause = "";
	out[0].mod = mod;
	out[0].rem = rem;
	out[1].verdict = "unclaimed";
	out[1].cause = cause;
}

void truth__tally_trace(struct truth_tally *t, const struct trace_cap *tc, size_t from,
			const struct truth_svc *svcs, int n, int failures)
{
	long long end = now_ms() + 10000;
	struct json_object *lines;
	int got;

	for (;;) {
		lines = trace_read_from(tc, from);
		got = failures_in(lines, svcs, n);
		if (got >= failures || now_ms() >= end)
			break;
		json_object_put(lines);
		sleep_ms(100);
	}
	if (got < failures)
		missing_print(lines, svcs, n, got, failures);
	truth__tally_services(t, lines, svcs, n);
	json_object_put(lines);
}

bool truth__expect(const struct truth_tally *t, const char *what, int right, int unknown)
{
	return truth__expect_wrong(t, what, 0, right, unknown);
}

bool truth__expect_wrong(const struct truth_tally *t, const char *what, int wrong, int right,
			 int unknown)
{
	char name[128];
	bool ok;

	truth__print(t, what);
	snprintf(name, sizeof(name),
		 wrong ? "%s: wrong verdicts (by design)" : "%s: no wrong verdict", what);
	ok = ASSERT_EQ(t->wrong, wrong, name);
	/* The matrix's known cost: right but for the matrix. */
	snprintf(name, sizeof(name), "%s: right verdicts (and the matrix's known cost)", what);
	if (right >= 0)
		ok &= ASSERT_EQ(t->right + t->matrix_cost, right, name);
	/* Every failure is one the test caused, its truth known. */
	snprintf(name, sizeof(name), "%s: failures the test did not cause", what);
	ok &= ASSERT_EQ(t->unchecked, 0, name);
	snprintf(name, sizeof(name), "%s: unknown verdicts", what);
	if (unknown >= 0 && !ASSERT_EQ(t->unknown, unknown, name)) {
		ok = false;
		if (t->first_unknown[0])
			printf("%s: the first unknown verdict: %s\n", what, t->first_unknown);
	}
	return ok;
}
