// SPDX-License-Identifier: GPL-2.0
/*
 * libclaim without claimd: every row of the caller's table in design.md
 * (transport failure, claimed, unclaimed, no header) through
 * claim_should_retry(), with max_attempts, the budget (exhaustion, refill,
 * burst, a token spent only on a retry) and the deadline; claim_open() on a
 * map that is not there (a handle that answers unknown, never blocks); the
 * x-error-claim header formatted, parsed, and read back by the project's
 * HTTP framer; and threads sharing a handle and a budget (the counts add up).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "claim.h"
#include "http_parse.h"
#include "test_progs.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static enum claim_decision decide(int status, enum claim_verdict header, int attempt,
				  int max_attempts, struct claim_budget *b)
{
	struct claim_outcome out = { .status = status, .header = header };
	struct claim_retry_opts opts = {
		.attempt = attempt,
		.max_attempts = max_attempts,
		.budget = b,
	};

	return claim_should_retry(&out, &opts);
}

void test_libclaim_caller_table(void)
{
	struct claim_budget *b = claim_budget_new(1.0, 100);
	struct claim_outcome ok = { .status = 200 };

	if (!ASSERT_OK_PTR(b, "budget"))
		return;
	if (test__start_subtest("transport_failure")) {
		ASSERT_EQ(decide(0, CLAIM_NONE, 1, 0, NULL), CLAIM_RETRY, "refused: retry");
		/* No header to read: retried like a claimed failure, up to max_attempts. */
		ASSERT_EQ(decide(0, CLAIM_NONE, 2, 3, NULL), CLAIM_RETRY, "again, under max");
		ASSERT_EQ(decide(0, CLAIM_NONE, 2, 0, NULL), CLAIM_DONE_ATTEMPTS, "default 2");
	}
	if (test__start_subtest("claimed")) {
		ASSERT_EQ(decide(503, CLAIM_CLAIMED, 1, 0, NULL), CLAIM_RETRY, "claimed: retry");
		ASSERT_EQ(decide(503, CLAIM_CLAIMED, 2, 3, NULL), CLAIM_RETRY, "more than once");
		ASSERT_EQ(decide(503, CLAIM_CLAIMED, 3, 3, NULL), CLAIM_DONE_ATTEMPTS, "max 3");
	}
	if (test__start_subtest("unclaimed")) {
		double before;

		claim_budget_request(b);
		before = claim_budget_tokens(b);
		ASSERT_EQ(decide(502, CLAIM_UNCLAIMED, 1, 5, b), CLAIM_DONE_UNCLAIMED,
			  "unclaimed: never");
		ASSERT_FLOAT_NEAR(claim_budget_tokens(b), before, 1e-9, "no token spent");
		ASSERT_EQ(decide(500, CLAIM_UNCLAIMED, 1, 0, NULL), CLAIM_DONE_UNCLAIMED, "500");
	}
	if (test__start_subtest("no_header")) {
		ASSERT_EQ(decide(503, CLAIM_NONE, 1, 5, NULL), CLAIM_RETRY, "once");
		ASSERT_EQ(decide(503, CLAIM_NONE, 2, 5, NULL), CLAIM_DONE_ONCE, "not twice");
		ASSERT_EQ(decide(503, CLAIM_UNKNOWN, 2, 5, NULL), CLAIM_DONE_ONCE, "unknown too");
	}
	if (test__start_subtest("not_a_failure")) {
		struct claim_retry_opts opts = { .attempt = 1, .fail_status = 400 };
		struct claim_outcome nf = { .status = 404 };

		ASSERT_EQ(claim_should_retry(&ok, NULL), CLAIM_DONE_OK, "200, no opts");
		ASSERT_EQ(decide(404, CLAIM_NONE, 1, 0, NULL), CLAIM_DONE_OK, "404 by default");
		ASSERT_EQ(decide(499, CLAIM_CLAIMED, 1, 0, NULL), CLAIM_DONE_OK, "499");
		ASSERT_EQ(claim_should_retry(&nf, &opts), CLAIM_RETRY, "404 with fail_status 400");
	}
	if (test__start_subtest("names")) {
		ASSERT_STREQ(claim_decision_name(CLAIM_RETRY), "retry", "retry");
		ASSERT_STREQ(claim_decision_name(CLAIM_DONE_ONCE), "no-header-retried-once",
			     "once");
		ASSERT_STREQ(claim_decision_name(CLAIM_DONE_DEADLINE), "deadline", "deadline");
		ASSERT_STREQ(claim_decision_name((enum claim_decision)99), "?", "out of range");
		ASSERT_STREQ(claim_verdict_name(CLAIM_CLAIMED), "claimed", "claimed");
		ASSERT_STREQ(claim_verdict_name(CLAIM_UNCLAIMED), "unclaimed", "unclaimed");
		ASSERT_STREQ(claim_verdict_name(CLAIM_NONE), "unknown", "none");
		ASSERT_STREQ(claim_rule_name(CLAIM_RULE_FAIL_CLOSE), "fail-close-edge", "a rule");
		ASSERT_STREQ(claim_rule_name(CLAIM_RULE_OPAQUE_CALL), "opaque-call", "the last");
		ASSERT_STREQ(claim_rule_name(CLAIM_RULE__COUNT), "none", "out of range");
	}
	claim_budget_free(b);
}

