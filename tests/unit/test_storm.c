// SPDX-License-Identifier: GPL-2.0
/*
 * Retry-storm arithmetic and seed 003's decision (user/claimctl/storm.c): fan-out
 * (1+R)^H and per-hop products; the boundaries (fan-out == slack is
 * degraded, just above is do-not-ship, a deadline overrides everything, a
 * shared budget is safe only when 1+B fits the slack, a per-hop budget
 * caps R); the storm radius (longest run of retrying edges); observed
 * retries per hop; the recommended policy; the walk over hand-made graphs
 * (chains, trees, cycles, claim-aware chains); and 'claimctl storm --file'
 * end to end on a saved graph, text and JSON.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "storm.h"
#include "test_progs.h"

static const struct storm_policy plain = { .slack = 4,
					   .shared_budget = STORM_NO_BUDGET,
					   .hop_budget = STORM_NO_BUDGET };

void test_storm_fanout(void)
{
	double ones[3] = { 1, 1, 1 }, mixed[3] = { 1, 0, 2 };

	ASSERT_FLOAT_NEAR(storm__fanout_uniform(1, 3), 8, 1e-12, "(1+1)^3");
	ASSERT_FLOAT_NEAR(storm__fanout_uniform(3, 4), 256, 1e-12, "seed: H=4 R=3 is 256");
	ASSERT_FLOAT_NEAR(storm__fanout_uniform(0.1, 3), 1.331, 1e-12, "10%% budget, 3 hops");
	ASSERT_FLOAT_NEAR(storm__fanout(ones, 3), storm__fanout_uniform(1, 3), 1e-12, "product");
	ASSERT_FLOAT_NEAR(storm__fanout(mixed, 3), 6, 1e-12, "2 * 1 * 3");
	ASSERT_FLOAT_NEAR(storm__fanout(ones, 0), 1, 1e-12, "no hops");
}

void test_storm_decision(void)
{
	struct storm_policy p = plain;

	/* The acceptance case: one retry per hop, slack 4. */
	ASSERT_EQ(storm__decide(storm__fanout_uniform(1, 2), &p), STORM_DEGRADED,
		  "fan-out == slack: degraded, not do-not-ship");
	ASSERT_EQ(storm__decide(storm__fanout_uniform(1, 3), &p), STORM_DO_NOT_SHIP, "H=3: 8 > 4");
	ASSERT_EQ(storm__decide(4.000001, &p), STORM_DO_NOT_SHIP, "just above the slack");
	ASSERT_EQ(storm__decide(1, &p), STORM_SAFE, "no retries: nothing to amplify");
	ASSERT_EQ(storm__decide(1.0001, &p), STORM_DEGRADED, "any retry: degraded");
	/* (1.1)^3 is 1.3310000000000004 in doubles: still within a slack of 1.331. */
	p.slack = 1.331;
	ASSERT_EQ(storm__decide(storm__fanout_uniform(0.1, 3), &p), STORM_DEGRADED,
		  "rounding does not tip the boundary");
	/* Seed 003's RetryBudgetGate: verify() passes at fan-out == slack. */
	p.slack = 256;
	ASSERT_EQ(storm__decide(storm__fanout_uniform(3, 4), &p), STORM_DEGRADED, "256 <= 256");
	p.slack = 255;
	ASSERT_EQ(storm__decide(storm__fanout_uniform(3, 4), &p), STORM_DO_NOT_SHIP, "256 > 255");
	/* A deadline bounds the work whatever R and H. */
	p.deadline = true;
	ASSERT_EQ(storm__decide(1e9, &p), STORM_DEADLINE_BOUNDED, "deadline overrides");
	ASSERT_EQ(storm__decide(1, &p), STORM_DEADLINE_BOUNDED, "deadline, no retries");
	/* A budget shared across hops: sized to the slack or not. */
	p = plain;
	p.shared_budget = 0.1;
	ASSERT_EQ(storm__decide(1e9, &p), STORM_SAFE, "1.1 <= 4: shared budget safe");
	p.shared_budget = 3;
	ASSERT_EQ(storm__decide(1e9, &p), STORM_SAFE, "1+B == slack: safe");
	p.shared_budget = 3.5;
	ASSERT_EQ(storm__decide(2, &p), STORM_DO_NOT_SHIP, "budget beyond the slack");
	p.deadline = true;
	ASSERT_EQ(storm__decide(2, &p), STORM_DEADLINE_BOUNDED, "deadline beats the budget");

	ASSERT_STREQ(storm__decision_name(STORM_DO_NOT_SHIP), "do-not-ship", "name");
	ASSERT_STREQ(storm__decision_name(STORM_DEADLINE_BOUNDED), "deadline-bounded", "name");
	ASSERT_EQ(storm__worse(STORM_DEGRADED, STORM_DO_NOT_SHIP), STORM_DO_NOT_SHIP, "worse");
	ASSERT_EQ(storm__worse(STORM_SAFE, STORM_DEGRADED), STORM_DEGRADED, "worse");
	ASSERT_EQ(storm__worse(STORM_DEADLINE_BOUNDED, STORM_SAFE), STORM_DEADLINE_BOUNDED,
		  "worse");
}

