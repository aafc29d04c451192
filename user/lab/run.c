// SPDX-License-Identifier: GPL-2.0
/*
 * claimlab run: builds a topology of node processes, drives N requests
 * through its root, stops the nodes, and reports what they counted (load
 * multiples, retries, the storm radius, the availability the client saw), as
 * a table on stdout and as JSON. Ctrl-C stops the nodes on the way out.
 */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab.h"

volatile sig_atomic_t lab_interrupted;

enum {
	OPT_TOPOLOGY = 0x100,
	OPT_FAIL,
	OPT_FAIL_RATE,
	OPT_FAIL_MODE,
	OPT_CAPACITY,
	OPT_POLICY,
	OPT_POLICY_AT,
	OPT_OPEN_AT,
	OPT_NO_HEADER_AT,
	OPT_REQUESTS,
	OPT_CONCURRENCY,
	OPT_JSON,
	OPT_WORKDIR,
	OPT_SEED,
	OPT_BURST,
	OPT_TIMEOUT,
	OPT_QUIET,
	OPT_SERVICE_PREFIX,
};

static const struct argp_option run_options[] = {
	{ "topology", OPT_TOPOLOGY, "SPEC", 0,
	  "chain:N (A -> B -> ...) or tree:D:F (depth D, fan-out F; default chain:7)", 0 },
	{ "fail", OPT_FAIL, "NODE", 0, "The node that fails on its own", 0 },
	{ "fail-rate", OPT_FAIL_RATE, "R", 0, "Its share of failed requests (default 1.0)", 0 },
	{ "fail-mode", OPT_FAIL_MODE, "MODE", 0,
	  "internal (default) or overload (503 beyond --capacity in flight)", 0 },
	{ "capacity", OPT_CAPACITY, "N", 0, "Requests in flight the overloaded node serves", 0 },
	{ "policy", OPT_POLICY, "POLICY", 0,
	  "Retry policy of every node: none, retry:R, budget:B, claim:R, claim+budget:B", 1 },
	{ "policy-at", OPT_POLICY_AT, "NODE=POLICY", 0, "Another policy at one node (repeatable)",
	  1 },
	{ "open-at", OPT_OPEN_AT, "NODE", 0, "The call to NODE is fail-open (repeatable)", 1 },
	{ "no-claim-header-at", OPT_NO_HEADER_AT, "NODE", 0,
	  "NODE never writes x-error-claim, as a service without libclaim (repeatable)", 1 },
	{ "budget-burst", OPT_BURST, "TOKENS", 0, "Most tokens a retry budget holds (default 20)",
	  1 },
	{ "requests", OPT_REQUESTS, "N", 0, "Requests the client sends (default 1000)", 2 },
	{ "concurrency", OPT_CONCURRENCY, "C", 0,
	  "Client threads, each with its own keep-alive connection (default 4)", 2 },
	{ "seed", OPT_SEED, "N", 0, "Seed of the nodes' fault PRNGs", 2 },
	{ "timeout", OPT_TIMEOUT, "MS", 0, "Receive timeout of every call (default 10000)", 2 },
	{ "json", OPT_JSON, "FILE", 0, "Write the results here as JSON", 3 },
	{ "workdir", OPT_WORKDIR, "DIR", 0,
	  "Keep the nodes' ready, stats and log files here (default: a temporary directory, "
	  "removed)",
	  3 },
	{ "service-prefix", OPT_SERVICE_PREFIX, "PREFIX", 0,
	  "Name the nodes PREFIX<name> for claimd (CLAIMD_SERVICE), to tell runs apart", 3 },
	{ "quiet", OPT_QUIET, NULL, 0, "No table on stdout", 3 },
	{},
};