void test_libclaim_budget(void)
{
	struct claim_budget *b;
	int i, got;

	if (test__start_subtest("exhaustion_and_refill")) {
		b = claim_budget_new(0.1, 5);
		if (!ASSERT_OK_PTR(b, "budget"))
			return;
		ASSERT_EQ(claim_budget_take(b), 0, "starts empty");
		for (i = 0; i < 9; i++)
			claim_budget_request(b);
		ASSERT_EQ(claim_budget_take(b), 0, "nine requests: 0.9 token");
		claim_budget_request(b);
		/* Ten tenths in floating point: the epsilon in take() forgives 0.999... */
		ASSERT_EQ(claim_budget_take(b), 1, "ten requests: one retry");
		ASSERT_EQ(claim_budget_take(b), 0, "spent");
		for (i = 0; i < 1000; i++)
			claim_budget_request(b);
		ASSERT_FLOAT_NEAR(claim_budget_tokens(b), 5, 1e-9, "capped at the burst");
		for (got = 0; claim_budget_take(b); got++)
			;
		ASSERT_EQ(got, 5, "burst of five retries");
		/* Exactly ratio retries per request over a long run. */
		for (got = 0, i = 0; i < 2000; i++) {
			claim_budget_request(b);
			got += claim_budget_take(b);
		}
		ASSERT_GE(got, 199, "10% of 2000");
		ASSERT_LE(got, 200, "10% of 2000");
		claim_budget_free(b);
	}
	if (test__start_subtest("decision_spends")) {
		b = claim_budget_new(0.5, 1);
		if (!ASSERT_OK_PTR(b, "budget"))
			return;
		ASSERT_EQ(decide(503, CLAIM_CLAIMED, 1, 0, b), CLAIM_DONE_BUDGET, "empty: denied");
		claim_budget_request(b);
		claim_budget_request(b);
		ASSERT_EQ(decide(503, CLAIM_NONE, 1, 0, b), CLAIM_RETRY, "a token: retry");
		ASSERT_FLOAT_NEAR(claim_budget_tokens(b), 0, 1e-9, "the token is spent");
		claim_budget_request(b);
		claim_budget_request(b);
		ASSERT_EQ(decide(503, CLAIM_CLAIMED, 2, 2, b), CLAIM_DONE_ATTEMPTS, "max first");
		ASSERT_FLOAT_NEAR(claim_budget_tokens(b), 1, 1e-9, "no token for a refusal");
		ASSERT_EQ(decide(0, CLAIM_NONE, 1, 0, b), CLAIM_RETRY, "transport: within budget");
		claim_budget_free(b);
	}
	if (test__start_subtest("limits")) {
		b = claim_budget_new(0, 0);
		if (!ASSERT_OK_PTR(b, "budget"))
			return;
		for (i = 0; i < 100; i++)
			claim_budget_request(b);
		ASSERT_EQ(claim_budget_take(b), 0, "ratio 0: never");
		claim_budget_free(b);
		b = claim_budget_new(2, 0.5);
		claim_budget_request(b);
		ASSERT_FLOAT_NEAR(claim_budget_tokens(b), 1, 1e-9, "burst at least 1");
		claim_budget_free(b);
		/* NULL is no budget: always allows, never crashes. */
		claim_budget_request(NULL);
		ASSERT_EQ(claim_budget_take(NULL), 1, "no budget allows");
		ASSERT_FLOAT_NEAR(claim_budget_tokens(NULL), 0, 0, "no budget: 0 tokens");
		claim_budget_free(NULL);
	}
}

