// SPDX-License-Identifier: GPL-2.0
/*
 * libclaim's tables as lines of text, for packages that do not call
 * libclaim and must agree with it (go/claim's tests read them):
 *
 *   verdict <number> <name>
 *   rule <number> <name>
 *   decision <status> <header> <attempt> <max_attempts> <fail_status>
 *            <budget: none|empty|full> <deadline: none|passed|far> <decision>
 *   parse <value, hex> <verdict number>
 *   goroutine <tgid> <g> <slot>  (claim_goroutine_index)
 *   procunsure <proc_word> <pid> <outside_seen> <0|1>  (claim_proc_unsure)
 *
 * Every combination of the inputs below, decided by claim_should_retry.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "claim.h"
#include "verdict.h"

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* One decision: the inputs picked by index. */
static void decide(int status, enum claim_verdict header, int attempt, int max, int fail,
		   size_t budget, size_t deadline)
{
	static const char *const budgets[] = { "none", "empty", "full" }, *const deadlines[] = {
		"none", "passed", "far"
	};
	struct claim_budget *b = budget ? claim_budget_new(budget == 2 ? 1 : 0.1, 1) : NULL;
	struct claim_outcome out = { status, header };
	struct claim_retry_opts o = {
		.attempt = attempt, .max_attempts = max, .fail_status = fail, .budget = b
	};

	if (budget == 2)
		claim_budget_request(b); /* one whole token */
	if (deadline == 1)
		o.deadline_ns = 1;
	else if (deadline == 2)
		o.deadline_ns = now_ns() + 3600ull * 1000000000ull;
	printf("decision %d %d %d %d %d %s %s %s\n", status, header, attempt, max, fail,
	       budgets[budget], deadlines[deadline],
	       claim_decision_name(claim_should_retry(&out, &o)));
	claim_budget_free(b);
}

/* Every combination, counted through in mixed radix. */
static void decisions(void)
{
	static const int statuses[] = { 0, 200, 404, 499, 500, 502, 503, 599 };
	static const enum claim_verdict headers[] = { CLAIM_NONE, CLAIM_CLAIMED, CLAIM_UNCLAIMED,
						      CLAIM_UNKNOWN };
	static const int attempts[] = { 0, 1, 2, 3, 4 }, maxes[] = { 0, 1, 2, 3, 4 },
			 fails[] = { 0, 404, 500 };
	size_t total = N(statuses) * N(headers) * N(attempts) * N(maxes) * N(fails) * 3 * 3;

	for (size_t i = 0; i < total; i++) {
		size_t k = i;
		size_t deadline = k % 3, budget = (k /= 3) % 3, f = (k /= 3) % N(fails),
		       m = (k /= N(fails)) % N(maxes), a = (k /= N(maxes)) % N(attempts),
		       h = (k /= N(attempts)) % N(headers), s = (k /= N(headers)) % N(statuses);

		decide(statuses[s], headers[h], attempts[a], maxes[m], fails[f], budget, deadline);
	}
}

static void parses(void)
{
	static const char *const values[] = { "claimed",      "unclaimed",  "Claimed",
					      " UNCLAIMED\t", "unknown",    "",
					      "claimedx",     "un claimed", "none" };
	size_t i;

	for (i = 0; i < N(values); i++) {
		const char *v = values[i];

		printf("parse ");
		if (!*v)
			printf("-");
		for (; *v; v++)
			printf("%02x", (unsigned char)*v);
		printf(" %d\n", claim_parse_header(values[i], strlen(values[i])));
	}
}

/* Goroutines' slots: runtime.g addresses as Go's heap hands them out, and edges. */
static void goroutines(void)
{
	static const unsigned long long gs[] = { 0xc000006000ull,	0xc0000071e0ull,
						 0xc000102b60ull,	0x7f00deadbee8ull,
						 0xfffffffffffffff8ull, 8 };
	static const unsigned int tgids[] = { 1, 4242, 4194304 };

	for (size_t i = 0; i < N(gs); i++)
		for (size_t j = 0; j < N(tgids); j++)
			printf("goroutine %u %llu %u\n", tgids[j], gs[i],
			       claim_goroutine_index(tgids[j], gs[i]));
}

/* claim_proc_unsure over words of this pid, another's, a collided one, none. */
static void proc_unsure(void)
{
	static const unsigned int pids[] = { 4242, 1 }, seens[] = { 0, 3, 4 },
				  counts[] = { 0, 3, 4 };
	static const unsigned int others[] = { 0, 4242, 777, CLAIM_PROC_COLLIDED };

	for (size_t o = 0; o < N(others); o++)
		for (size_t c = 0; c < N(counts); c++)
			for (size_t p = 0; p < N(pids); p++)
				for (size_t k = 0; k < N(seens); k++) {
					unsigned long long w =
						(unsigned long long)others[o] << 32 | counts[c];

					printf("procunsure %llu %u %u %d\n", w, pids[p], seens[k],
					       claim_proc_unsure(w, pids[p], seens[k]));
				}
}

int main(void)
{
	int i;

	for (i = CLAIM_NONE; i <= CLAIM_UNKNOWN; i++)
		printf("verdict %d %s\n", i, claim_verdict_name(i));
	for (i = 0; i < CLAIM_RULE__COUNT; i++)
		printf("rule %d %s\n", i, claim_rule_name(i));
	decisions();
	parses();
	goroutines();
	proc_unsure();
	return 0;
}