static error_t parse_run_opt(int key, char *arg, struct argp_state *state)
{
	struct run_opts *o = state->input;

	switch (key) {
	case OPT_TOPOLOGY:
		o->topology = arg;
		break;
	case OPT_FAIL:
		o->fail = arg;
		break;
	case OPT_FAIL_RATE:
		if (arg_double(arg, 0, 1, &o->fail_rate))
			argp_error(state, "--fail-rate must be 0 to 1: %s", arg);
		break;
	case OPT_FAIL_MODE:
		if (strcmp(arg, "internal") && strcmp(arg, "overload"))
			argp_error(state, "--fail-mode is internal or overload: %s", arg);
		o->fail_mode = arg;
		break;
	case OPT_CAPACITY:
		if (arg_long(arg, 1, 1000000, &o->capacity))
			argp_error(state, "invalid --capacity: %s", arg);
		break;
	case OPT_POLICY:
		if (policy_parse(arg, &o->policy))
			argp_error(state, "invalid --policy: %s", arg);
		break;
	case OPT_POLICY_AT:
		if (o->n_policy_at >= 64 || !strchr(arg, '='))
			argp_error(state, "--policy-at takes NODE=POLICY: %s", arg);
		o->policy_at[o->n_policy_at++] = arg;
		break;
	case OPT_OPEN_AT:
		if (o->n_open_at >= 64)
			argp_error(state, "too many --open-at");
		o->open_at[o->n_open_at++] = arg;
		break;
	case OPT_NO_HEADER_AT:
		if (o->n_no_header_at >= 64)
			argp_error(state, "too many --no-claim-header-at");
		o->no_header_at[o->n_no_header_at++] = arg;
		break;
	case OPT_BURST:
		if (arg_double(arg, 1, 1e9, &o->budget_burst))
			argp_error(state, "invalid --budget-burst: %s", arg);
		break;
	case OPT_REQUESTS:
		if (arg_long(arg, 1, 100000000, &o->requests))
			argp_error(state, "invalid --requests: %s", arg);
		break;
	case OPT_CONCURRENCY:
		if (arg_long(arg, 1, 1024, &o->concurrency))
			argp_error(state, "--concurrency must be 1 to 1024: %s", arg);
		break;
	case OPT_SEED: {
		long v;

		if (arg_long(arg, 0, LONG_MAX, &v))
			argp_error(state, "invalid --seed: %s", arg);
		o->seed = v;
		break;
	}
	case OPT_TIMEOUT: {
		long v;

		if (arg_long(arg, 1, 3600000, &v))
			argp_error(state, "invalid --timeout: %s", arg);
		o->timeout_ms = v;
		break;
	}
	case OPT_JSON:
		o->json = arg;
		break;
	case OPT_WORKDIR:
		if (strlen(arg) > 256)
			argp_error(state, "--workdir: a path of 256 characters at most");
		o->workdir = arg;
		break;
	case OPT_QUIET:
		o->quiet = true;
		break;
	case OPT_SERVICE_PREFIX:
		if (strlen(arg) > 32)
			argp_error(state, "--service-prefix too long: %s", arg);
		o->service_prefix = arg;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument: %s", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int node_named(const struct topo *t, const char *name, const char *opt)
{
	int i = topo_find(t, name);

	if (i < 0)
		pr_err("%s: no node '%s' in %s", opt, name, t->spec);
	return i;
}

/* Policies, the failing node, fail-open calls and header-less nodes. */
static int apply_options(struct topo *t, const struct run_opts *o)
{
	int i, k;

	for (i = 0; i < t->n; i++)
		t->nodes[i].policy = o->policy;
	for (k = 0; k < o->n_policy_at; k++) {
		char name[LAB_NAME_MAX];
		const char *eq = strchr(o->policy_at[k], '=');

		snprintf(name, sizeof(name), "%.*s", (int)(eq - o->policy_at[k]), o->policy_at[k]);
		i = node_named(t, name, "--policy-at");
		if (i < 0)
			return -1;
		if (policy_parse(eq + 1, &t->nodes[i].policy)) {
			pr_err("--policy-at: invalid policy '%s'", eq + 1);
			return -1;
		}
	}
	if (o->fail) {
		i = node_named(t, o->fail, "--fail");
		if (i < 0)
			return -1;
		t->nodes[i].fail = true;
	}
	for (k = 0; k < o->n_open_at; k++) {
		i = node_named(t, o->open_at[k], "--open-at");
		if (i < 0)
			return -1;
		if (!i) {
			pr_err("--open-at: the root has no caller but the client");
			return -1;
		}
		t->nodes[i].open = true;
	}
	for (k = 0; k < o->n_no_header_at; k++) {
		i = node_named(t, o->no_header_at[k], "--no-claim-header-at");
		if (i < 0)
			return -1;
		t->nodes[i].no_claim_header = true;
	}
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	lab_interrupted = 1;
}

static int write_json(const char *path, struct json_object *rep)
{
	int err = lab_write_atomic(path,
				   json_object_to_json_string_ext(
					   rep, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));

	if (err)
		pr_err("cannot write %s: %s", path, strerror(-err));
	return err;
}

static int drive(struct topo *t, const struct run_opts *o, const char *dir)
{
	struct json_object *rep = NULL;
	struct load_result lr;
	char label[256], policy[192];
	int err;

	report_policy_label(o, policy, sizeof(policy));
	snprintf(label, sizeof(label), "%s %s", t->spec, policy);
	pr_info("%s: starting %d nodes", label, t->n);
	err = nodes_start(t, o, dir);
	if (err) {
		nodes_stop(t, dir, false);
		return err;
	}
	pr_info("%s: %ld requests, %ld connections", label, o->requests, o->concurrency);
	err = load_run(t->nodes[0].port, o->requests, o->concurrency, o->timeout_ms, label, &lr);
	if (err) {
		pr_err("%s: the load did not finish (%s)", label, strerror(-err));
		nodes_stop(t, dir, false);
		return err;
	}
	err = nodes_stop(t, dir, true);
	if (err)
		return err;
	pr_info("%s: done in %.1f s", label, lr.elapsed_s);
	rep = report_build(t, o, &lr);
	if (!rep) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	if (!o->quiet)
		report_print(t, rep);
	if (o->json)
		err = write_json(o->json, rep);
	json_object_put(rep);
	return err;
}

int cmd_run(int argc, char **argv)
{
	static const struct argp argp = {
		.options = run_options,
		.parser = parse_run_opt,
		.doc = "claimlab run -- a topology of lab nodes under load: load multiples, "
		       "retries and storm radius.",
	};
	struct run_opts o = {
		.topology = "chain:7",
		.fail_rate = 1.0,
		.fail_mode = "internal",
		.capacity = 8,
		.requests = 1000,
		.concurrency = 4,
		.seed = LAB_DEFAULT_SEED,
		.budget_burst = 20,
		.timeout_ms = 10000,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	struct topo t = { 0 };
	char tmp[] = "/tmp/claimlab.XXXXXX";
	const char *dir;
	int err = 1;

	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return 2;
	log_set_prefix("claimlab");
	if (topo_build(&t, o.topology) || apply_options(&t, &o))
		goto cleanup;
	if (o.workdir) {
		if (mkdir(o.workdir, 0755) && errno != EEXIST) {
			pr_err("cannot make %s: %s", o.workdir, strerror(errno));
			goto cleanup;
		}
		dir = o.workdir;
	} else {
		dir = mkdtemp(tmp);
		if (!dir) {
			pr_err("cannot make a temporary directory: %s", strerror(errno));
			goto cleanup;
		}
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	err = drive(&t, &o, dir) ? 1 : 0;
	if (!o.workdir) {
		nodes_remove_files(&t, dir);
		rmdir(dir);
	}
	if (lab_interrupted)
		err = 130;
cleanup:
	topo_free(&t);
	return err;
}