void test_libclaim_deadline(void)
{
	struct claim_outcome out = { .status = 503, .header = CLAIM_CLAIMED };
	struct claim_retry_opts opts = { .attempt = 1 };
	struct claim_budget *b = claim_budget_new(1, 10);
	uint64_t now = mono_ns();

	if (!ASSERT_OK_PTR(b, "budget"))
		return;
	opts.deadline_ns = now + 5000000000ull;
	opts.attempt_ns = 1000000;
	ASSERT_EQ(claim_should_retry(&out, &opts), CLAIM_RETRY, "time left");
	opts.attempt_ns = 10000000000ull;
	ASSERT_EQ(claim_should_retry(&out, &opts), CLAIM_DONE_DEADLINE, "an attempt is too long");
	opts.deadline_ns = now > 1 ? now - 1 : 1;
	opts.attempt_ns = 0;
	ASSERT_EQ(claim_should_retry(&out, &opts), CLAIM_DONE_DEADLINE, "deadline passed");
	/* The deadline refuses before the budget is asked: no token spent. */
	claim_budget_request(b);
	opts.budget = b;
	ASSERT_EQ(claim_should_retry(&out, &opts), CLAIM_DONE_DEADLINE, "with a budget");
	ASSERT_FLOAT_NEAR(claim_budget_tokens(b), 1, 1e-9, "token kept");
	/* Unclaimed wins over everything: no retry even with time and tokens. */
	out.header = CLAIM_UNCLAIMED;
	opts.deadline_ns = now + 5000000000ull;
	ASSERT_EQ(claim_should_retry(&out, &opts), CLAIM_DONE_UNCLAIMED, "unclaimed first");
	claim_budget_free(b);
}

void test_libclaim_no_claimd(void)
{
	static const char *const paths[] = {
		"/sys/fs/bpf/claimd-no-such-dir/verdicts", "/nonexistent/verdicts",
		"/dev/null", /* exists, is not a BPF object */
	};
	struct claim_result r;
	struct claim *c;
	uint64_t t0;
	size_t i;
	int k;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		t0 = mono_ns();
		c = claim_open(paths[i]);
		if (!ASSERT_OK_PTR(c, paths[i]))
			continue;
		ASSERT_EQ(claim_connected(c), 0, "not connected");
		memset(&r, 0xff, sizeof(r));
		ASSERT_EQ(claim_current(c, &r), CLAIM_UNKNOWN, "unknown");
		ASSERT_EQ(r.verdict, CLAIM_UNKNOWN, "result: unknown");
		ASSERT_EQ(r.cause_known, 0, "no cause");
		for (k = 0; k < 100000; k++)
			claim_current(c, NULL);
		/* Never blocks: open and 100k lookups well under a second. */
		ASSERT_LT(mono_ns() - t0, 1000000000ull, "fast");
		claim_close(c);
	}
	setenv(CLAIM_ENV_PATH, paths[1], 1);
	c = claim_open(NULL);
	if (ASSERT_OK_PTR(c, "from the environment")) {
		ASSERT_EQ(claim_connected(c), 0, "env path missing: not connected");
		claim_close(c);
	}
	ASSERT_EQ(claim_current(NULL, NULL), CLAIM_UNKNOWN, "NULL handle: unknown");
	ASSERT_EQ(claim_connected(NULL), 0, "NULL handle: not connected");
	claim_close(NULL);
}

static void on_claim(void *ctx, struct http_framer *f, __u32 ev)
{
	if (ev & HTTP_EV_HEAD_END)
		*(int *)ctx = f->claim;
}

/* The claim the project's framer reads in a response carrying header. */
static int framer_claim(const char *header)
{
	char resp[256];
	struct http_framer f;
	int claim = -1, n;

	n = snprintf(resp, sizeof(resp),
		     "HTTP/1.1 503 Service Unavailable\r\n%s"
		     "Content-Length: 0\r\n\r\n",
		     header);
	http_framer_init(&f, HTTP_KIND_RESPONSE, 0);
	http_feed(&f, (const __u8 *)resp, n, on_claim, &claim);
	return claim;
}

