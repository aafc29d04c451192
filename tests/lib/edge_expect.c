// SPDX-License-Identifier: GPL-2.0
/* An edge against what the test knows; see edge_expect.h. */
#include <stdio.h>
#include <string.h>

#include "edge_expect.h"
#include "test_progs.h"

static bool edge_done(struct json_object *e, void *ctx)
{
	const struct edge_want *w = ctx;

	return j_int(e, "calls") >= w->calls && j_int(e, "callee_failures") >= w->failures;
}

bool edge_expect(const struct claimd_h *h, const char *caller, const char *callee,
		 const struct edge_want *w, const char *what)
{
	struct json_object *e = claimd_settled_edge(h, caller, callee, edge_done, (void *)w, 15000);
	char msg[256];
	bool ok;

	snprintf(msg, sizeof(msg), "%s: edge %s -> %s", what, caller, callee);
	if (!ASSERT_OK_PTR(e, msg))
		return false;
	printf("%s: %s -> %s: %lld calls, %lld callee failures, %lld both failed, class %s\n", what,
	       caller, callee, j_int(e, "calls"), j_int(e, "callee_failures"),
	       j_int(e, "both_failed"), j_str(e, "class"));
	ok = ASSERT_EQ(j_int(e, "calls"), w->calls, msg);
	ok &= ASSERT_EQ(j_int(e, "callee_failures"), w->failures, msg);
	ok &= ASSERT_EQ(j_int(e, "both_failed"), w->both, msg);
	if (w->cls)
		ok &= ASSERT_STREQ(j_str(e, "class"), w->cls, msg);
	if (j_int(e, "calls") != w->calls) {
		const char *args[] = { "edges", NULL };
		struct json_object *all = claimctl_json(h, args);

		printf("every edge claimd has:\n%s\n", json_object_to_json_string(all));
		json_object_put(all);
	}
	json_object_put(e);
	return ok;
}