void test_storm_radius(void)
{
	double all[3] = { 1, 1, 1 }, gap[4] = { 1, 0, 1, 1 }, none[2] = { 0, 0 };
	double last[3] = { 0, 0, 1 };

	ASSERT_EQ(storm__radius(all, 3), 3, "every hop retries");
	ASSERT_EQ(storm__radius(gap, 4), 2, "longest run");
	ASSERT_EQ(storm__radius(none, 2), 0, "no retries");
	ASSERT_EQ(storm__radius(last, 3), 1, "claim-aware: the edge nearest the failure");
	ASSERT_EQ(storm__radius(all, 0), 0, "no hops");

	ASSERT_FLOAT_NEAR(storm__observed_r(200, 100), 1, 1e-12, "every call retried once");
	ASSERT_FLOAT_NEAR(storm__observed_r(110, 10), 0.1, 1e-12, "10%% of first calls");
	ASSERT_FLOAT_NEAR(storm__observed_r(50, 0), 0, 1e-12, "no retries");
	ASSERT_FLOAT_NEAR(storm__observed_r(3, 3), 3, 1e-12, "no first call counted");
	ASSERT_FLOAT_NEAR(storm__observed_r(0, 0), 0, 1e-12, "no calls");
}

void test_storm_recommend(void)
{
	struct storm_policy p = plain;

	ASSERT_STREQ(storm__recommend(STORM_DO_NOT_SHIP, 1, &p), "claim-aware",
		     "1+R = 2 fits slack 4: claim-aware alone");
	ASSERT_STREQ(storm__recommend(STORM_DEGRADED, 1, &p), "claim-aware",
		     "degraded: claim-aware");
	ASSERT_STREQ(storm__recommend(STORM_DO_NOT_SHIP, 4, &p), "claim-aware+shared-budget",
		     "1+R = 5 > 4: one hop alone is too much");
	ASSERT_STREQ(storm__recommend(STORM_SAFE, 0, &p), "per-hop", "safe");
	p.shared_budget = 0.1;
	ASSERT_STREQ(storm__recommend(STORM_SAFE, 1, &p), "shared-budget", "safe with a budget");
	ASSERT_STREQ(storm__recommend(STORM_DEADLINE_BOUNDED, 9, &p), "deadline-bounded",
		     "deadline");
}

/* An edge with R = retries / (calls - retries) from 100 first calls. */
static void add_edge(struct json_object *edges, const char *a, const char *b, double r)
{
	struct json_object *e = json_object_new_object();

	json_object_object_add(e, "caller", json_object_new_string(a));
	json_object_object_add(e, "callee", json_object_new_string(b));
	json_object_object_add(e, "calls", json_object_new_int64(100 + llround(100 * r)));
	json_object_object_add(e, "retries", json_object_new_int64(llround(100 * r)));
	json_object_array_add(edges, e);
}

static struct json_object *graph_of(const char *const spec[], const double *r, int n)
{
	struct json_object *g = json_object_new_object(), *edges = json_object_new_array();
	int i;

	for (i = 0; i < n; i++)
		add_edge(edges, spec[2 * i], spec[2 * i + 1], r[i]);
	json_object_object_add(g, "version", json_object_new_int(1));
	json_object_object_add(g, "nodes", json_object_new_array());
	json_object_object_add(g, "edges", edges);
	return g;
}

static struct json_object *root_of(struct json_object *rep, const char *name)
{
	struct json_object *roots = j_get(rep, "roots");
	size_t i;

	for (i = 0; i < json_object_array_length(roots); i++)
		if (!strcmp(j_str(json_object_array_get_idx(roots, i), "root"), name))
			return json_object_array_get_idx(roots, i);
	return NULL;
}

static struct json_object *analyse(struct json_object *g, struct storm_opts *o)
{
	char err[128] = "";
	struct json_object *rep = storm__analyse(g, o, err, sizeof(err));

	if (!rep)
		printf("storm__analyse: %s\n", err);
	return rep;
}