void test_libclaim_header(void)
{
	char buf[64], tiny[8];

	ASSERT_EQ(claim_format_header(CLAIM_CLAIMED, buf, sizeof(buf)), 24, "claimed length");
	ASSERT_STREQ(buf, "x-error-claim: claimed\r\n", "claimed");
	ASSERT_EQ(framer_claim(buf), HTTP_CLAIM_CLAIMED, "the framer reads claimed");
	ASSERT_EQ(claim_format_header(CLAIM_UNCLAIMED, buf, sizeof(buf)), 26, "unclaimed length");
	ASSERT_STREQ(buf, "x-error-claim: unclaimed\r\n", "unclaimed");
	ASSERT_EQ(framer_claim(buf), HTTP_CLAIM_UNCLAIMED, "the framer reads unclaimed");
	ASSERT_EQ(claim_format_header(CLAIM_UNKNOWN, buf, sizeof(buf)), 0, "unknown: nothing");
	ASSERT_STREQ(buf, "", "unknown: empty");
	ASSERT_EQ(framer_claim(buf), HTTP_CLAIM_NONE, "no header: none");
	ASSERT_EQ(claim_format_header(CLAIM_NONE, buf, sizeof(buf)), 0, "none: nothing");
	ASSERT_EQ(claim_format_header(CLAIM_CLAIMED, tiny, sizeof(tiny)), -1, "too small");
	ASSERT_EQ(tiny[sizeof(tiny) - 1], 0, "still terminated");

	ASSERT_EQ(claim_parse_header("claimed", 7), CLAIM_CLAIMED, "claimed");
	ASSERT_EQ(claim_parse_header("unclaimed", 9), CLAIM_UNCLAIMED, "unclaimed");
	ASSERT_EQ(claim_parse_header(" \tUnClaimed \r\n", 14), CLAIM_UNCLAIMED, "blanks, case");
	ASSERT_EQ(claim_parse_header("CLAIMED", 7), CLAIM_CLAIMED, "upper case");
	ASSERT_EQ(claim_parse_header("claimedx", 8), CLAIM_NONE, "longer word");
	ASSERT_EQ(claim_parse_header("claimed", 6), CLAIM_NONE, "length counts");
	ASSERT_EQ(claim_parse_header("", 0), CLAIM_NONE, "empty");
	ASSERT_EQ(claim_parse_header("   ", 3), CLAIM_NONE, "blank");
	ASSERT_EQ(claim_parse_header("maybe", 5), CLAIM_NONE, "other word");
	/* What format writes, parse reads back. */
	claim_format_header(CLAIM_UNCLAIMED, buf, sizeof(buf));
	ASSERT_EQ(claim_parse_header(buf + strlen(CLAIM_HEADER ":"),
				     strlen(buf) - strlen(CLAIM_HEADER ":")),
		  CLAIM_UNCLAIMED, "round trip");
}

#define THREADS 8
#define PER_THR 20000
#define RATIO	0.25 /* exact in binary: the sums are exact */

struct thr {
	struct claim *c;
	struct claim_budget *b;
	int taken;
	int unknown;
};

static void *worker(void *arg)
{
	struct thr *t = arg;
	int i;

	for (i = 0; i < PER_THR; i++) {
		t->unknown += claim_current(t->c, NULL) == CLAIM_UNKNOWN;
		claim_budget_request(t->b);
		if (i % 2)
			t->taken += claim_budget_take(t->b);
	}
	return NULL;
}

void test_libclaim_threads(void)
{
	struct claim_budget *b = claim_budget_new(RATIO, 1e9);
	struct thr t[THREADS];
	pthread_t th[THREADS];
	int i, started = 0, taken = 0, unknown = 0;
	struct claim *c;

	setenv(CLAIM_ENV_PATH, "/sys/fs/bpf/claimd-no-such-dir/verdicts", 1);
	c = claim_open(NULL);
	if (!ASSERT_OK_PTR(c, "handle") || !ASSERT_OK_PTR(b, "budget"))
		goto out;
	for (i = 0; i < THREADS; i++) {
		t[i] = (struct thr){ .c = c, .b = b };
		if (!ASSERT_OK(pthread_create(&th[i], NULL, worker, &t[i]), "thread"))
			break;
		started++;
	}
	for (i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		taken += t[i].taken;
		unknown += t[i].unknown;
	}
	if (!ASSERT_EQ(started, THREADS, "all threads"))
		goto out;
	ASSERT_EQ(unknown, THREADS * PER_THR, "every lookup: unknown");
	/* Every token earned is either spent by a retry or still there. */
	ASSERT_FLOAT_NEAR(taken + claim_budget_tokens(b), THREADS * PER_THR * RATIO, 1e-6,
			  "earned = spent + left");
	ASSERT_GT(taken, 0, "some retries allowed");
	ASSERT_LE(taken, THREADS * PER_THR / 2, "at most one per attempt");
out:
	claim_budget_free(b);
	claim_close(c);
}
