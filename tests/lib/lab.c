// SPDX-License-Identifier: GPL-2.0
/* claimlab runs with a claimd of the test's own; see lab.h. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "test_progs.h"
#include "truth.h"

bool lab_claimd_up(struct claimd_h *h, struct trace_cap *t, const char *const extra[])
{
	memset(h, 0, sizeof(*h));
	memset(t, 0, sizeof(*t));
	if (!test__need_root())
		return false;
	return ASSERT_OK(claimd_start(h, extra), "claimd start") &&
	       ASSERT_OK(trace_start(t, h), "trace");
}

void lab_claimd_down(struct claimd_h *h, struct trace_cap *t)
{
	char path[H_PATH];

	if (test__failed_now() && h->pid)
		claimd_print_log(h);
	trace_stop(t);
	claimd_stop(h);
	if (h->pin[0]) {
		snprintf(path, sizeof(path), "%s/verdicts", h->pin);
		unlink(path);
		rmdir(h->pin);
	}
	tmpdir_remove(h->dir);
}

const char *lab_prefix(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s.%d.", name, (int)getpid());
	return buf;
}

struct json_object *lab_node(struct json_object *rep, const char *name)
{
	struct json_object *nodes = j_get(rep, "nodes");
	size_t i;

	for (i = 0; i < json_object_array_length(nodes); i++) {
		struct json_object *o = json_object_array_get_idx(nodes, i);

		if (!strcmp(j_str(o, "name"), name))
			return o;
	}
	return NULL;
}

void lab_verdicts(const struct trace_cap *t, struct json_object *rep, const char *prefix,
		  const char *what)
{
	static const char *const nodes[4] = { "A", "B", "C", "D" };
	char names[4][64];
	const char *const services[4] = { names[0], names[1], names[2], names[3] };
	struct truth_svc truth[4];
	struct truth_tally tally = { 0 };
	int i, failures = 0;

	for (i = 0; i < 4; i++) {
		snprintf(names[i], sizeof(names[i]), "%s%s", prefix, nodes[i]);
		failures += j_int(lab_node(rep, nodes[i]), "failed_answers");
	}
	truth__chain(truth, 4, &(struct truth_svc){ 0 }, NULL, services);
	truth__tally_trace(&tally, t, 0, truth, 4, failures);
	truth__expect(&tally, what, failures, 0);
}
