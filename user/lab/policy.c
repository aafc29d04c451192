// SPDX-License-Identifier: GPL-2.0
/*
 * The retry policies a lab node applies to each downstream call:
 *   none             one attempt;
 *   retry:R          up to R retries on any failure (the per-hop storm);
 *   budget:B         one retry per failed call while a per-downstream token
 *                    budget of ratio B allows (per-hop budgets);
 *   claim:R          claim-aware through libclaim's claim_should_retry(),
 *                    R+1 attempts, no budget;
 *   claim+budget:B   claim-aware, 2 attempts, within a ratio-B budget.
 * Every first attempt earns the budget its ratio (claim_budget_request).
 */
#include <stdio.h>
#include <string.h>

#include "lab.h"

int policy_parse(const char *s, struct policy *p)
{
	const char *arg = strchr(s, ':');
	size_t klen = arg ? (size_t)(arg - s) : strlen(s);
	long r = 1;

	memset(p, 0, sizeof(*p));
	if (arg)
		arg++;
	if (klen == 4 && !strncmp(s, "none", 4) && !arg) {
		p->kind = POL_NONE;
	} else if (klen == 5 && !strncmp(s, "retry", 5)) {
		p->kind = POL_RETRY;
		if (arg && arg_long(arg, 0, 10, &r))
			return -1;
		p->retries = r;
	} else if (klen == 5 && !strncmp(s, "claim", 5)) {
		p->kind = POL_CLAIM;
		if (arg && arg_long(arg, 0, 10, &r))
			return -1;
		p->retries = r;
	} else if ((klen == 6 && !strncmp(s, "budget", 6)) ||
		   (klen == 12 && !strncmp(s, "claim+budget", 12))) {
		p->kind = klen == 6 ? POL_BUDGET : POL_CLAIM_BUDGET;
		p->retries = 1;
		p->ratio = 0.1;
		if (arg && arg_double(arg, 0, 1, &p->ratio))
			return -1;
	} else {
		return -1;
	}
	return 0;
}

const char *policy_format(const struct policy *p, char *buf, size_t len)
{
	switch (p->kind) {
	case POL_NONE:
		snprintf(buf, len, "none");
		break;
	case POL_RETRY:
		snprintf(buf, len, "retry:%d", p->retries);
		break;
	case POL_BUDGET:
		snprintf(buf, len, "budget:%g", p->ratio);
		break;
	case POL_CLAIM:
		snprintf(buf, len, "claim:%d", p->retries);
		break;
	case POL_CLAIM_BUDGET:
		snprintf(buf, len, "claim+budget:%g", p->ratio);
		break;
	}
	return buf;
}

bool policy_uses_budget(const struct policy *p)
{
	return p->kind == POL_BUDGET || p->kind == POL_CLAIM_BUDGET;
}

bool lab_failed(int status)
{
	return outcome_of_call(status, CLAIMD_EG_DONE, OUTCOME_FAIL_STATUS_DEFAULT) ==
	       CLAIMD_OUTCOME_FAILED;
}

static enum claim_verdict header_verdict(enum http_claim c)
{
	return c == HTTP_CLAIM_CLAIMED	   ? CLAIM_CLAIMED
	       : c == HTTP_CLAIM_UNCLAIMED ? CLAIM_UNCLAIMED
					   : CLAIM_NONE;
}

/* After failed attempt number 'attempt': another one? Counts the refusals. */
static bool want_retry(const struct policy *p, struct downstream *d, int attempt,
		       const struct call_result *res)
{
	struct claim_outcome out = { .status = res->status, .header = header_verdict(res->claim) };
	struct claim_retry_opts opts = { .attempt = attempt, .budget = d->budget };
	enum claim_decision dec;

	switch (p->kind) {
	case POL_NONE:
		return false;
	case POL_RETRY:
		return attempt <= p->retries;
	case POL_BUDGET:
		if (attempt > 1)
			return false;
		if (claim_budget_take(d->budget))
			return true;
		stat_add(&d->st.budget_denied, 1);
		return false;
	case POL_CLAIM:
		opts.max_attempts = p->retries + 1;
		opts.budget = NULL;
		break;
	case POL_CLAIM_BUDGET:
		opts.max_attempts = 2;
		break;
	}
	dec = claim_should_retry(&out, &opts);
	if (dec == CLAIM_RETRY)
		return true;
	if ((unsigned int)dec < sizeof(d->st.gave_up) / sizeof(d->st.gave_up[0]))
		stat_add(&d->st.gave_up[dec], 1);
	if (dec == CLAIM_DONE_BUDGET)
		stat_add(&d->st.budget_denied, 1);
	return false;
}

void policy_call(const struct policy *p, struct downstream *d, struct hclient *hc,
		 const char *target, struct call_result *res)
{
	int attempt;

	if (policy_uses_budget(p))
		claim_budget_request(d->budget);
	for (attempt = 1;; attempt++) {
		stat_add(&d->st.calls, 1);
		if (attempt > 1)
			stat_add(&d->st.retries, 1);
		res->status = hclient_get(hc, target, &res->claim);
		if (!lab_failed(res->status))
			return;
		stat_add(&d->st.failures, 1);
		if (res->status == 0)
			stat_add(&d->st.transport, 1);
		else
			stat_add(&d->st.got[res->claim <= HTTP_CLAIM_UNCLAIMED ? res->claim : 0],
				 1);
		if (!want_retry(p, d, attempt, res))
			return;
	}
}