void test_storm_walk(void)
{
	static const char *const chain[] = { "A", "B", "B", "C", "C", "D" };
	static const char *const tree[] = { "A", "B", "B", "C", "A", "D" };
	static const char *const cycle[] = { "A", "B", "B", "C", "C", "B" };
	double ones[3] = { 1, 1, 1 }, claim[3] = { 0, 0, 1 }, tr[3] = { 1, 1, 3 };
	struct storm_opts o = { .policy = plain, .retries = STORM_OBSERVED_R };
	struct json_object *g, *rep, *r, *p;
	char err[128];

	/* Observed: every call retried once, A -> B -> C -> D, slack 4. */
	g = graph_of(chain, ones, 3);
	rep = analyse(g, &o);
	r = root_of(rep, "A");
	if (ASSERT_OK_PTR(r, "root A")) {
		p = json_object_array_get_idx(j_get(r, "paths"), 0);
		ASSERT_EQ(json_object_array_length(j_get(rep, "roots")), 1, "one root");
		ASSERT_EQ(j_int(p, "hops"), 3, "H = 3");
		ASSERT_FLOAT_NEAR(json_object_get_double(j_get(p, "fanout")), 8, 1e-9, "8x");
		ASSERT_STREQ(j_str(p, "decision"), "do-not-ship", "8 > 4");
		ASSERT_EQ(j_int(r, "radius_now"), 3, "radius 3 now");
		ASSERT_EQ(j_int(r, "radius_claim_aware"), 1, "radius 1 claim-aware");
		ASSERT_STREQ(j_str(r, "policy"), "claim-aware", "policy");
		ASSERT_STREQ(j_str(r, "seed_policy"), "shared-budget", "seed's dispatch");
	}
	json_object_put(rep);
	/* The same with a deadline; then with a per-hop budget of 10%. */
	o.policy.deadline = true;
	rep = analyse(g, &o);
	ASSERT_STREQ(j_str(root_of(rep, "A"), "decision"), "deadline-bounded", "deadline");
	json_object_put(rep);
	o.policy.deadline = false;
	o.policy.hop_budget = 0.1;
	rep = analyse(g, &o);
	p = json_object_array_get_idx(j_get(root_of(rep, "A"), "paths"), 0);
	ASSERT_FLOAT_NEAR(json_object_get_double(j_get(p, "fanout")), 1.331, 1e-6, "1.1^3");
	ASSERT_STREQ(j_str(p, "decision"), "degraded", "per-hop budget: degraded");
	json_object_put(rep);
	o.policy.hop_budget = STORM_NO_BUDGET;
	/* --retries overrides what was observed. */
	o.retries = 0;
	rep = analyse(g, &o);
	ASSERT_STREQ(j_str(root_of(rep, "A"), "decision"), "safe", "R = 0: safe");
	ASSERT_EQ(j_int(root_of(rep, "A"), "radius_now"), 0, "no radius");
	json_object_put(rep);
	o.retries = STORM_OBSERVED_R;
	json_object_put(g);

	/* Claim-aware: only C -> D retries. */
	g = graph_of(chain, claim, 3);
	rep = analyse(g, &o);
	r = root_of(rep, "A");
	ASSERT_EQ(j_int(r, "radius_now"), 1, "claim-aware radius 1");
	ASSERT_STREQ(j_str(r, "decision"), "degraded", "2 <= 4");
	json_object_put(rep);
	json_object_put(g);

	/* A tree: A -> B -> C (R 1, 1) and A -> D (R 3): the root takes the worst. */
	g = graph_of(tree, tr, 3);
	rep = analyse(g, &o);
	r = root_of(rep, "A");
	ASSERT_EQ(json_object_array_length(j_get(r, "paths")), 2, "two paths");
	ASSERT_EQ(j_int(r, "max_hops"), 2, "longest path");
	ASSERT_FLOAT_NEAR(json_object_get_double(j_get(r, "max_fanout")), 4, 1e-9, "widest");
	ASSERT_STREQ(j_str(r, "decision"), "degraded", "4 <= 4 on both");
	ASSERT_STREQ(j_str(r, "policy"), "claim-aware", "policy");
	json_object_put(rep);
	o.policy.slack = 3.5;
	rep = analyse(g, &o);
	r = root_of(rep, "A");
	ASSERT_STREQ(j_str(r, "decision"), "do-not-ship", "4 > 3.5");
	ASSERT_STREQ(j_str(r, "policy"), "claim-aware+shared-budget", "1+3 > 3.5");
	json_object_put(rep);
	o.policy.slack = 4;
	json_object_put(g);

	/* A cycle below the root ends the path where it turns back. */
	g = graph_of(cycle, ones, 3);
	rep = analyse(g, &o);
	r = root_of(rep, "A");
	ASSERT_EQ(json_object_array_length(j_get(rep, "roots")), 1, "B and C are called");
	ASSERT_EQ(json_object_array_length(j_get(r, "paths")), 1, "one simple path");
	ASSERT_EQ(j_int(json_object_array_get_idx(j_get(r, "paths"), 0), "hops"), 2, "A>B>C");
	json_object_put(rep);
	json_object_put(g);

	/* Not a graph. */
	g = json_tokener_parse("{\"version\":1,\"nodes\":[],\"edges\":[{\"caller\":\"A\"}]}");
	ASSERT_FALSE(storm__analyse(g, &o, err, sizeof(err)), "edge without callee");
	ASSERT_OK_PTR(strstr(err, "callee"), "the reason says so");
	json_object_put(g);
	g = json_tokener_parse("[1,2]");
	ASSERT_FALSE(storm__analyse(g, &o, err, sizeof(err)), "an array");
	json_object_put(g);
}

