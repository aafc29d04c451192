/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names of verdicts, rules and edge classes, as claimd, claimctl and the
 * tests print and read them. Built from the one table of each
 * (CLAIM_VERDICT_TABLE and CLAIM_RULE_TABLE in claim_types.h,
 * CLAIM_CLASS_TABLE in headers/verdict.h): nothing here spells a name again.
 */
#ifndef CLAIMD_VERDICT_NAMES_H
#define CLAIMD_VERDICT_NAMES_H

#include "verdict.h"

/* "none", "claimed", "unclaimed", "unknown"; "?" out of range. */
const char *verdict__name(unsigned int verdict);
/* "no-failed-call", "unknown-edge", ...; "?" out of range. */
const char *verdict__rule_name(unsigned int rule);
/* The verdict a rule gives (CLAIM_NONE out of range). */
enum claim_verdict verdict__rule_verdict(unsigned int rule);
/* Does the rule leave a failed request's verdict unknown (a reason counted)? */
int verdict__rule_is_unknown(unsigned int rule);
/* "unknown", "fail-close", "fail-open"; "unknown" out of range. */
const char *verdict__class_name(unsigned int cls);
/* The class a name gives; CLAIM_CLASS_UNKNOWN for any other string or NULL. */
enum claim_class verdict__class_of(const char *name);

#endif
