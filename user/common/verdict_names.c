// SPDX-License-Identifier: GPL-2.0
/* Names of verdicts, rules and classes from their tables; see verdict_names.h. */
#include <string.h>

#include "verdict_names.h"

#define NAME_ROW(id, num, name, ...)	    [id] = name,
#define VERDICT_ROW(id, num, name, verdict) [id] = verdict,
#define COUNT(a)			    (sizeof(a) / sizeof((a)[0]))

static const char *const verdicts[] = { CLAIM_VERDICT_TABLE(NAME_ROW) };
static const char *const rules[] = { CLAIM_RULE_TABLE(NAME_ROW) };
static const enum claim_verdict rule_verdicts[] = { CLAIM_RULE_TABLE(VERDICT_ROW) };
static const char *const classes[] = { CLAIM_CLASS_TABLE(NAME_ROW) };

_Static_assert(COUNT(rules) == CLAIM_RULE__COUNT, "a name for every rule");
_Static_assert(COUNT(classes) == CLAIM_CLASS__COUNT, "a name for every class");

const char *verdict__name(unsigned int verdict)
{
	return verdict < COUNT(verdicts) && verdicts[verdict] ? verdicts[verdict] : "?";
}

const char *verdict__rule_name(unsigned int rule)
{
	return rule < COUNT(rules) && rules[rule] ? rules[rule] : "?";
}

enum claim_verdict verdict__rule_verdict(unsigned int rule)
{
	return rule < COUNT(rule_verdicts) ? rule_verdicts[rule] : CLAIM_NONE;
}

int verdict__rule_is_unknown(unsigned int rule)
{
	return verdict__rule_verdict(rule) == CLAIM_UNKNOWN;
}

const char *verdict__class_name(unsigned int cls)
{
	return cls < COUNT(classes) && classes[cls] ? classes[cls] : classes[CLAIM_CLASS_UNKNOWN];
}

enum claim_class verdict__class_of(const char *name)
{
	unsigned int i;

	for (i = 0; name && i < COUNT(classes); i++)
		if (classes[i] && !strcmp(classes[i], name))
			return i;
	return CLAIM_CLASS_UNKNOWN;
}