/* claimctl storm on a graph saved in a file: the acceptance case. */
void test_storm_cli(void)
{
	static const char *const chain[] = { "sA", "sB", "sB", "sC", "sC", "sD" };
	double none[3] = { 0, 0, 0 };
	char dir[H_DIR], file[H_PATH], exe[H_PATH], out[16384];
	struct json_object *g = graph_of(chain, none, 3), *rep = NULL, *r;
	int st;

	if (!ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "tmpdir"))
		goto out;
	snprintf(file, sizeof(file), "%s/g.json", dir);
	snprintf(exe, sizeof(exe), "%s/claimctl", test__build_dir());
	ASSERT_OK(json_object_to_file(file, g), "save the graph");
	{
		const char *argv[] = { exe, "storm",   "--file", file, "--retries",
				       "1", "--slack", "4",	 NULL };

		st = proc_run(argv, out, sizeof(out), 10000);
		printf("%s", out);
		ASSERT_EQ(st, 0, "exit 0");
		ASSERT_OK_PTR(strstr(out, "do-not-ship"), "do-not-ship");
		ASSERT_OK_PTR(strstr(out, "storm radius 3 now, 1 with claim-aware retries"),
			      "radius 3 now, 1 claim-aware");
		ASSERT_OK_PTR(strstr(out, "sA > sB > sC > sD"), "the path");
	}
	{
		const char *argv[] = { exe, "storm",   "--file", file,	   "--retries",
				       "1", "--slack", "4",	 "--json", NULL };

		st = proc_run(argv, out, sizeof(out), 10000);
		rep = json_tokener_parse(out);
		if (ASSERT_EQ(st, 0, "exit 0") && ASSERT_OK_PTR(rep, "JSON")) {
			r = root_of(rep, "sA");
			ASSERT_STREQ(j_str(r, "decision"), "do-not-ship", "decision");
			ASSERT_EQ(j_int(r, "radius_now"), 3, "radius now");
			ASSERT_EQ(j_int(r, "radius_claim_aware"), 1, "radius claim-aware");
			ASSERT_EQ(j_int(r, "max_hops"), 3, "H");
			ASSERT_FLOAT_NEAR(json_object_get_double(j_get(rep, "slack")), 4, 0,
					  "slack");
		}
		json_object_put(rep);
		rep = NULL;
	}
	{
		const char *argv[] = { exe,	  "storm", "--file",	 file,	   "--retries", "1",
				       "--slack", "4",	   "--deadline", "--json", NULL };

		st = proc_run(argv, out, sizeof(out), 10000);
		rep = json_tokener_parse(out);
		ASSERT_STREQ(j_str(root_of(rep, "sA"), "decision"), "deadline-bounded", "deadline");
	}
	{
		const char *argv[] = { exe, "storm", "--file", file, "--slack", "0", NULL };

		ASSERT_NEQ(proc_run(argv, out, sizeof(out), 10000), 0, "slack 0 refused");
		ASSERT_OK_PTR(strstr(out, "--slack"), "says which option");
	}
	{
		const char *argv[] = { exe, "storm", "--file", "/nonexistent/g.json", NULL };

		ASSERT_NEQ(proc_run(argv, out, sizeof(out), 10000), 0, "missing file");
		ASSERT_OK_PTR(strstr(out, "cannot read a graph"), "says why");
	}
out:
	json_object_put(rep);
	json_object_put(g);
	tmpdir_remove(dir);
}
