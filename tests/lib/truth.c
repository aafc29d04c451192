// SPDX-License-Identifier: GPL-2.0
/* Verdicts against the truth a test knows; see truth.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "http_parse.h"
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
