// SPDX-License-Identifier: GPL-2.0
/*
 * The uprobe runtimes' registry (user/claimd/probes/runtime.h): every
 * runtime built in is found through its descriptor in the claimd_runtimes
 * section, with no list of them anywhere, and reports its counts under the
 * keys claimctl status and the tests read, each 0 where it does not run.
 */
#include <json-c/json.h>

#include "probes/probes.h"
#include "test_progs.h"

void test_probes(void)
{
	static const char *const keys[] = { "tls_files", "context_files", "go_files", "go_refused",
					    "go_lineage_files" };
	struct json_object *o = json_object_new_object(), *v;
	size_t i;

	probes__status(NULL, o);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!ASSERT_TRUE(json_object_object_get_ex(o, keys[i], &v), keys[i]))
			continue;
		ASSERT_EQ(json_object_get_int(v), 0, keys[i]);
	}
	json_object_put(o);
}
