// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: an answer of Prometheus's HTTP API as claimd
 * --fleet-classes reads it (promql__result), made into the fleet's table
 * (fleet_table__new) as classes, ratios and names at once. A refused answer
 * says why; an accepted one gives only classes 1 or 2 with ratios in [0, 1]
 * (or none), and never an empty name.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet_table.h"
#include "promql.h"

static void probe(const struct fleet_table *t, struct json_object *res)
{
	size_t i;

	for (i = 0; i < json_object_array_length(res) && i < 64; i++) {
		struct json_object *s = json_object_array_get_idx(res, i);
		const char *caller = promql__label(s, "caller"),
			   *callee = promql__label(s, "callee");
		const char *addr = promql__label(s, "callee_address");
		enum claim_class cls;
		double ratio;

		if (fleet_table__class(t, caller, callee, &cls, &ratio) &&
		    ((cls != CLAIM_CLASS_FAIL_CLOSE && cls != CLAIM_CLASS_FAIL_OPEN) ||
		     (!isnan(ratio) && (ratio < 0 || ratio > 1))))
			abort();
		if (fleet_table__name(t, addr) && !*fleet_table__name(t, addr))
			abort(); /* an empty name is none */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	struct json_object *res = promql__result((const char *)data, size, err, sizeof(err));
	struct fleet_table *t;

	if (!res) {
		if (!err[0])
			abort();
		return 0;
	}
	t = fleet_table__new(res, res, res);
	if (t) {
		probe(t, res);
		if (!fleet_table__same_names(t, t))
			abort();
		fleet_table__drop_classes(t);
		if (fleet_table__edges(t))
			abort();
	}
	fleet_table__free(t);
	json_object_put(res);
	return 0;
}
